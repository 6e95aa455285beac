#!/usr/bin/env bash
# The GPU runs of tcemu on a lent device: one build folder, one build, then the steps asked for.
# Run from the repository root on the GPU machine. What each step prints also goes to
# $OUT/summary.txt; the full logs go to $OUT/logs, packed into $OUT/logs.tar.xz at the end.
#
#   STEPS="build test" OUT=... bash scripts/device_run.sh      (the default STEPS)
#   bash scripts/device_run.sh --help                          (this text)
#
# STEPS, any of (run in this order, whatever order they are named in):
#   build              configure and build in $B (default build-device/, kept between calls, so a
#                      later call rebuilds only what changed); the whole tree unless TARGETS names
#                      some. Configure/build failures print the log's end and stop the script.
#   test               gpu_test (the whole program unless TEST_FILTER is a gtest filter): each
#                      test's verdict line, the count, and every difference report
#   consumer           scripts/consumer_check.sh --build $B --cuda-arch $ARCHS --skip-subdirectory:
#                      $B installed, tests/consumer built against it and its ctest run (needs
#                      every library built), then its kernel test's reports
#   ozaki-bench        ozaki_gpu_benchmark $OZAKI_BENCH_ARGS (DP against its GEMM bound, CR over
#                      DP, batched products)
#   ozaki-table        ozaki_gpu_table --out $OUT/ozaki-gpu.csv --n $TABLE_N --phis $TABLE_PHIS
#                      (Table 1 beside cuBLAS's FP64 emulation), plotted where matplotlib is found
#   markidis-bench     markidis_gpu_benchmark --n $N --csv $OUT/markidis-gpu-benchmark.csv
#   gemm-bench         gpu_gemm_benchmark $N (our mma.sync and wgmma GEMMs against cublasGemmEx)
#   markidis-accuracy  markidis_accuracy --backend B --archs sm90 --size 256 --dists type1,type4
#                      --k 16,64,256,1024,4096,16384 for B in $ACCURACY_BACKENDS, CSV
#                      $OUT/markidis-accuracy-B.csv (accuracy vs k with cublasSgemm's column)
#   speed              markidis_gpu_benchmark --n $N --schemes halfhalf,tf32tf32 --engines fastest
#                      [--takeout I] for I in $TAKEOUTS ("preset": the presets' intervals), CSV
#                      $OUT/speed-I.csv
#   sanitize           compute-sanitizer over gpu_test --gtest_filter=$SANITIZE_FILTER with each
#                      tool of $SANITIZE_TOOLS, the tools in parallel, each for at most
#                      $SANITIZE_TIMEOUT s: every kernel of the tests (our mma.sync and wgmma
#                      GEMMs, the step kernels, the probe runners, cuBLAS's), the GEMM tests on
#                      reduced sizes (TCEMU_GPU_TEST_REDUCED=1, tests/gpu/gpu_backend_test.cpp);
#                      each tool's error summary and first reports
#   ctest              ctest -LE long on the whole build (needs the whole tree built)
#   python             the Python package built for $ARCHS into $B-python (pip, no build
#                      isolation: the machine's scikit-build-core and nanobind) and its pytest
#                      suite on the GPU, less the notebooks (nbclient is not on the lent machines),
#                      or pytest's $PYTEST_ARGS (test files, -k ...)
#
# Knobs (environment) and their defaults:
#   OUT=$PWD/out  B=$PWD/build-device  ARCHS=90a-real  TARGETS=(all)  JOBS=$(nproc)
#   TEST_FILTER='*'  TEST_TIMEOUT=560  N=8192  TABLE_N=10240  TABLE_PHIS=0.1,1,2
#   OZAKI_BENCH_ARGS="--runs 7 --batching 256,512,1024,2048,4096,8192 8192 10240" (or BENCH_ARGS)
#   ACCURACY_BACKENDS="gpu gpu-cublas"  TAKEOUTS="preset 2 4"  DEPS=$PWD/.deps/root
#   SANITIZE_TOOLS="memcheck racecheck initcheck synccheck"  SANITIZE_FILTER='*'
#   SANITIZE_TIMEOUT=540
#
# One device call runs for at most 10 minutes and brings back at most 8 files from $OUT: split
# the steps over several calls, e.g. STEPS=build, then STEPS=test, then STEPS="ozaki-bench". What
# the former scripts ran, as STEPS:
#   scripts/ozaki_gpu_run.sh         "build test ozaki-bench ozaki-table" (its two gpu_test parts:
#                                    TEST_FILTER='OzakiStepsOnGpu.*:OzakiOnGpu.*', then
#                                    TEST_FILTER='-OzakiStepsOnGpu.*:OzakiOnGpu.*')
#   scripts/markidis_gpu_run.sh      "build test markidis-bench gemm-bench markidis-accuracy" (it
#                                    built TARGETS="gpu_test markidis_gpu_benchmark
#                                    gpu_gemm_benchmark markidis_accuracy"; PHASE=run: the same
#                                    without build)
#   scripts/markidis_speed_run.sh    "build test speed" with TEST_FILTER='*Markidis*:*Fp32*:*fp32*'
#                                    (it built TARGETS="gpu_test markidis_gpu_benchmark")
#
# Dependencies: the lent machines have no internet, so GoogleTest, Google Benchmark, MPFR and
# Eigen come from Debian packages extracted under $DEPS/usr (`dpkg -x PACKAGE.deb $DEPS` for each
# .deb that `apt-get download` fetched here, or left as .deb files in the folder above $DEPS,
# .deps/, which this script extracts on its first call). Where $DEPS/usr exists its libraries go
# on LD_LIBRARY_PATH and CMake searches it first; elsewhere CMake finds the system's.
# A machine without a GPU (or without nvidia-smi) builds as well; its GPU tests report skipped.
set -u

