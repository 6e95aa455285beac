#!/usr/bin/env bash
# Installs what tcemu needs from Debian's packages, and what the Python package (python/) needs
# to build and test from PyPI with python3's pip, only what is missing; safe to run again.
# The CUDA toolkit is not installed here: gpu/ is built when nvcc is found, skipped otherwise.
set -euo pipefail

packages=(
  cmake g++ make xz-utils         # build
  libgtest-dev libbenchmark-dev   # tests and benchmarks
  libmpfr-dev libgmp-dev          # reference/ oracles
  libeigen3-dev                   # the benchmark's baseline GEMM
  libopenblas-dev                 # a host BLAS for the tests of the dgemm_ preload library
  python3-numpy                   # Debian's NumPy: `a @ b` under that library (tests/preload)
  python3-matplotlib              # experiment plots
  python3-dev python3-pip         # the Python package's build (Debian's python3; pip below)
  clang libclang-rt-dev           # the libFuzzer targets of fuzz/ (scripts/fuzz.sh)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup: every Debian package is installed"
else
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The Python package: its build backend and bindings (pip install .), its dependencies and its
# tests (pytest python/tests; the example and the notebooks plot with matplotlib; nbclient and
# ipykernel run the notebooks of python/notebooks headless; torch: tcemu.torch and its tests,
# tests/test_torch_*.py; torchao: the reference quantize_mx and quantize_nvfp4 are checked
# against, tests/test_quantize_torchao.py; torchvision and scikit-learn: the torch studies of
# experiments/torch and their tests). Module name = package name (import=pip where they differ).
# torch is PyPI's Linux wheel, the only one PyPI has: built for CUDA, it pulls the nvidia-* and
# cuda-* packages, which it needs even on a machine without a GPU (`pip install --no-deps torch`
# fails to import: libcufile.so.0 missing). Measured 2026-11-29 on the 2-core development machine
# into a fresh venv: 3.7 minutes, 5.4 GB installed (torch 2.15.0, its wheel 539 MB of them).
# NumPy is pip's wheel (its bundled OpenBLAS), installed beside Debian's python3-numpy rather
# than taken for it (--ignore-installed): the preload library's tests run `a @ b` under both.
python_packages=(scikit_build_core=scikit-build-core nanobind ml_dtypes pytest matplotlib
                 nbclient nbformat ipykernel torch torchao torchvision sklearn=scikit-learn)
missing=()
for p in "${python_packages[@]}"; do
  if ! python3 -c "import ${p%%=*}" 2>/dev/null; then missing+=("${p#*=}"); fi
done
wheel_numpy=0
if ! python3 -c 'import numpy, os, sys
sys.exit(os.path.realpath(numpy.__file__).startswith("/usr/lib/python3/dist-packages/"))' \
    2>/dev/null; then
  wheel_numpy=1
fi
if ((${#missing[@]} == 0 && wheel_numpy == 0)); then
  echo "setup: every Python package is installed"
  exit 0
fi
pip_flags=()
# Debian's own python3 refuses pip installs (PEP 668) unless told otherwise.
if python3 -c 'import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")))'; then
  pip_flags+=(--break-system-packages)
fi
if ((${#missing[@]} > 0)); then
  echo "setup: pip installing ${missing[*]}"
  python3 -m pip install -q "${pip_flags[@]}" "${missing[@]}"
fi
if ((wheel_numpy == 1)); then
  echo "setup: pip installing numpy (the wheel, beside Debian's)"
  python3 -m pip install -q "${pip_flags[@]}" --ignore-installed numpy
fi
