"""`a @ b` of a NumPy under libtcemu_blas_preload.so (docs/preload.md), run by CTest.

usage: python3 numpy_program.py debian|wheel

debian: Debian's python3-numpy (its BLAS, libblas.so.3 or OpenBLAS, reached through cblas_dgemm
from an extension module loaded with RTLD_LOCAL); wheel: NumPy from pip (its bundled OpenBLAS,
scipy_cblas_dgemm64_). With TCEMU_PRELOAD_SCHEME=dgemm-crt and TCEMU_PRELOAD_MODE=cr set by CTest,
the product must be routed (the log says so, naming the entry point) and have the bits of the
exact product rounded once: to nearest, then under FE_UPWARD and FE_DOWNWARD set by the caller
(ctypes' fesetround), in those directions; the same for complex128 `a @ b` (cblas_zgemm,
scipy_cblas_zgemm64_), each real and imaginary part the exact part rounded once; float32 `a @ b`
(cblas_sgemm, scipy_cblas_sgemm64_) likewise, the exact product rounded once to float32 in each
direction; with TCEMU_PRELOAD_SCHEME=off it falls through to the
NumPy's BLAS, whose bits differ from the correctly rounded ones on these inputs (so the first
check can fail). The process must exit 0. Exit status 0 when every check holds, 1 otherwise.
"""

import ctypes
import math
import os
import sys
from fractions import Fraction

DEBIAN_NUMPY = "/usr/lib/python3/dist-packages"

which = sys.argv[1] if len(sys.argv) == 2 else ""
if which not in ("debian", "wheel"):
    sys.exit(__doc__)
if which == "debian":
    sys.path.insert(0, DEBIAN_NUMPY)
import numpy as np  # noqa: E402

from_debian = os.path.realpath(np.__file__).startswith(DEBIAN_NUMPY + "/")
if from_debian != (which == "debian"):
    print(f"FAILED: wanted the {which} NumPy, imported {np.__file__}")
    sys.exit(1)

log_path = os.environ["TCEMU_PRELOAD_LOG"]
entry = "cblas_dgemm" if which == "debian" else "scipy_cblas_dgemm64_"
complex_entry = "cblas_zgemm" if which == "debian" else "scipy_cblas_zgemm64_"
single_entry = "cblas_sgemm" if which == "debian" else "scipy_cblas_sgemm64_"
failures = 0
# The library's line from when it was loaded, at this process's start; then the log is emptied so
# that what follows is this run's.
with open(log_path) as f:
    loaded = [line for line in f if "libtcemu_blas_preload.so loaded: intercepts" in line]
if not loaded or "scipy_cblas_dgemm64_" not in loaded[-1] or "scipy_cblas_zgemm64_" not in loaded[-1]:
    print(f"FAILED: the log {log_path} has no load-time line naming the wheels' entry points")
    failures += 1
open(log_path, "w").close()

# <fenv.h> on x86-64 and AArch64 glibc.
libm = ctypes.CDLL("libm.so.6")
if os.uname().machine == "x86_64":
    FE_TONEAREST, FE_UPWARD, FE_DOWNWARD = 0, 0x800, 0x400
else:
    FE_TONEAREST, FE_UPWARD, FE_DOWNWARD = 0, 0x400000, 0x800000

rng = np.random.default_rng(37)
m, n, k = 12, 10, 96
# Values spread over many binades (phi = 2): a BLAS's sum of rounded products is then far from
# correctly rounded in most elements.
a = (rng.random((m, k)) - 0.5) * np.exp(2 * rng.standard_normal((m, k)))
b = (rng.random((k, n)) - 0.5) * np.exp(2 * rng.standard_normal((k, n)))


def rounded(s, direction):
    """The rational s rounded once: int / int division is correctly rounded to nearest."""
    r = float(s)
    if direction == "upward" and Fraction(r) < s:
        r = math.nextafter(r, math.inf)
    if direction == "downward" and Fraction(r) > s:
        r = math.nextafter(r, -math.inf)
    return r


def exact(direction):
    """The exact product a b rounded once."""
    out = np.empty((m, n))
    for i in range(m):
        for j in range(n):
            out[i, j] = rounded(sum(Fraction(x) * Fraction(y) for x, y in zip(a[i], b[:, j])),
                                direction)
    return out


# complex128 operands: the real ones above as real parts, new imaginary parts.
ai = (rng.random((m, k)) - 0.5) * np.exp(2 * rng.standard_normal((m, k)))
bi = (rng.random((k, n)) - 0.5) * np.exp(2 * rng.standard_normal((k, n)))
az, bz = a + 1j * ai, b + 1j * bi


