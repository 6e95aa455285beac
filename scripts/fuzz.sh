#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ into build-fuzz/ (clang, TCEMU_FUZZ=ON) and runs each.
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: scripts/fuzz.sh [--short | --long] [--time SECONDS] [--runs N] [--build-only] [TARGET...]

Builds the fuzz targets (fuzz/README.md) into build-fuzz/ with clang and
-fsanitize=fuzzer,address,undefined, then runs each TARGET (default: all) from its seed corpus
fuzz/corpus/TARGET, its working corpus in build-fuzz/corpus/TARGET and any crash input in
build-fuzz/findings/. Exits non-zero on the first target with a finding.

  --short        30 seconds per target (the default; for CI)
  --long         10^7 executions per target, no time limit (the documented long run)
  --time S       S seconds per target
  --runs N       N executions per target (with --time: whichever comes first)
  --build-only   build, do not run
  -h, --help     this text

Targets: fuzz_case_file fuzz_matrix_file fuzz_npy_dtype fuzz_line_reader fuzz_cli_options
         fuzz_gemm_differential fuzz_preload_env fuzz_block_scaled
Environment: CXX (default clang++), BUILD_DIR (default build-fuzz), JOBS (build jobs, default 2).
USAGE
}

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-fuzz}
all=(fuzz_case_file fuzz_matrix_file fuzz_npy_dtype fuzz_line_reader fuzz_cli_options
     fuzz_gemm_differential fuzz_preload_env fuzz_block_scaled)
seconds=30
runs=-1
build_only=0
targets=()
while [[ $# -gt 0 ]]; do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --short) seconds=30; runs=-1 ;;
    --long) seconds=0; runs=10000000 ;;
    --time) seconds=$2; shift ;;
    --runs) runs=$2; shift ;;
    --build-only) build_only=1 ;;
    fuzz_*) targets+=("$1") ;;
    *) echo "fuzz.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
  esac
  shift
done
[[ ${#targets[@]} -gt 0 ]] || targets=("${all[@]}")

CXX=${CXX:-clang++} cmake -S "$root" -B "$build" -DTCEMU_FUZZ=ON -DTCEMU_GPU=OFF \
  -DTCEMU_BENCHMARKS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "${JOBS:-2}" --target "${targets[@]}"
[[ $build_only == 1 ]] && exit 0

mkdir -p "$build/findings"
for t in "${targets[@]}"; do
  mkdir -p "$build/corpus/$t"
  echo "== $t (max_total_time=$seconds runs=$runs)"
  start=$(date +%s)
  "$build/bin/$t" -max_total_time="$seconds" -runs="$runs" -max_len=1024 -print_final_stats=1 \
    -artifact_prefix="$build/findings/$t-" "$build/corpus/$t" "$root/fuzz/corpus/$t" \
    2>"$build/$t.log" || { tail -n 40 "$build/$t.log"; echo "fuzz.sh: $t found something" \
    "(input in $build/findings/)" >&2; exit 1; }
  grep -E '^stat::number_of_executed_units' "$build/$t.log" | sed "s/^/$t: /"
  echo "$t: $(( $(date +%s) - start )) s, no finding"
done
