#!/usr/bin/env bash
# The GPU columns of the accuracy tables, on a machine with a CUDA device (docs/results/
# accurate-accuracy.md, ozaki-accuracy.md and ozaki-reproducibility.md):
#   accurate_experiments table --backend gpu --n 500     -> $OUT/accurate/accurate-table-gpu-n500.csv
#   ozaki_experiments table --backend gpu --n 1000       -> $OUT/ozaki_table_gpu_n1000.csv
#   ozaki_experiments repro --backend gpu --n 10000      -> $OUT/ozaki_reproducibility_gpu.csv
# then prints every CSV on stdout and draws the PNGs next to them where python3 has matplotlib
# (else run experiments/plot_accurate.py $OUT/accurate and experiments/plot_ozaki.py $OUT
# elsewhere). Progress goes to stderr. The MPFR references use every core.
# Usage: OUT=DIR experiments/run_accuracy_gpu.sh BUILD_DIR   (from the repository root)
set -euo pipefail
if [[ $# -ne 1 || -z ${OUT:-} ]]; then
  echo "usage: OUT=DIR $0 BUILD_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
cd "$(dirname "$0")/.."
mkdir -p "$OUT/accurate"
out=$(cd "$OUT" && pwd)
for program in accurate_experiments ozaki_experiments; do
  if [[ ! -x $build/bin/$program ]]; then
    echo "$0: $build/bin/$program is missing (build the targets accurate_experiments and" \
      "ozaki_experiments)" >&2
    exit 1
  fi
done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
start=$SECONDS
# Runs the command after CSV with "--out CSV" appended, then prints CSV on stdout.
run() {
  local csv=$1
  shift
  "$@" --out "$csv"
  echo "$(basename "$csv"): done at $((SECONDS - start)) s" >&2
  printf '\n== %s\n' "$csv"
  cat "$csv"
}
run "$out/accurate/accurate-table-gpu-n500.csv" \
  "$build/bin/accurate_experiments" table --backend gpu --n 500
run "$out/ozaki_table_gpu_n1000.csv" "$build/bin/ozaki_experiments" table --backend gpu --n 1000
run "$out/ozaki_reproducibility_gpu.csv" \
  "$build/bin/ozaki_experiments" repro --backend gpu --n 10000
python=python3
if [[ -x /usr/bin/python3 ]]; then python=/usr/bin/python3; fi
if "$python" -c "import matplotlib" 2>/dev/null; then
  "$python" experiments/plot_accurate.py "$out/accurate"
  "$python" experiments/plot_ozaki.py "$out"
else
  echo "no matplotlib for $python: plots skipped (draw them from the CSVs elsewhere)" >&2
fi
