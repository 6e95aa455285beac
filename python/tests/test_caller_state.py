"""The caller's floating-point state (issue 38): each entry point gives the bits of
round-to-nearest whatever rounding mode the calling thread has set (libm's fesetround through
ctypes), and leaves that mode as it found it; the block-scaled matmul and mma (scale_a, scale_b)
on each path of the emulated GEMM among them."""

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


# The block-scaled datapaths, one for each path of the emulated GEMM: MXFP8/6/4 (the binary64 fast
# path; with an Inf operand and a NaN scale, the element-wise evaluation it falls back to), NVFP4
# and MXFP4 (the group path).
SCALED = {
    "mxf8f6f4": ("sm100", "e4m3", "e2m3", "tcgen05.mxf8f6f4.block32"),
    "mxf8f6f4 fallback": ("sm120", "e5m2", "e4m3", "mma.sync.m16n8k32.mxf8f6f4.block32"),
    "nvfp4": ("sm100", "e2m1", "e2m1", "tcgen05.mxf4nvf4.block16.ue4m3"),
    "mxfp4": ("sm120", "e2m1", "e2m1", "mma.sync.m16n8k64.mxf4.block32"),
}
# The codes that are Inf or NaN: e4m3's S.1111.111, e5m2's S.11111.xx.
NONFINITE = {"e4m3": (0x7F, 0x7F), "e5m2": (0x7C, 0x7C)}


def scaled_operands(rng, arch, a_format, b_format, instr):
    """A (6 x k), B (k x 5), C and the scales (uint8 codes) of a block-scaled preset: k two
    instructions and a partial one; finite codes with subnormals, scales near 1 and one in three
    anywhere (fp32 subnormal products)."""
    dp = tcemu.preset(arch, a_format, "fp32", instr,
                      input_b=None if b_format == a_format else b_format)
    k = 2 * dp.instruction_k + 7
    s = -(-k // dp.scale_block)

    def finite(fmt, shape):
        f = tcemu.Format(fmt)
        x = rng.integers(0, 1 << f.container_bits, shape).astype(np.uint8)
        exponent_field = ((1 << f.exponent_bits) - 1) << f.fraction_bits
        x[rng.random(shape) < 0.25] &= np.uint8(0xFF ^ exponent_field)  # subnormals
        if fmt in NONFINITE:
            mask, value = NONFINITE[fmt]
            x[(x & mask) == value] = 0
        return x

    def scales(fmt, shape):
        one, nan = (127, 0xFF) if fmt == "ue8m0" else (0x38, 0x7F)
        x = one - 8 + rng.integers(0, 17, shape)
        wide = rng.random(shape) < 1 / 3
        x[wide] = rng.integers(0, nan, int(wide.sum()))
        return x.astype(np.uint8)

    a, b = finite(a_format, (6, k)), finite(b_format, (k, 5))
    c = (rng.standard_normal((6, 5)) * 2.0 ** rng.integers(-130, 10, (6, 5))).astype(np.float32)
    sa, sb = scales(str(dp.scale_a), (6, s)), scales(str(dp.scale_b), (s, 5))
    if a_format == "e5m2":
        a[1, 3] = 0x7C  # +Inf: the binary64 path falls back
        sb[1, 2] = 0xFF  # a NaN scale
    return dp, a, b, c, sa, sb


def scaled_matmul(dp, a, b, c, sa, sb, takeout=False):
    k = dp.instruction_k if takeout else 0
    return lambda: tcemu.matmul(a, b, c, datapath=dp, scale_a=sa, scale_b=sb, alpha=0.75,
                                beta=-1.5, takeout_every_k=k)


def scaled_mma(dp, a, b, c, sa, sb):
    """Each row of A with B's first column, from C's first column, as mma() cases."""
    return lambda: tcemu.mma(dp, a, np.tile(b[:, 0], (a.shape[0], 1)), c[:, 0].copy(),
                             scale_a=sa, scale_b=np.tile(sb[:, 0], (a.shape[0], 1)))


def calls(rng):
    a, b = spread(rng, (6, 20)), spread(rng, (20, 5)).T.copy().T
    b[0, :] = rng.standard_normal(5)  # B's first row normal: A's subnormal row meets it
    a32, b32 = (rng.standard_normal((6, 20)) * 2.0 ** rng.integers(-8, 8, (6, 20))).astype(
        np.float32
    ), rng.standard_normal((20, 5)).astype(np.float32)
    dp = tcemu.preset("sm90", "fp16", "fp32")
    ah, bh = random_bits(rng, (7, 33), "fp16"), random_bits(rng, (33, 5), "fp16")
    scaled = {name: scaled_operands(rng, *preset) for name, preset in SCALED.items()}
    return {
        "matmul": lambda: tcemu.matmul(ah, bh, datapath=dp, alpha=0.75),
        **{f"matmul {name}": scaled_matmul(*ops) for name, ops in scaled.items()},
        **{f"matmul {name} take-out": scaled_matmul(*ops, takeout=True)
           for name, ops in scaled.items()},
        **{f"mma {name}": scaled_mma(*ops) for name, ops in scaled.items()},
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
