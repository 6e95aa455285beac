#!/usr/bin/env bash
# The speed of the error-corrected SGEMM schemes on a GPU (issue 5): builds gpu_test and
# markidis_gpu_benchmark, runs the Markidis GPU tests (bits against the emulator), then the
# benchmark at n = N (default 8192) for halfhalf and tf32tf32 on the fastest engine with the
# presets' take-out intervals and with --takeout 2 and 4 (tf32tf32 every 16 and 32 values of k).
# Results go to $OUT (small files only):
#   summary.txt          test verdicts, the three tables and their goal lines
#   speed-*.csv          the benchmark's rows, one file per interval
#   logs.tar.xz          configure/build logs, gpu_test output, full benchmark output
#
#   PHASE=build OUT=... bash scripts/markidis_speed_run.sh   # configure and build
#   PHASE=run   OUT=... bash scripts/markidis_speed_run.sh   # tests and benchmark (about 2 min)
#   OUT=... bash scripts/markidis_speed_run.sh               # both
# The build folder is $B (default /tmp/bf); an existing build there is reused (only what changed
# is rebuilt). CMAKE_PREFIX_PATH for GoogleTest etc.: $DEPS/usr (default .deps/root, where
# present).
set -u
: "${OUT:?set OUT to the output folder}"
source "$(dirname "$0")/device_env.sh"
B=${B:-/tmp/bf}
PHASE=${PHASE:-all}
N=${N:-8192}
mkdir -p "$OUT/logs"

if [ "$PHASE" = build ] || [ "$PHASE" = all ]; then
  if [ ! -f "$B/build.ninja" ]; then
    cmake -S . -B "$B" -G Ninja "${PREFIX[@]}" -DTCEMU_WERROR=ON \
      -DCMAKE_CUDA_ARCHITECTURES=90a-real > "$OUT/logs/configure.log" 2>&1 ||
      { tail -40 "$OUT/logs/configure.log"; exit 1; }
  fi
  cmake --build "$B" -j16 --target gpu_test markidis_gpu_benchmark > "$OUT/logs/build.log" 2>&1 ||
    { grep -E 'error' -A5 "$OUT/logs/build.log" | head -60; exit 1; }
  echo "BUILD OK" | tee -a "$OUT/summary.txt"
fi

if [ "$PHASE" = run ] || [ "$PHASE" = all ]; then
  {
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    timeout 120 "$B/bin/gpu_test" --gtest_filter='*Markidis*:*Fp32*:*fp32*' \
      > "$OUT/logs/gpu_test.log" 2>&1
    echo "gpu_test rc=$?"
    grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) |differ|Failure|Expected|Which is|error" \
      "$OUT/logs/gpu_test.log" | head -60
    for takeout in preset 2 4; do
      option=()
      [ "$takeout" = preset ] || option=(--takeout "$takeout")
      timeout 150 "$B/bin/markidis_gpu_benchmark" --n "$N" --schemes halfhalf,tf32tf32 \
        --engines fastest "${option[@]}" --csv "$OUT/speed-$takeout.csv" \
        > "$OUT/logs/markidis_gpu_benchmark-$takeout.log" 2>&1
      echo "markidis_gpu_benchmark (take-out: $takeout) rc=$?"
      sed -n '/^| method/,$p' "$OUT/logs/markidis_gpu_benchmark-$takeout.log"
    done
  } 2>&1 | tee -a "$OUT/summary.txt"
fi
tar -C "$OUT" -cJf "$OUT/logs.tar.xz" logs && rm -rf "$OUT/logs"
