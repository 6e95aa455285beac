#!/usr/bin/env bash
# The error-corrected SGEMM schemes on a GPU (issue 5): builds, runs the GPU tests, the throughput
# and accuracy benchmark at n = 8192 against cublasSgemm and FAST_TF32, our GEMM kernels against
# cuBLAS, and the accuracy-versus-k experiment (our kernels and cuBLAS-composed) with cublasSgemm's
# column. Results go to $OUT (at most 8 files):
#   summary.txt                   the tables and the goal lines
#   markidis-gpu-benchmark.csv    the benchmark's rows
#   markidis-accuracy-gpu.csv     accuracy vs k, our kernels (+ cublasSgemm, CPU SGEMM)
#   markidis-accuracy-gpu-cublas.csv  the same with the products composed from cuBLAS
#   logs.tar.xz                   configure/build logs, gpu_test output, full program output
#
#   PHASE=build OUT=... bash scripts/markidis_gpu_run.sh   # configure and build (about 5 min)
#   PHASE=run   OUT=... bash scripts/markidis_gpu_run.sh   # tests and programs (about 5 min)
#   OUT=... bash scripts/markidis_gpu_run.sh               # both
# CMAKE_PREFIX_PATH for GoogleTest etc.: $DEPS/usr (default .deps/root, where present).
set -u
: "${OUT:?set OUT to the output folder}"
source "$(dirname "$0")/device_env.sh"
B=${BUILD_DIR:-/tmp/b-markidis}
PHASE=${PHASE:-all}
N=${N:-8192}
mkdir -p "$OUT/logs"

if [ "$PHASE" = build ] || [ "$PHASE" = all ]; then
  cmake -S . -B "$B" -G Ninja "${PREFIX[@]}" -DTCEMU_WERROR=ON -DCMAKE_CUDA_ARCHITECTURES=90a-real \
    > "$OUT/logs/configure.log" 2>&1 || { tail -40 "$OUT/logs/configure.log"; exit 1; }
  cmake --build "$B" -j16 --target gpu_test markidis_gpu_benchmark gpu_gemm_benchmark \
    markidis_accuracy > "$OUT/logs/build.log" 2>&1 ||
    { grep -E 'error' -A5 "$OUT/logs/build.log" | head -60; exit 1; }
  echo "BUILD OK" | tee -a "$OUT/summary.txt"
fi

if [ "$PHASE" = run ] || [ "$PHASE" = all ]; then
  {
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    timeout 400 "$B/bin/gpu_test" > "$OUT/logs/gpu_test.log" 2>&1
    echo "gpu_test rc=$?"
    grep -E "differ|FAILED|PASSED|SKIPPED|Failure|Expected|Which is|composed|error" \
      "$OUT/logs/gpu_test.log" | head -80
    timeout 500 "$B/bin/markidis_gpu_benchmark" --n "$N" --csv "$OUT/markidis-gpu-benchmark.csv" \
      > "$OUT/logs/markidis_gpu_benchmark.log" 2>&1
    echo "markidis_gpu_benchmark rc=$?"
    sed -n '/^| method/,$p' "$OUT/logs/markidis_gpu_benchmark.log"
    timeout 200 "$B/bin/gpu_gemm_benchmark" "$N" > "$OUT/logs/gpu_gemm_benchmark.log" 2>&1
    echo "gpu_gemm_benchmark rc=$?"
    sed -n '/^| GEMM/,$p' "$OUT/logs/gpu_gemm_benchmark.log"
    for backend in gpu gpu-cublas; do
      timeout 300 "$B/bin/markidis_accuracy" --backend "$backend" --archs sm90 --size 256 \
        --dists type1,type4 --k 16,64,256,1024,4096,16384 --out "$OUT" \
        --file "markidis-accuracy-$backend.csv" > "$OUT/logs/markidis_accuracy_$backend.log" 2>&1
      echo "markidis_accuracy --backend $backend rc=$?"
      tail -2 "$OUT/logs/markidis_accuracy_$backend.log"
    done
  } 2>&1 | tee -a "$OUT/summary.txt"
fi
tar -C "$OUT" -cJf "$OUT/logs.tar.xz" logs && rm -rf "$OUT/logs"
