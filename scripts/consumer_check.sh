#!/usr/bin/env bash
# tcemu as another project uses it (tests/consumer/): from an install, and through add_subdirectory.
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: scripts/consumer_check.sh [--build DIR] [--work DIR] [--cuda-arch ARCHS] [--skip-subdirectory]

Checks that another project can use tcemu, with the consumer project tests/consumer/:

  1. installs the existing build tree DIR: cmake --install DIR --prefix WORK/prefix, and runs
     the installed command WORK/prefix/bin/tcemu (tcemu presets)
  2. configures tests/consumer/ against it (find_package(tcemu), CMAKE_PREFIX_PATH=WORK/prefix)
     in WORK/find-package, builds it and runs its ctest: the emulated GEMM from C++, the
     kernel-test check on host views (tcemu::cases) and, where CUDA is found and the install has
     tcemu::gpu, its own mma.sync kernel checked through tcemu/gpu/check_gemm.hpp (reported as
     skipped where no GPU is present)
  3. configures it again with -DTCEMU_SOURCE_DIR=<this tree> (add_subdirectory, TCEMU_GPU=OFF) in
     WORK/add-subdirectory, builds it (only the tcemu libraries it links), runs its ctest, and
     fails if any tcemu test was configured or any tcemu library besides tcemu::emulator and
     tcemu::cases built

  --build DIR          the tcemu build tree to install (default build)
  --work DIR           where the install and the consumer's builds go (default build-consumer)
  --cuda-arch ARCHS    CMAKE_CUDA_ARCHITECTURES of the consumer (default its own: 80)
  --skip-subdirectory  steps 1 and 2 only
  -h, --help           this text

Environment: JOBS (build jobs, default 2). The compiler launchers (ccache) are taken from
CMAKE_CXX_COMPILER_LAUNCHER and CMAKE_CUDA_COMPILER_LAUNCHER in the environment, as CMake does.
USAGE
}

root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
work=$root/build-consumer
cuda_arch=()
subdirectory=1
while [[ $# -gt 0 ]]; do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --build) build=$2; shift ;;
    --work) work=$2; shift ;;
    --cuda-arch) cuda_arch=("-DCMAKE_CUDA_ARCHITECTURES=$2"); shift ;;
    --skip-subdirectory) subdirectory=0 ;;
    *) echo "consumer_check.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$work"
work=$(cd "$work" && pwd)
jobs=${JOBS:-2}

echo "== install $build into $work/prefix"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
echo "== the installed command: $work/prefix/bin/tcemu"
"$work/prefix/bin/tcemu" presets --arch sm90 >/dev/null

echo "== tests/consumer through find_package(tcemu)"
cmake -S "$root/tests/consumer" -B "$work/find-package" -DCMAKE_PREFIX_PATH="$work/prefix" \
  ${cuda_arch[@]+"${cuda_arch[@]}"} >/dev/null
cmake --build "$work/find-package" -j "$jobs"
ctest --test-dir "$work/find-package" --output-on-failure --no-tests=error

[[ $subdirectory == 1 ]] || exit 0
echo "== tests/consumer through add_subdirectory(tcemu)"
sub=$work/add-subdirectory
cmake -S "$root/tests/consumer" -B "$sub" -DTCEMU_SOURCE_DIR="$root" -DTCEMU_GPU=OFF >/dev/null
cmake --build "$sub" -j "$jobs"
ctest --test-dir "$sub" --output-on-failure --no-tests=error
# Every test is the consumer's own, and of tcemu's libraries only the one it links was built.
if ctest --test-dir "$sub" -N | grep 'Test *#' | grep -v ' Consumer'; then
  echo "consumer_check.sh: tcemu's own tests were configured under add_subdirectory" >&2
  exit 1
fi
built=$(find "$sub/tcemu" -name 'libtcemu_*' -printf '%f\n' | sed 's/\..*//' | sort | tr '\n' ' ')
echo "tcemu libraries built under add_subdirectory: $built"
if [[ $built != "libtcemu_cases libtcemu_emulator " ]]; then
  echo "consumer_check.sh: expected only tcemu::cases and tcemu::emulator to be built" >&2
  exit 1
fi
