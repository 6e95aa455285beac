"""matmul(): the emulated GEMM against mma() per element, views, DLPack, ml_dtypes, errors."""

import ml_dtypes
import numpy as np
import pytest
from conftest import from_float, matmul_by_mma, random_bits

import tcemu

CASES = [
    ("sm70", "fp16", "fp32"),
    ("sm80", "bf16", "fp32"),
    ("sm80", "tf32", "fp32"),
    ("sm89", "e4m3", "fp32"),
    ("sm90", "fp16", "fp32"),
    ("sm90", "fp16", "fp16"),
    ("sm90", "e5m2", "fp16"),
    ("sm100", "bf16", "fp32"),
]


@pytest.mark.parametrize("arch,fmt,acc", CASES)
def test_matmul_equals_mma_per_element(rng, arch, fmt, acc):
    dp = tcemu.preset(arch, fmt, acc)
    a = random_bits(rng, (7, 45), fmt)  # K = 45: chained and partial instructions
    b = random_bits(rng, (45, 5), fmt)
    c = random_bits(rng, (7, 5), acc)
    d = tcemu.matmul(a, b, c, datapath=dp, beta=1.0, c_input="initial_accumulator")
    bits = {"fp32": np.uint32, "fp16": np.uint16}[acc]
    assert d.dtype == {"fp32": np.float32, "fp16": np.float16}[acc] and d.shape == (7, 5)
    np.testing.assert_array_equal(d.view(bits), matmul_by_mma(dp, a, b, c).view(bits))


def test_epilogue_alpha_beta(rng):
    dp = tcemu.preset("sm90", "fp16", "fp32")
    a = from_float(rng.standard_normal((4, 16)), "fp16")
    b = from_float(rng.standard_normal((16, 3)), "fp16")
    c = rng.standard_normal((4, 3)).astype(np.float32)
    acc = matmul_by_mma(dp, a, b, np.zeros((4, 3), np.float32)).astype(np.float64)
    # D = RN_fp32(fma(alpha, acc, RN_fp32(beta C))): exact in float64 for these magnitudes, rounded.
    expected = (2.0 * acc + (np.float32(0.5) * c).astype(np.float64)).astype(np.float32)
    d = tcemu.matmul(a, b, c, datapath=dp, alpha=2.0, beta=0.5)
    np.testing.assert_array_equal(d, expected)


def test_strided_and_transposed_views_give_the_contiguous_bits(rng):
    dp = tcemu.preset("sm90", "fp16", "fp32")
    big = from_float(rng.standard_normal((40, 80)), "fp16")
    views = {
        "row-major slice": big[3:11, 5:38],
        "column-major": np.asfortranarray(big[:8, :33]),
        "transposed": big[:33, :8].T,
        "strided rows": big[::5, :33],
        "strided both (copied)": big[::5, ::1][:, ::-1][:, :33],
        "every other column (copied)": big[:8, :66:2],
    }
    b = from_float(rng.standard_normal((33, 6)), "fp16")
    for name, a in views.items():
        expected = tcemu.matmul(np.ascontiguousarray(a), b, datapath=dp)
        got = tcemu.matmul(a, np.asfortranarray(b), datapath=dp)
        np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32), err_msg=name)


def test_dlpack_producer(rng):
    class Tensor:  # anything with __dlpack__ and __dlpack_device__, as a PyTorch tensor
        def __init__(self, array):
            self.array = array

        def __dlpack__(self, **kwargs):
            return self.array.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.array.__dlpack_device__()

    dp = tcemu.preset("sm80", "tf32", "fp32")
    a = from_float(rng.standard_normal((5, 20)), "tf32")
    b = from_float(rng.standard_normal((20, 4)), "tf32")
    expected = tcemu.matmul(a, b, datapath=dp)
    got = tcemu.matmul(Tensor(a), Tensor(b[:, ::1].T.copy().T), datapath=dp)
    np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32))