if [ "${1:-}" = --help ] || [ "${1:-}" = -h ]; then
  sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
fi
if [ $# -gt 0 ]; then
  echo "device_run.sh: no arguments but --help; the knobs are environment variables" >&2
  exit 2
fi

OUT=${OUT:-$PWD/out}
B=${B:-$PWD/build-device}
ARCHS=${ARCHS:-90a-real}
TARGETS=${TARGETS:-}
JOBS=${JOBS:-$(nproc)}
STEPS=${STEPS:-build test}
TEST_FILTER=${TEST_FILTER:-*}
TEST_TIMEOUT=${TEST_TIMEOUT:-560}
N=${N:-8192}
TABLE_N=${TABLE_N:-10240}
TABLE_PHIS=${TABLE_PHIS:-0.1,1,2}
OZAKI_BENCH_ARGS=${OZAKI_BENCH_ARGS:-${BENCH_ARGS:-}}
OZAKI_BENCH_ARGS=${OZAKI_BENCH_ARGS:---runs 7 --batching 256,512,1024,2048,4096,8192 8192 10240}
ACCURACY_BACKENDS=${ACCURACY_BACKENDS:-gpu gpu-cublas}
TAKEOUTS=${TAKEOUTS:-preset 2 4}
DEPS=${DEPS:-$PWD/.deps/root}
SANITIZE_TOOLS=${SANITIZE_TOOLS:-memcheck racecheck initcheck synccheck}
SANITIZE_FILTER=${SANITIZE_FILTER:-*}
SANITIZE_TIMEOUT=${SANITIZE_TIMEOUT:-540}

known="build test consumer ozaki-bench ozaki-table markidis-bench gemm-bench markidis-accuracy"
known+=" speed sanitize ctest python"
for step in $STEPS; do
  if [[ " $known " != *" $step "* ]]; then
    echo "device_run.sh: unknown step '$step' (steps: $known)" >&2
    exit 2
  fi
done
has() { [[ " $STEPS " == *" $1 "* ]]; }

LOGS=$OUT/logs
mkdir -p "$LOGS"

main() {
  # The dependencies extracted from Debian packages (see above).
  deps_debs=("$(dirname "$DEPS")"/*.deb)
  if [ ! -d "$DEPS/usr" ] && [ -e "${deps_debs[0]}" ]; then
    for deb in "${deps_debs[@]}"; do dpkg -x "$deb" "$DEPS" || exit 1; done
  fi
  PREFIX=()
  if [ -d "$DEPS/usr" ]; then
    export LD_LIBRARY_PATH=$DEPS/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
    PREFIX=(-DCMAKE_PREFIX_PATH="$DEPS/usr")
  fi

  echo "device_run.sh: STEPS=\"$STEPS\" on $(git rev-parse --short HEAD 2> /dev/null || echo '?')"
  if command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  else
    echo "no nvidia-smi: no GPU here, the GPU programs will report it"
  fi

  if has build; then
    cmake -S . -B "$B" -G Ninja "${PREFIX[@]}" -DTCEMU_WERROR=ON \
      -DCMAKE_CUDA_ARCHITECTURES="$ARCHS" > "$LOGS/configure.log" 2>&1 ||
      { tail -40 "$LOGS/configure.log"; exit 1; }
    target_args=()
    for target in $TARGETS; do target_args+=(--target "$target"); done
    cmake --build "$B" -j"$JOBS" "${target_args[@]}" > "$LOGS/build.log" 2>&1 ||
      { grep -E 'error' -A5 "$LOGS/build.log" | head -60; exit 1; }
    echo "BUILD OK (${TARGETS:-all targets}, CUDA architectures $ARCHS)"
  fi

  if has test; then
    timeout "$TEST_TIMEOUT" "$B/bin/gpu_test" --gtest_filter="$TEST_FILTER" \
      > "$LOGS/gpu_test.log" 2>&1
    echo "gpu_test --gtest_filter='$TEST_FILTER' rc=$?"
    # Each test's verdict, the counts, and the lines of every difference report.
    verdicts='^\[ +(OK|FAILED|SKIPPED|PASSED) |^\[=+\] .* ran'
    grep -E "$verdicts|differ|Failure|Expected|Which is|composed|error" "$LOGS/gpu_test.log" |
      head -120
  fi

  if has consumer; then
    CMAKE_GENERATOR=Ninja CMAKE_PREFIX_PATH=$DEPS/usr bash scripts/consumer_check.sh --build "$B" \
      --cuda-arch "$ARCHS" --skip-subdirectory > "$LOGS/consumer.log" 2>&1
    echo "consumer_check.sh rc=$?"
    grep -E 'Test +#|tests passed|Error|error' "$LOGS/consumer.log" | head -40
    build-consumer/find-package/consumer_mma_kernel_test 2>&1 | head -40
  fi

  if has sanitize; then
    sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    for tool in $SANITIZE_TOOLS; do
      TCEMU_GPU_TEST_REDUCED=1 timeout "$SANITIZE_TIMEOUT" "$sanitizer" --tool "$tool" \
        --error-exitcode 3 \
        --print-limit 20 "$B/bin/gpu_test" --gtest_filter="$SANITIZE_FILTER" \
        > "$LOGS/sanitize-$tool.log" 2>&1 &
    done
    wait
    for tool in $SANITIZE_TOOLS; do
      echo "compute-sanitizer --tool $tool gpu_test --gtest_filter='$SANITIZE_FILTER':"
      grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[=+\] .* ran|^\[  PASSED|FAILED' \
        "$LOGS/sanitize-$tool.log" | head -8
      grep -E '^========= (Invalid|Race|Uninitialized|Barrier|Program hit|Error)' -A4 \
        "$LOGS/sanitize-$tool.log" | head -20
      tail -2 "$LOGS/sanitize-$tool.log"
    done
  fi

  if has ozaki-bench; then
    # shellcheck disable=SC2086  # OZAKI_BENCH_ARGS is a list of arguments
    timeout 500 "$B/bin/ozaki_gpu_benchmark" $OZAKI_BENCH_ARGS \
      > "$LOGS/ozaki_gpu_benchmark.txt" 2> "$LOGS/ozaki_gpu_benchmark.progress"
    echo "ozaki_gpu_benchmark $OZAKI_BENCH_ARGS rc=$?"
    cat "$LOGS/ozaki_gpu_benchmark.txt"
    tail -5 "$LOGS/ozaki_gpu_benchmark.progress"
  fi

  if has ozaki-table; then
    timeout 560 "$B/bin/ozaki_gpu_table" --out "$OUT/ozaki-gpu.csv" --n "$TABLE_N" \
      --phis "$TABLE_PHIS" 2> "$LOGS/ozaki_gpu_table.progress"
    echo "ozaki_gpu_table --n $TABLE_N --phis $TABLE_PHIS rc=$?"
    grep -v '\.\.\.$' "$LOGS/ozaki_gpu_table.progress" | tail -60
    if /usr/bin/python3 -c 'import matplotlib' 2> /dev/null; then
      /usr/bin/python3 experiments/plot_ozaki_gpu.py "$OUT/ozaki-gpu.csv" "$OUT" &&
        echo "plots in $OUT"
    fi
  fi

  if has markidis-bench; then
    timeout 500 "$B/bin/markidis_gpu_benchmark" --n "$N" --csv "$OUT/markidis-gpu-benchmark.csv" \
      > "$LOGS/markidis_gpu_benchmark.log" 2>&1
    echo "markidis_gpu_benchmark --n $N rc=$?"
    sed -n '/^| method/,$p' "$LOGS/markidis_gpu_benchmark.log"
  fi

  if has gemm-bench; then
    timeout 200 "$B/bin/gpu_gemm_benchmark" "$N" > "$LOGS/gpu_gemm_benchmark.log" 2>&1
    echo "gpu_gemm_benchmark $N rc=$?"
    sed -n '/^| GEMM/,$p' "$LOGS/gpu_gemm_benchmark.log"
  fi

  if has markidis-accuracy; then
    for backend in $ACCURACY_BACKENDS; do
      timeout 300 "$B/bin/markidis_accuracy" --backend "$backend" --archs sm90 --size 256 \
        --dists type1,type4 --k 16,64,256,1024,4096,16384 --out "$OUT" \
        --file "markidis-accuracy-$backend.csv" > "$LOGS/markidis_accuracy_$backend.log" 2>&1
      echo "markidis_accuracy --backend $backend rc=$?"
      tail -2 "$LOGS/markidis_accuracy_$backend.log"
    done
  fi

  if has speed; then
    for takeout in $TAKEOUTS; do
      option=()
      [ "$takeout" = preset ] || option=(--takeout "$takeout")
      timeout 150 "$B/bin/markidis_gpu_benchmark" --n "$N" --schemes halfhalf,tf32tf32 \
        --engines fastest "${option[@]}" --csv "$OUT/speed-$takeout.csv" \
        > "$LOGS/markidis_gpu_benchmark-$takeout.log" 2>&1
      echo "markidis_gpu_benchmark (take-out: $takeout) rc=$?"
      sed -n '/^| method/,$p' "$LOGS/markidis_gpu_benchmark-$takeout.log"
    done
  fi

  if has ctest; then
    ctest --test-dir "$B" -LE long -j"$JOBS" --output-on-failure > "$LOGS/ctest.log" 2>&1
    echo "ctest -LE long rc=$?"
    tail -6 "$LOGS/ctest.log"
  fi

  if has python; then
    rm -rf "$B-python/site"
    CMAKE_PREFIX_PATH=$DEPS/usr python3 -m pip install -q --no-build-isolation --no-deps --target "$B-python/site" \
      -C build-dir="$B-python/build" -C cmake.define.CMAKE_CUDA_ARCHITECTURES="$ARCHS" . \
      > "$LOGS/python-build.log" 2>&1 || { tail -40 "$LOGS/python-build.log"; exit 1; }
    # shellcheck disable=SC2086  # PYTEST_ARGS is words
    PYTHONPATH=$B-python/site${PYTHONPATH:+:$PYTHONPATH} timeout 500 python3 -m pytest -q -rs \
      ${PYTEST_ARGS:-python/tests --ignore=python/tests/test_notebooks.py} > "$LOGS/pytest.log" 2>&1
    echo "pytest ${PYTEST_ARGS:-python/tests} (GPU; notebooks not run) rc=$?"
    grep -E 'passed|failed|SKIPPED|FAILED|Error' "$LOGS/pytest.log" | tail -30
  fi
}

# Everything main prints is also kept in summary.txt; the logs are packed whatever happened.
main 2>&1 | tee -a "$OUT/summary.txt"
status=${PIPESTATUS[0]}
tar -C "$OUT" -cJf "$OUT/logs.tar.xz" logs && rm -rf "$LOGS"
exit "$status"
