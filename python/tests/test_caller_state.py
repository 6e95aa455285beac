"""The caller's floating-point state (issue 38): each entry point gives the bits of
round-to-nearest whatever rounding mode the calling thread has set (libm's fesetround through
ctypes), with flush-to-zero and denormals-are-zero set in its MXCSR (fesetenv), and from several
threads at once, and leaves the caller's state as it found it; the block-scaled matmul and mma
(scale_a, scale_b) on each path of the emulated GEMM, batches, fp64_mma, detect with scales and
tcemu.torch among them."""

import concurrent.futures
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


# glibc's x86-64 fenv_t: 28 bytes of x87 state, then the SSE control and status register.
FENV_BYTES, MXCSR_OFFSET = 32, 28
FTZ, DAZ = 0x8000, 0x0040


def mxcsr():
    env = ctypes.create_string_buffer(FENV_BYTES)
    assert LIBM.fegetenv(env) == 0
    return int.from_bytes(env.raw[MXCSR_OFFSET:MXCSR_OFFSET + 4], "little")


def with_ftz_daz(call):
    """call() with FTZ and DAZ set in the thread's MXCSR, the environment restored after; also
    returns the MXCSR right after the call."""
    saved = ctypes.create_string_buffer(FENV_BYTES)
    assert LIBM.fegetenv(saved) == 0
    env = ctypes.create_string_buffer(saved.raw, FENV_BYTES)
    word = int.from_bytes(env.raw[MXCSR_OFFSET:MXCSR_OFFSET + 4], "little") | FTZ | DAZ
    ctypes.memmove(ctypes.addressof(env) + MXCSR_OFFSET, word.to_bytes(4, "little"), 4)
    assert LIBM.fesetenv(env) == 0
    try:
        result = call()
        return result, mxcsr()
    finally:
        LIBM.fesetenv(saved)


def parts(z):
    """A complex array's real and imaginary parts as one float array."""
    return np.ascontiguousarray(z).view(z.real.dtype)


def bits(x):
    if hasattr(x, "datapath"):  # detect()'s fit: its datapath and counts
        return np.frombuffer(f"{x.datapath} {x.mismatches} {x.cases}".encode(), np.uint8)
    if hasattr(x, "detach"):  # a torch tensor
        x = x.detach().numpy()
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
    batch_a, batch_b = random_bits(rng, (3, 7, 33), "fp16"), random_bits(rng, (3, 33, 5), "fp16")
    fp64 = tcemu.fp64_preset("sm90", "mma.sync.m16n8k4")
    x64, y64, z64 = spread(rng, (9, 4)), spread(rng, (9, 4)), spread(rng, (9, 1))[:, 0].copy()
    nvfp4 = tcemu.preset(*SCALED["nvfp4"][:1], "e2m1", "fp32", SCALED["nvfp4"][3])
    cases_a = rng.integers(0, 16, (200, 64), dtype=np.uint8)
    cases_b = rng.integers(0, 16, (200, 64), dtype=np.uint8)
    cases_c = np.zeros(200, np.float32)
    scales_a = rng.integers(0x08, 0x78, (200, 4), dtype=np.uint8)
    scales_b = rng.integers(0x08, 0x78, (200, 4), dtype=np.uint8)
    cases_d = tcemu.mma(nvfp4, cases_a, cases_b, cases_c, scale_a=scales_a, scale_b=scales_b)
    torch_calls = {}
    try:
        import torch

        import tcemu.torch as tt

        ta, tb = torch.from_numpy(spread(rng, (6, 40))), torch.from_numpy(spread(rng, (40, 5)))
        torch_calls["tcemu.torch matmul and its gradients"] = lambda: torch_product(tt, ta, tb, dp)
    except ImportError:
        pass
    za, zb = a + 0.5j * a, b - 0.25j * b  # in the default state, once
    return {
        "matmul": lambda: tcemu.matmul(ah, bh, datapath=dp, alpha=0.75),
        "matmul batched": lambda: tcemu.matmul(batch_a, batch_b, datapath=dp, alpha=0.75),
        "fp64_mma": lambda: tcemu.fp64_mma(fp64, x64, y64, z64),
        "detect with scales": lambda: tcemu.detect(
            cases_a, cases_b, cases_c, cases_d, input="e2m1", accumulator="fp32", scale_block=16,
            scale_format="ue4m3", scale_a=scales_a, scale_b=scales_b),
        **torch_calls,
        **{f"matmul {name}": scaled_matmul(*ops) for name, ops in scaled.items()},
        **{f"matmul {name} take-out": scaled_matmul(*ops, takeout=True)
           for name, ops in scaled.items()},
        **{f"mma {name}": scaled_mma(*ops) for name, ops in scaled.items()},
        "ozaki dgemm-tc dp": lambda: tcemu.ozaki_gemm(a, b, mode="dp"),
        "ozaki dgemm-tc cr": lambda: tcemu.ozaki_gemm(a, b, mode="cr"),
        "ozaki dgemm-crt dp": lambda: tcemu.ozaki_gemm(a, b, mode="dp", crt=True),
        "ozaki dgemm-crt cr": lambda: tcemu.ozaki_gemm(a, b, mode="cr", crt=True),
        "ozaki cpu64 cr": lambda: tcemu.ozaki_gemm(a, b, mode="cr", backend="cpu64"),
        "ozaki complex dgemm-crt cr": lambda: parts(
            tcemu.ozaki_gemm(za, zb, mode="cr", crt=True)),
        "ozaki float32 dgemm-crt cr upward": lambda: tcemu.ozaki_gemm(
            a32, b32, mode="cr", crt=True, rounding="upward"),
        "markidis": lambda: tcemu.markidis_gemm(a32, b32, scheme="markidis"),
        "accurate dot2": lambda: tcemu.accurate_gemm(a, b, method="dot2"),
        "accurate exblas": lambda: tcemu.accurate_gemm(a, b, method="exblas"),
    }


def torch_product(tt, a, b, dp):
    """A B on dp through tcemu.torch (forward and both gradients), concatenated."""
    a, b = a.clone().requires_grad_(), b.clone().requires_grad_()
    d = tt.matmul(a, b, dp)
    d.backward(d.detach())
    return np.concatenate([t.detach().numpy().ravel().astype(np.float64)
                           for t in (d, a.grad, b.grad)])


@pytest.mark.parametrize("mode", list(MODES))
def test_results_do_not_depend_on_the_callers_rounding_mode(rng, mode):
    for name, call in calls(rng).items():
        expected = bits(call())
        got, after = in_mode(MODES[mode], call)
        assert after == MODES[mode], f"{name} changed the caller's rounding mode"
        np.testing.assert_array_equal(bits(got), expected, err_msg=f"{name} rounding {mode}")


def test_results_do_not_depend_on_flush_to_zero_or_denormals_are_zero(rng):
    before = mxcsr()
    for name, call in calls(rng).items():
        expected = bits(call())
        got, during = with_ftz_daz(call)
        assert during & (FTZ | DAZ) == FTZ | DAZ, f"{name} cleared the caller's FTZ/DAZ"
        np.testing.assert_array_equal(bits(got), expected, err_msg=f"{name} under FTZ and DAZ")
    assert mxcsr() == before


def test_results_are_the_same_from_several_threads_at_once(rng):
    entries = calls(rng)
    expected = {name: bits(call()) for name, call in entries.items()}
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        runs = [(name, pool.submit(call)) for _ in range(3) for name, call in entries.items()]
        for name, future in runs:
            np.testing.assert_array_equal(bits(future.result()), expected[name],
                                          err_msg=f"{name} from several threads")
