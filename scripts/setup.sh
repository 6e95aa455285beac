#!/usr/bin/env bash
# Installs what tcemu needs from Debian's packages, only what is missing; safe to run again.
# The CUDA toolkit is not installed here: gpu/ is built when nvcc is found, skipped otherwise.
set -euo pipefail

packages=(
  cmake g++ make xz-utils         # build
  libgtest-dev libbenchmark-dev   # tests and benchmarks
  libmpfr-dev libgmp-dev          # reference/ oracles
  libeigen3-dev                   # the benchmark's baseline GEMM
  python3-matplotlib              # experiment plots
  clang libclang-rt-dev           # the libFuzzer targets of fuzz/ (scripts/fuzz.sh)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup: every package is installed"
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
echo "setup: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
