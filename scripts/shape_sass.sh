#!/usr/bin/env bash
# Which SASS instructions every MMA instruction shape compiles to: builds scripts/shape_sass.cu
# (one kernel per PTX mma.sync shape and WMMA fragment shape of the floating-point formats) for
# each architecture named and prints, per kernel, its MMA-class SASS instructions with their
# counts (operands dropped). Needs nvcc and cuobjdump (the lent GPU machine has both).
#
#   bash scripts/shape_sass.sh [ARCH ...]     (default: 75 80 89 90a 100a)
set -eu
if [ "${1:-}" = --help ] || [ "${1:-}" = -h ]; then
  sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for arch in ${@:-75 80 89 90a 100a}; do
  nvcc -arch=sm_$arch -cubin -o "$work/s.cubin" "$here/shape_sass.cu"
  echo "== sm_$arch ($(nvcc --version | grep -o 'release [0-9.]*'))"
  cuobjdump -sass "$work/s.cubin" | awk '
    /Function :/ { if (name) print name ":" (list ? list : " none"); name = $3; list = ""; count = 0; delete n; delete order; next }
    /[A-Z]*MMA|GMMA/ { for (i = 1; i <= NF; ++i) if ($i ~ /MMA/) { op = $i; break }
                       if (!(op in n)) order[++count] = op; n[op]++; list = ""
                       for (j = 1; j <= count; ++j) if (order[j] in n) list = list " " n[order[j]] "x" order[j] }
    END { if (name) print name ":" (list ? list : " none") }'
done
