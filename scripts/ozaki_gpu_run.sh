#!/usr/bin/env bash
# One device session for the Ozaki scheme on the GPU (issue 4): build, the GPU tests, the speed
# benchmark and the Table 1 experiment. Run from the repository root on the GPU machine; logs and
# results go under $OUT. Dependencies (gtest, benchmark, mpfr, eigen) come from
# CMAKE_PREFIX_PATH=.deps/root/usr when that exists (the lent machines have no internet).
#
# Each part can be skipped, so that the whole fits several calls of at most 10 minutes; the build
# directory (build-device/, ignored by git) is kept between calls:
#   STEPS="build test bench table ctest"   (default: all but ctest)
#   TABLE_N=10240  TABLE_PHIS=0.1,1,2
#   BENCH_ARGS="--runs 7 --batching 256,512,1024,2048,4096,8192 8192 10240"
set -u
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT/logs"
source "$(dirname "$0")/device_env.sh"
B=$PWD/build-device
STEPS=${STEPS:-build test bench table}
has() { [[ " $STEPS " == *" $1 "* ]]; }

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$OUT/logs/device.txt" 2>&1
cat "$OUT/logs/device.txt"

if has build; then
  cmake -S . -B "$B" -G Ninja "${PREFIX[@]}" -DTCEMU_WERROR=ON \
    -DCMAKE_CUDA_ARCHITECTURES="${ARCHS:-90a-real}" > "$OUT/logs/configure.log" 2>&1 ||
    { tail -40 "$OUT/logs/configure.log"; exit 1; }
  cmake --build "$B" -j16 > "$OUT/logs/build.log" 2>&1 ||
    { grep -E 'error' -A5 "$OUT/logs/build.log" | head -60; exit 1; }
  echo "BUILD OK"
fi

if has test; then
  # The Ozaki steps and whole runs first (the reason for this session), then the rest.
  timeout 400 "$B/bin/gpu_test" --gtest_filter='OzakiStepsOnGpu.*:OzakiOnGpu.*' \
    > "$OUT/logs/gpu_test_ozaki.log" 2>&1
  echo "gpu_test (Ozaki) rc=$?"
  grep -E "differ|FAILED|PASSED|SKIPPED|Failure|Expected|Which is|error|\[  " \
    "$OUT/logs/gpu_test_ozaki.log" | head -80
  timeout 300 "$B/bin/gpu_test" --gtest_filter='-OzakiStepsOnGpu.*:OzakiOnGpu.*' \
    > "$OUT/logs/gpu_test_rest.log" 2>&1
  echo "gpu_test (the rest) rc=$?"
  grep -E "FAILED|PASSED|SKIPPED" "$OUT/logs/gpu_test_rest.log" | head -20
fi

if has bench; then
  timeout 500 "$B/bin/ozaki_gpu_benchmark" \
    ${BENCH_ARGS:---runs 7 --batching 256,512,1024,2048,4096,8192 8192 10240} \
    > "$OUT/logs/ozaki_gpu_benchmark.txt" 2> "$OUT/logs/ozaki_gpu_benchmark.progress"
  echo "ozaki_gpu_benchmark rc=$?"
  cat "$OUT/logs/ozaki_gpu_benchmark.txt"
  tail -5 "$OUT/logs/ozaki_gpu_benchmark.progress"
fi

if has table; then
  timeout 560 "$B/bin/ozaki_gpu_table" --out "$OUT/ozaki-gpu.csv" --n "${TABLE_N:-10240}" \
    --phis "${TABLE_PHIS:-0.1,1,2}" 2> "$OUT/logs/ozaki_gpu_table.progress"
  echo "ozaki_gpu_table rc=$?"
  cat "$OUT/logs/ozaki_gpu_table.progress" | grep -v '\.\.\.$' | tail -60
  if /usr/bin/python3 -c 'import matplotlib' 2> /dev/null; then
    /usr/bin/python3 experiments/plot_ozaki_gpu.py "$OUT/ozaki-gpu.csv" "$OUT" &&
      echo "plots in $OUT"
  fi
fi

if has ctest; then
  ctest --test-dir "$B" -LE long -j16 --output-on-failure > "$OUT/logs/ctest.log" 2>&1
  echo "ctest rc=$?"
  tail -6 "$OUT/logs/ctest.log"
fi
