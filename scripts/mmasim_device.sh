#!/usr/bin/env bash
# The evidence against MMA-Sim 2.1.1 in one command, on a machine with PyTorch (the lent GPU
# machine; tests/data/mmasim/README.md). Run from the repository root:
#
#   WHEEL=.mmasim/mmasim-2.1.1-py3-none-any.whl bash scripts/mmasim_device.sh
#   bash scripts/mmasim_device.sh --help                 (this text)
#
# 1. builds mmasim_cases with scripts/device_run.sh (STEPS=build; its summary.txt and logs.tar.xz
#    land in $OUT too);
# 2. for COUNT, then KEEP cases per set: mmasim_cases write, scripts/mmasim_reference.py (MMA-Sim
#    on CUDA where torch sees a GPU, the first CPU_CHECK cases of every instruction on the CPU as
#    well, every instruction of a set required to agree), mmasim_cases check (every result against
#    tcemu, bit for bit);
# 3. checks that the KEEP results are the first KEEP of the COUNT ones and compares them with the
#    committed tests/data/mmasim/mmasim-results.tar.xz, if any;
# 4. packs the KEEP results into $OUT/mmasim-results.tar.xz, the file to commit as
#    tests/data/mmasim/mmasim-results.tar.xz.
# Everything it prints also goes to $OUT/mmasim-summary.txt. Exit status 0 when every step passed.
#
# Knobs (environment) and their defaults:
#   OUT=$PWD/out  WHEEL=.mmasim/mmasim-2.1.1-py3-none-any.whl  COUNT=100000  KEEP=10000
#   CPU_CHECK=2000  B=$PWD/build-device  WORK=/tmp/mmasim-evidence  PYTHON=python3
# (device_run.sh's own knobs, DEPS among them, apply to the build.)
set -u

if [ "${1:-}" = --help ] || [ "${1:-}" = -h ]; then
  sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
fi
if [ $# -gt 0 ]; then
  echo "mmasim_device.sh: no arguments but --help; the knobs are environment variables" >&2
  exit 2
fi

OUT=${OUT:-$PWD/out}
WHEEL=${WHEEL:-.mmasim/mmasim-2.1.1-py3-none-any.whl}
COUNT=${COUNT:-100000}
KEEP=${KEEP:-10000}
CPU_CHECK=${CPU_CHECK:-2000}
B=${B:-$PWD/build-device}
WORK=${WORK:-/tmp/mmasim-evidence}
PYTHON=${PYTHON:-python3}

if [ ! -f "$WHEEL" ]; then
  echo "mmasim_device.sh: WHEEL=$WHEEL: no such file (the mmasim 2.1.1 wheel)" >&2
  exit 2
fi
case "$COUNT$KEEP" in
  *[!0-9]*) echo "mmasim_device.sh: COUNT and KEEP must be whole numbers" >&2; exit 2 ;;
esac
if [ "$KEEP" -gt "$COUNT" ]; then
  echo "mmasim_device.sh: KEEP=$KEEP is more than COUNT=$COUNT" >&2
  exit 2
fi
mkdir -p "$OUT"

main() {
  local status=0
  STEPS=build TARGETS=mmasim_cases B="$B" OUT="$OUT" bash scripts/device_run.sh || exit 1
  local cases=$B/bin/mmasim_cases
  rm -rf "$WORK"
  for n in $(echo "$COUNT $KEEP" | tr ' ' '\n' | sort -nu -r); do
    echo "== $n cases per set"
    "$cases" write --out "$WORK/$n/cases" --count "$n" || exit 1
    "$PYTHON" scripts/mmasim_reference.py --cases "$WORK/$n/cases" --out "$WORK/$n/mmasim" \
      --mmasim-wheel "$WHEEL" --cpu-check "$CPU_CHECK" > "$WORK/reference-$n.log" 2>&1
    local rc=$?
    echo "mmasim_reference.py ($n cases per set) rc=$rc"
    [ "$rc" = 0 ] || status=1
    grep -v ' MMA-Sim instructions$' "$WORK/reference-$n.log" | tail -40
    "$cases" check --results "$WORK/$n/mmasim" --show 5 || status=1
  done
  # The KEEP cases are the first KEEP of the COUNT ones, so their results must be too.
  if [ "$KEEP" != "$COUNT" ]; then
    local differ=0
    for f in "$WORK/$KEEP/mmasim"/*.d; do
      cmp -s -n "$(stat -c %s "$f")" "$f" "$WORK/$COUNT/mmasim/${f##*/}" || {
        echo "${f##*/}: the first $KEEP results differ between the runs of $KEEP and $COUNT"
        differ=1
      }
    done
    [ "$differ" = 0 ] && echo "the $KEEP-case results are the first $KEEP of the $COUNT-case ones"
    [ "$differ" = 0 ] || status=1
  fi
  local committed=tests/data/mmasim/mmasim-results.tar.xz
  if [ -f "$committed" ]; then
    mkdir -p "$WORK/committed"
    tar -C "$WORK/committed" -xJf "$committed"
    local same=0 other=0
    for f in "$WORK/$KEEP/mmasim"/*.d; do
      if cmp -s "$f" "$WORK/committed/mmasim/${f##*/}"; then
        same=$((same + 1))
      else
        other=$((other + 1))
        echo "${f##*/}: differs from the committed results (or is not committed)"
      fi
    done
    echo "against $committed: $same result files identical, $other not"
  fi
  XZ_OPT=-9 tar -C "$WORK/$KEEP" -cJf "$OUT/mmasim-results.tar.xz" mmasim || exit 1
  echo "packed $OUT/mmasim-results.tar.xz ($(stat -c %s "$OUT/mmasim-results.tar.xz") bytes)"
  exit "$status"
}

main 2>&1 | tee "$OUT/mmasim-summary.txt"
exit "${PIPESTATUS[0]}"
