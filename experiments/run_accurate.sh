#!/usr/bin/env bash
# Runs the accurate-BLAS experiments on the CPU and draws the plots: CSV and PNG land in
# docs/results/accurate/. Usage: experiments/run_accurate.sh [BUILD_DIR]   (about 4 minutes on
# 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=docs/results/accurate
mkdir -p "$out"
bin=$build/bin/accurate_experiments
"$bin" condition --out "$out/accurate-condition.csv" --n 1000 --per-decade 4
"$bin" table --out "$out/accurate-table-cpu64-n500.csv" --n 500
python=python3
if [[ -x /usr/bin/python3 ]]; then python=/usr/bin/python3; fi
"$python" experiments/plot_accurate.py "$out"