def exact_complex(direction):
    """Each part of the exact product az bz rounded once."""
    out = np.empty((m, n), dtype=np.complex128)
    for i in range(m):
        for j in range(n):
            terms = [(Fraction(xr), Fraction(xi), Fraction(yr), Fraction(yi))
                     for xr, xi, yr, yi in zip(a[i], ai[i], b[:, j], bi[:, j])]
            re = sum(xr * yr - xi * yi for xr, xi, yr, yi in terms)
            im = sum(xr * yi + xi * yr for xr, xi, yr, yi in terms)
            out[i, j] = complex(rounded(re, direction), rounded(im, direction))
    return out


def rounded32(s, direction):
    """The rational s rounded once to float32: lo <= s <= hi, neighbours or equal."""
    def step(x, to):
        return np.nextafter(x, np.float32(to), dtype=np.float32)
    lo = np.float32(float(s))
    while Fraction(float(lo)) > s:
        lo = step(lo, -math.inf)
    while Fraction(float(step(lo, math.inf))) <= s:
        lo = step(lo, math.inf)
    hi = lo if Fraction(float(lo)) == s else step(lo, math.inf)
    if direction == "upward":
        return hi
    if direction == "downward" or hi == lo:
        return lo
    below, above = s - Fraction(float(lo)), Fraction(float(hi)) - s
    if below != above:
        return lo if below < above else hi
    return lo if int(np.array(lo).view(np.uint32)) % 2 == 0 else hi


def exact32(direction):
    """The exact product a32 b32 rounded once to float32."""
    out = np.empty((m, n), dtype=np.float32)
    for i in range(m):
        for j in range(n):
            out[i, j] = rounded32(sum(Fraction(float(x)) * Fraction(float(y))
                                      for x, y in zip(a32[i], b32[:, j])), direction)
    return out


def differing(x, y):
    return int(np.count_nonzero(x.view(np.uint64) != y.view(np.uint64)))


a32, b32 = a.astype(np.float32), b.astype(np.float32)
expected = {d: exact(d) for d in ("nearest", "upward", "downward")}
expected_complex = {d: exact_complex(d) for d in ("nearest", "upward", "downward")}
for d, mode in (("nearest", FE_TONEAREST), ("upward", FE_UPWARD), ("downward", FE_DOWNWARD)):
    libm.fesetround(mode)
    c = a @ b
    cz = az @ bz
    c32 = a32 @ b32
    libm.fesetround(FE_TONEAREST)
    bad = int(np.count_nonzero(c32.view(np.uint32) != exact32(d).view(np.uint32)))
    print(f"float32 a @ b under {d}: {bad} of {m * n} elements differ from the exact product "
          "rounded " + d + " to float32")
    failures += bad != 0
    bad = differing(c, expected[d])
    print(f"{which} NumPy {np.__version__}, a @ b under {d}: {bad} of {m * n} elements differ "
          "from the exact product rounded " + d)
    failures += bad != 0
    bad = differing(cz.view(np.float64), expected_complex[d].view(np.float64))
    print(f"complex128 a @ b under {d}: {bad} of {2 * m * n} parts differ from the exact parts "
          "rounded " + d)
    failures += bad != 0
os.environ["TCEMU_PRELOAD_SCHEME"] = "off"  # read at every call
blas = differing(a @ b, expected["nearest"])
print(f"the NumPy's own BLAS: {blas} of {m * n} elements differ from the correctly rounded ones")
failures += blas == 0
blas = differing((az @ bz).view(np.float64), expected_complex["nearest"].view(np.float64))
print(f"its complex128 product: {blas} of {2 * m * n} parts differ from the correctly rounded "
      "ones")
failures += blas == 0

with open(log_path) as f:
    log = f.read()
for needle in (f"{entry} (row-major) ",
               f"{complex_entry} (row-major) ",
               f"{single_entry} (row-major) ",
               "routed to dgemm-crt mode cr",
               "rounding upward (the caller's rounding mode)",
               "rounding downward (the caller's rounding mode)",
               "fell through to the BLAS (TCEMU_PRELOAD_SCHEME=off)"):
    if needle not in log:
        print(f"FAILED: the log {log_path} does not say '{needle}'")
        failures += 1
print("passed" if failures == 0 else f"FAILED: {failures} checks")
sys.exit(1 if failures else 0)