def test_a_batch_gives_the_bits_of_one_call_per_element(rng):
    dp = tcemu.preset("sm70", "fp16", "fp32")
    a = from_float(rng.standard_normal((4, 7, 40)), "fp16")
    b = from_float(rng.standard_normal((4, 6, 40)), "fp16").transpose(0, 2, 1)  # column-major
    c = rng.standard_normal((4, 7, 6)).astype(np.float32)
    for c_input, alpha, beta in [("epilogue", 2.0, 0.5), ("initial_accumulator", 1.0, 1.0)]:
        d = tcemu.matmul(a, b, c, datapath=dp, alpha=alpha, beta=beta, c_input=c_input)
        assert d.shape == (4, 7, 6) and d.dtype == np.float32 and d.flags.c_contiguous
        for i in range(4):
            one = tcemu.matmul(a[i], b[i], c[i], datapath=dp, alpha=alpha, beta=beta,
                               c_input=c_input)
            np.testing.assert_array_equal(d[i].view(np.uint32), one.view(np.uint32))
    # A batch whose elements are strided views of a larger array: each read as its 2-D self.
    big = from_float(rng.standard_normal((3, 9, 50)), "fp16")
    strided = big[:, ::2, 5:45]
    d = tcemu.matmul(strided, b[:3], datapath=dp)
    for i in range(3):
        np.testing.assert_array_equal(d[i], tcemu.matmul(np.ascontiguousarray(strided[i]), b[i],
                                                         datapath=dp))
    assert tcemu.matmul(a[:0], b[:0], datapath=dp).shape == (0, 7, 6)


