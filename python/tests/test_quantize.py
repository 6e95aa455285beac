"""quantize_mx() and quantize_nvfp4() against references, bits compared.

torchao's recipes are ported to NumPy float32 below, line by line (to_mx's FLOOR scale, 0.18's
nvfp4_quantize with per_tensor_amax_to_scale, from pytorch/ao
torchao/prototype/mx_formats/{mx_tensor,nvfp4_tensor}.py); test_quantize_torchao.py runs torchao
itself. Element and scale roundings
are ml_dtypes' casts (round to nearest even; the values are clipped to the format's largest
magnitude first, as torchao does, since ml_dtypes' float8_e4m3fn overflows to NaN). The MX scale
is also checked against the spec's formula floor(log2(amax)) - emax through ml_dtypes'
float8_e8m0fnu.
"""

import ml_dtypes
import numpy as np
import pytest

import tcemu

# Element format: (ml_dtypes type, emax, largest magnitude).
ELEMENTS = {
    "e4m3": (ml_dtypes.float8_e4m3fn, 8, 448.0),
    "e5m2": (ml_dtypes.float8_e5m2, 15, 57344.0),
    "e3m2": (ml_dtypes.float6_e3m2fn, 4, 28.0),
    "e2m3": (ml_dtypes.float6_e2m3fn, 2, 7.5),
    "e2m1": (ml_dtypes.float4_e2m1fn, 2, 6.0),
}


def element_codes(values, fmt):
    """values (float64, exact) rounded to nearest even into `fmt`, saturating, as uint8 codes."""
    dtype, _, largest = ELEMENTS[fmt]
    return np.clip(values, -largest, largest).astype(dtype).view(np.uint8)


