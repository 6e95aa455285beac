#!/usr/bin/env bash
# The LD_PRELOAD library's speed goals (issue 37, section 3) measured on an unmodified program:
# cublas_gemm_program run plainly, then under libtcemu_cublas_preload.so once per scheme and mode
# of CONFIGS, with the same arguments; experiments/compare_preload_runs.py then prints the table
# (speed over cuBLAS, accuracy beside cuBLAS's) and writes OUT/preload-speed.csv.
#
#   bash experiments/run_preload_speed.sh BUILD OUT [cublas_gemm_program options...]
#   CONFIGS="dgemm-crt:dp dgemm-crt:cr" (default) names SCHEME:MODE pairs (TCEMU_PRELOAD_SCHEME,
#   TCEMU_PRELOAD_MODE); EXTRA_PRELOAD="LABEL=path/to/hook.so ..." adds runs under other libraries.
set -euo pipefail
if [[ $# -lt 2 || $1 == --help || $1 == -h ]]; then
  sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
  [[ $# -ge 1 && ($1 == --help || $1 == -h) ]] && exit 0 || exit 2
fi
build=$1 out=$2
shift 2
program=$build/bin/cublas_gemm_program
library=$build/lib/libtcemu_cublas_preload.so
for f in "$program" "$library"; do
  [[ -e $f ]] || { echo "run_preload_speed.sh: $f not found (build it first)" >&2; exit 1; }
done
mkdir -p "$out"
csvs=("$out/plain.csv")
"$program" --label plain --out "$out/plain.csv" "$@"
for config in ${CONFIGS:-dgemm-crt:dp dgemm-crt:cr}; do
  scheme=${config%%:*} mode=${config#*:}
  csv=$out/$scheme-$mode.csv
  TCEMU_PRELOAD_SCHEME=$scheme TCEMU_PRELOAD_MODE=$mode TCEMU_PRELOAD_LOG=$out/$scheme-$mode.log \
    LD_PRELOAD=$library "$program" --label "$scheme $mode" --out "$csv" "$@"
  csvs+=("$csv")
done
for extra in ${EXTRA_PRELOAD:-}; do
  label=${extra%%=*} hook=${extra#*=}
  LD_PRELOAD=$hook "$program" --label "$label" --out "$out/$label.csv" "$@"
  csvs+=("$out/$label.csv")
done
python3 "$(dirname "$0")/compare_preload_runs.py" "${csvs[@]}" --out "$out/preload-speed.csv"