def test_a_batch_of_block_scaled_products_takes_a_batch_of_scales(rng):
    dp = tcemu.preset("sm100", "e2m1", "fp32", "tcgen05.mxf4nvf4.block16.ue4m3")  # NVFP4
    batch, m, n, k = 3, 5, 4, 64
    a = rng.integers(0, 16, (batch, m, k), dtype=np.uint8)
    b = rng.integers(0, 16, (batch, k, n), dtype=np.uint8)
    scale_a = rng.integers(0x30, 0x40, (batch, m, k // 16), dtype=np.uint8)
    scale_b = rng.integers(0x30, 0x40, (batch, k // 16, n), dtype=np.uint8)
    d = tcemu.matmul(a, b, datapath=dp, scale_a=scale_a, scale_b=scale_b)
    for i in range(batch):
        one = tcemu.matmul(a[i], b[i], datapath=dp, scale_a=scale_a[i], scale_b=scale_b[i])
        np.testing.assert_array_equal(d[i].view(np.uint32), one.view(np.uint32))
    with pytest.raises(ValueError, match=r"scale_b: a is a batch of 3 .* got 2-D"):
        tcemu.matmul(a, b, datapath=dp, scale_a=scale_a, scale_b=scale_b[0])


def test_a_batch_needs_every_array_batched_alike():
    dp = tcemu.preset("sm90", "fp16", "fp32")
    a = np.zeros((3, 4, 8), np.float16)
    with pytest.raises(ValueError, match=r"b: a is a batch of 3 .* got 3-D of batch 2"):
        tcemu.matmul(a, np.zeros((2, 8, 5), np.float16), datapath=dp)
    with pytest.raises(ValueError, match=r"b: a is a batch of 3 .* got 2-D"):
        tcemu.matmul(a, np.zeros((8, 5), np.float16), datapath=dp)
    with pytest.raises(ValueError, match=r"c: a is a batch of 3 .* got 2-D"):
        tcemu.matmul(a, np.zeros((3, 8, 5), np.float16), np.zeros((4, 5), np.float32),
                     datapath=dp, beta=1.0)
    with pytest.raises(ValueError, match="a: expected a 2-D array or a batch of them"):
        tcemu.matmul(a[None], a[None], datapath=dp)
    with pytest.raises(ValueError, match="emulated_gemm: B is 4 x 5, expected 8 x"):
        tcemu.matmul(a, np.zeros((3, 4, 5), np.float16), datapath=dp)


@pytest.mark.parametrize(
    "fmt,dtype,arch",
    [("bf16", ml_dtypes.bfloat16, "sm80"), ("e4m3", ml_dtypes.float8_e4m3fn, "sm89"),
     ("e5m2", ml_dtypes.float8_e5m2, "sm90")],
)
def test_ml_dtypes_inputs_are_taken_by_their_bits(rng, fmt, dtype, arch):
    dp = tcemu.preset(arch, fmt, "fp32")
    a = rng.standard_normal((6, 40)).astype(dtype)
    b = rng.standard_normal((40, 3)).astype(dtype)
    bits = np.uint16 if fmt == "bf16" else np.uint8
    typed = tcemu.matmul(a, b, datapath=dp)
    by_bits = tcemu.matmul(a.view(bits), b.view(bits), datapath=dp)
    np.testing.assert_array_equal(typed.view(np.uint32), by_bits.view(np.uint32))
    # Small values of few bits: the product is exact in fp32 whatever the datapath.
    small_a = np.ones((2, 4), dtype)
    small_b = np.full((4, 2), 0.5, dtype)
    np.testing.assert_array_equal(tcemu.matmul(small_a, small_b, datapath=dp), np.full((2, 2), 2.0))


def test_takeout_and_threads_keep_the_bits(rng):
    dp = tcemu.preset("sm90", "fp16", "fp32")
    a = from_float(rng.standard_normal((9, 96)), "fp16")
    b = from_float(rng.standard_normal((96, 7)), "fp16")
    one = tcemu.matmul(a, b, datapath=dp, threads=1)
    np.testing.assert_array_equal(one, tcemu.matmul(a, b, datapath=dp, threads=3))
    out = tcemu.matmul(a, b, datapath=dp, takeout_every_k=32)
    assert out.shape == (9, 7) and np.all(np.isfinite(out))
    with pytest.raises(ValueError, match="takeout_every_k"):
        tcemu.matmul(a, b, datapath=dp, takeout_every_k=5)


def test_errors_carry_the_cpp_message():
    dp = tcemu.preset("sm90", "fp16", "fp32")
    a = np.zeros((4, 8), np.float16)
    with pytest.raises(TypeError, match="a: dtype float64 does not hold fp16"):
        tcemu.matmul(a.astype(np.float64), a.T, datapath=dp)
    with pytest.raises(TypeError, match="a: dtype bfloat16 does not hold fp16"):
        tcemu.matmul(a.astype(ml_dtypes.bfloat16), a.T, datapath=dp)
    with pytest.raises(TypeError, match="uint32 does not hold fp16"):
        tcemu.matmul(a.view(np.uint16).astype(np.uint32), a.T, datapath=dp)
    with pytest.raises(TypeError, match="int32 is not supported"):
        tcemu.matmul(a.astype(np.int32), a.T, datapath=dp)
    with pytest.raises(ValueError, match="emulated_gemm: B is 4 x 4, expected 8 x"):
        tcemu.matmul(a, a[:, :4], datapath=dp)
    with pytest.raises(ValueError, match="b: expected a 2-D array, got 3-D"):
        tcemu.matmul(a, np.zeros((8, 2, 2), np.float16), datapath=dp)
    with pytest.raises(ValueError, match="C"):
        tcemu.matmul(a, a.T, np.zeros((3, 3), np.float32), datapath=dp, beta=1.0)
    with pytest.raises(ValueError, match="c_input must be"):
        tcemu.matmul(a, a.T, datapath=dp, c_input="bias")
    with pytest.raises(ValueError, match="alpha"):
        tcemu.matmul(a, a.T, np.zeros((4, 4), np.float32), datapath=dp, alpha=2.0,
                     c_input="initial_accumulator")


def test_backend_words():
    dp = tcemu.preset("sm90", "fp16", "fp32")
    a = np.zeros((2, 2), np.float16)
    with pytest.raises(ValueError, match="backend must be 'emulator' or 'gpu', got 'cpu64'"):
        tcemu.matmul(a, a, datapath=dp, backend="cpu64")
    with pytest.raises(ValueError, match="backend must be 'emulator', 'cpu64' or 'gpu'"):
        tcemu.ozaki_gemm(a.astype(np.float64), a.astype(np.float64), backend="tpu")