def mx_reference(x, fmt, block):
    """(codes, scales) of a finite 2-D float32 x, blocks along rows, by the spec's rule."""
    _, emax, _ = ELEMENTS[fmt]
    m, k = x.shape
    s = -(-k // block)
    codes = np.zeros((m, k), np.uint8)
    scales = np.zeros((m, s), np.uint8)
    for i in range(m):
        for j in range(s):
            v = x[i, j * block : (j + 1) * block].astype(np.float64)
            amax = np.max(np.abs(v))
            # floor(log2(amax)) is frexp's exponent - 1; a zero block takes the smallest scale.
            shared = np.frexp(amax)[1] - 1 - emax if amax > 0 else -127
            shared = max(shared, -127)
            scale = np.array([2.0**shared]).astype(ml_dtypes.float8_e8m0fnu)
            scales[i, j] = scale.view(np.uint8)[0]
            codes[i, j * block : (j + 1) * block] = element_codes(np.ldexp(v, -shared), fmt)
    return codes, scales


def torchao_floor_scale(amax, fmt):
    """torchao to_mx, ScaleCalculationMode.FLOOR: the biased exponent field of the fp32 amax
    minus 127 and the element's max power of two, clamped to [-127, 128], plus 127."""
    _, emax, _ = ELEMENTS[fmt]
    field = (np.asarray(amax, np.float32).view(np.uint32) >> 23) & 0xFF
    return np.clip(field.astype(np.int64) - 127 - emax, -127, 128) + 127


def nvfp4_reference(x, block=16):
    """torchao 0.18 nvfp4_quantize(x, 16, per_tensor_amax_to_scale(amax(x))) in NumPy float32, with a
    zero tensor scale made 1.0 (Transformer Engine's rule; torchao writes NaN there)."""
    x32 = x.astype(np.float32)
    m, k = x32.shape
    tensor_scale = np.float32(np.max(np.abs(x32))) / np.float32(448.0 * 6.0)
    if tensor_scale == 0:
        tensor_scale = np.float32(1.0)
    blocks = x32.reshape(m, k // block, block)
    block_scale = np.max(np.abs(blocks), axis=-1) / np.float32(6.0)
    scaled = block_scale / tensor_scale
    scaled_fp8 = np.clip(scaled, np.float32(2.0**-6), np.float32(448.0)).astype(
        ml_dtypes.float8_e4m3fn
    )
    reciprocal = (np.float32(1.0) / tensor_scale) / scaled_fp8.astype(np.float32)
    data = np.clip(blocks * reciprocal[..., None], np.float32(-6.0), np.float32(6.0))
    codes = data.astype(ml_dtypes.float4_e2m1fn).view(np.uint8).reshape(m, k)
    return codes, scaled_fp8.view(np.uint8), tensor_scale


def random_matrix(rng, m, k, spread=40):
    """float32 values over many binades, with exact zeros, fp32 subnormals and ties of e2m1."""
    x = rng.standard_normal((m, k)) * 2.0 ** rng.integers(-spread // 2, spread // 2, (m, 1))
    x *= 2.0 ** rng.integers(-6, 7, (m, k))
    x = x.astype(np.float32)
    x[rng.random((m, k)) < 0.03] = 0.0
    x[0, :4] = np.float32([6.0, 0.25, 2.5, -5.0])  # a block of amax 6 with e2m1 midpoints
    x[1, -3:] = np.float32([2.0**-140, -(2.0**-149), 2.0**-127])  # subnormal fp32
    return x


@pytest.mark.parametrize("fmt", list(ELEMENTS))
@pytest.mark.parametrize("block", [32, 16, 7])
def test_mx_matches_the_spec_and_ml_dtypes(rng, fmt, block):
    x = random_matrix(rng, 24, 96)
    codes, scales = tcemu.quantize_mx(x, fmt, block=block)
    want_codes, want_scales = mx_reference(x, fmt, block)
    assert codes.dtype == np.uint8 and scales.dtype == np.uint8
    np.testing.assert_array_equal(scales, want_scales)
    np.testing.assert_array_equal(codes, want_codes)
    if block == 32:
        amax = np.max(np.abs(x.reshape(24, 3, 32)), axis=-1)
        np.testing.assert_array_equal(scales, torchao_floor_scale(amax, fmt))


def test_mx_hand_worked_block():
    # amax 6 in e2m1: scale 2^0 (code 127); 0.25 and 2.5 are ties (to 0 and 2), 7 saturates.
    x = np.array([6.0, 0.25, 2.5, -5.0, 7.0, 0.5, -0.0, 0.75], np.float32)
    codes, scales = tcemu.quantize_mx(x, "e2m1", block=8)
    assert scales.tolist() == [127]
    assert codes.tolist() == [0x7, 0x0, 0x4, 0xE, 0x7, 0x1, 0x8, 0x2]
    # An all-zero block: code 0 (2^-127); NaN and Inf blocks: 0xFF.
    _, scales = tcemu.quantize_mx(np.array([0.0, 0.0, np.nan, 1.0, np.inf, 1.0], np.float32),
                                  "e4m3", block=2)
    assert scales.tolist() == [0, 0xFF, 0xFF]


def test_mx_axis_and_dtypes(rng):
    x = random_matrix(rng, 40, 20)
    codes, scales = tcemu.quantize_mx(x, "e4m3", axis=0)
    codes_t, scales_t = tcemu.quantize_mx(np.ascontiguousarray(x.T), "e4m3", axis=-1)
    assert codes.shape == (40, 20) and scales.shape == (2, 20)
    np.testing.assert_array_equal(codes, codes_t.T)
    np.testing.assert_array_equal(scales, scales_t.T)
    # bf16 and float16 inputs quantize as their float32 values; a 1-D x is one row.
    b = x.astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(
        tcemu.quantize_mx(b, "e2m1")[0], tcemu.quantize_mx(b.astype(np.float32), "e2m1")[0]
    )
    h = (x * 2.0**-10).astype(np.float16)
    np.testing.assert_array_equal(
        tcemu.quantize_mx(h, "e3m2")[1], tcemu.quantize_mx(h.astype(np.float32), "e3m2")[1]
    )
    row_codes, row_scales = tcemu.quantize_mx(x[3], "e5m2")
    assert row_codes.shape == (20,) and row_scales.shape == (1,)
    np.testing.assert_array_equal(row_codes, tcemu.quantize_mx(x[3:4], "e5m2")[0][0])


@pytest.mark.parametrize("spread", [4, 40])
def test_nvfp4_matches_torchao_recipe(rng, spread):
    x = random_matrix(rng, 32, 64, spread)
    codes, scales, tensor_scale = tcemu.quantize_nvfp4(x)
    want_codes, want_scales, want_tensor_scale = nvfp4_reference(x)
    assert isinstance(tensor_scale, np.float32)
    assert tensor_scale.view(np.uint32) == want_tensor_scale.view(np.uint32)
    np.testing.assert_array_equal(scales, want_scales)
    np.testing.assert_array_equal(codes, want_codes)
    # axis 0 is the transpose's quantization.
    c0, s0, t0 = tcemu.quantize_nvfp4(np.ascontiguousarray(x.T), axis=0)
    np.testing.assert_array_equal(c0, codes.T)
    np.testing.assert_array_equal(s0, scales.T)
    assert t0 == tensor_scale


def test_nvfp4_special_tensors():
    codes, scales, tensor_scale = tcemu.quantize_nvfp4(np.zeros((2, 16), np.float32))
    assert tensor_scale == 1.0 and scales.tolist() == [[0x08], [0x08]] and not codes.any()
    x = np.ones((2, 16), np.float32)
    x[1, 3] = np.inf
    codes, scales, tensor_scale = tcemu.quantize_nvfp4(x)
    assert np.isinf(tensor_scale)
    assert scales.tolist() == [[0x08], [0x7F]]  # 1 / 6 / Inf clamps to 2^-6; Inf / Inf is NaN
    assert codes[0].tolist() == [0] * 16 and codes[1].tolist() == [0x7] * 16


def test_bad_arguments():
    x = np.ones((2, 32), np.float32)
    with pytest.raises(TypeError, match="float64"):
        tcemu.quantize_mx(x.astype(np.float64), "e4m3")
    with pytest.raises(ValueError, match="not an MX element format"):
        tcemu.quantize_mx(x, "fp16")
    with pytest.raises(ValueError, match="block is 0"):
        tcemu.quantize_mx(x, "e4m3", block=0)
    with pytest.raises(ValueError, match="axis 2"):
        tcemu.quantize_nvfp4(x, axis=2)
    with pytest.raises(ValueError, match="3-D"):
        tcemu.quantize_nvfp4(np.ones((2, 2, 16), np.float32))
