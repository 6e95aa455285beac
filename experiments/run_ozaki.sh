#!/usr/bin/env bash
# Runs every Ozaki experiment and draws the plots: CSV and PNG land in docs/results/.
# Usage: experiments/run_ozaki.sh [BUILD_DIR]   (about 15 minutes on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=docs/results
mkdir -p "$out"
bin=$build/bin/ozaki_experiments
"$bin" repro --out "$out/ozaki_reproducibility.csv" --n 10000
"$bin" table --out "$out/ozaki_table_emulator_n256.csv" --backend emulator --arch sm90 --n 256
"$bin" table --out "$out/ozaki_table_cpu64_n1000.csv" --backend cpu64 --n 1000
"$bin" phi --out "$out/ozaki_phi_emulator_n128.csv" --backend emulator --arch sm90 --n 128
"$bin" size --out "$out/ozaki_size_emulator_phi1.csv" --backend emulator --arch sm90 --phi 1 \
  --sizes 16,32,64,128,256,512
# Debian's matplotlib lives with the system interpreter.
python=python3
if [[ -x /usr/bin/python3 ]]; then python=/usr/bin/python3; fi
"$python" experiments/plot_ozaki.py "$out"
