"""The caller's floating-point state (issue 38): each entry point gives the bits of
round-to-nearest whatever rounding mode the calling thread has set (libm's fesetround through
ctypes), and leaves that mode as it found it."""

import ctypes
import ctypes.util
import platform

import numpy as np
import pytest
from conftest import random_bits

import tcemu

if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
    pytest.skip("the FE_* values below are x86-64 glibc's", allow_module_level=True)

LIBM = ctypes.CDLL(ctypes.util.find_library("m"))
FE_TONEAREST, FE_DOWNWARD, FE_UPWARD, FE_TOWARDZERO = 0x000, 0x400, 0x800, 0xC00
MODES = {"downward": FE_DOWNWARD, "upward": FE_UPWARD, "toward zero": FE_TOWARDZERO}


def in_mode(mode, call):
    """call() with the thread's rounding mode set to `mode`, restored after; also returns the mode
    the thread was in right after the call."""
    assert LIBM.fesetround(mode) == 0
    try:
        result = call()
        return result, LIBM.fegetround()
    finally:
        LIBM.fesetround(FE_TONEAREST)


def bits(x):
    x = np.ascontiguousarray(x)
    return x.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize])


def spread(rng, shape):
    """Values over 2^-20 .. 2^20 with a subnormal first row."""
    x = rng.standard_normal(shape) * 2.0 ** rng.integers(-20, 20, shape)
    x[0, :] *= 2.0**-1040
    return x


def calls(rng):
    a, b = spread(rng, (6, 20)), spread(rng, (20, 5)).T.copy().T
    b[0, :] = rng.standard_normal(5)  # B's first row normal: A's subnormal row meets it
    a32, b32 = (rng.standard_normal((6, 20)) * 2.0 ** rng.integers(-8, 8, (6, 20))).astype(
        np.float32
    ), rng.standard_normal((20, 5)).astype(np.float32)
    dp = tcemu.preset("sm90", "fp16", "fp32")
    ah, bh = random_bits(rng, (7, 33), "fp16"), random_bits(rng, (33, 5), "fp16")
    return {
        "matmul": lambda: tcemu.matmul(ah, bh, datapath=dp, alpha=0.75),
        "ozaki dgemm-tc dp": lambda: tcemu.ozaki_gemm(a, b, mode="dp"),
        "ozaki dgemm-tc cr": lambda: tcemu.ozaki_gemm(a, b, mode="cr"),
        "ozaki dgemm-crt dp": lambda: tcemu.ozaki_gemm(a, b, mode="dp", crt=True),
        "ozaki dgemm-crt cr": lambda: tcemu.ozaki_gemm(a, b, mode="cr", crt=True),
        "ozaki cpu64 cr": lambda: tcemu.ozaki_gemm(a, b, mode="cr", backend="cpu64"),
        "markidis": lambda: tcemu.markidis_gemm(a32, b32, scheme="markidis"),
        "accurate dot2": lambda: tcemu.accurate_gemm(a, b, method="dot2"),
        "accurate exblas": lambda: tcemu.accurate_gemm(a, b, method="exblas"),
    }


@pytest.mark.parametrize("mode", list(MODES))
def test_results_do_not_depend_on_the_callers_rounding_mode(rng, mode):
    for name, call in calls(rng).items():
        expected = bits(call())
        got, after = in_mode(MODES[mode], call)
        assert after == MODES[mode], f"{name} changed the caller's rounding mode"
        np.testing.assert_array_equal(bits(got), expected, err_msg=f"{name} rounding {mode}")
