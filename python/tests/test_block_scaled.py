"""FP6/FP4 and block-scaled MMA from Python: formats against ml_dtypes, NVFP4 and MXFP8 GEMMs
against mma() per element and against the exact product, packed FP4, the Datapath fields, errors."""

from fractions import Fraction

import pathlib
import re

import ml_dtypes
import numpy as np
import pytest

import tcemu

NVFP4 = ("sm100", "e2m1", "fp32", "tcgen05.mxf4nvf4.block16.ue4m3")
MXFP8 = ("sm100", "e4m3", "fp32", "tcgen05.mxf8f6f4.block32")
MXFP4 = ("sm100", "e2m1", "fp32", "tcgen05.mxf4.block32")

ELEMENTS = {
    "e2m1": ml_dtypes.float4_e2m1fn,
    "e2m3": ml_dtypes.float6_e2m3fn,
    "e3m2": ml_dtypes.float6_e3m2fn,
    "e4m3": ml_dtypes.float8_e4m3fn,
}
UE4M3_ONE = 0x38  # 2^(7 - 7)
UE8M0_ONE = 127  # 2^(127 - 127)


def codes(values, fmt):
    """`values` rounded to `fmt` by ml_dtypes, as their codes (one a byte)."""
    return np.asarray(values, np.float64).astype(ELEMENTS[fmt]).view(np.uint8)


def value(code, fmt):
    return Fraction(float(np.array([code], np.uint8).view(ELEMENTS[fmt])[0]))


def scale_value(code, fmt):
    if fmt == "ue8m0":
        return Fraction(2) ** (int(code) - 127)
    return value(int(code) & 0x7F, "e4m3")  # ue4m3: e4m3 without its sign bit


def exponent(x):
    """floor(log2(x)) of a positive rational."""
    e = x.numerator.bit_length() - x.denominator.bit_length()
    return e - 1 if Fraction(2) ** e > x else e


def rz_fp32(x):
    """The exact rational x rounded toward zero to fp32 (a normal or zero result), as float32."""
    if x == 0:
        return np.float32(0.0)
    e = exponent(abs(x))
    assert -126 <= e <= 127, x
    ulp = Fraction(2) ** (e - 23)
    out = np.float32(float(abs(x) // ulp * ulp))  # < 2^24 ulps: exact
    return -out if x < 0 else out


def scaled_mma_by_cases(dp, a, b, c, scale_a, scale_b):
    """Every element of the scaled A B + C as one mma() case."""
    m, n = a.shape[0], b.shape[1]
    return tcemu.mma(
        dp,
        np.repeat(a, n, axis=0),
        np.tile(b.T, (m, 1)),
        c.reshape(-1),
        scale_a=np.repeat(scale_a, n, axis=0),
        scale_b=np.tile(scale_b.T, (m, 1)),
    ).reshape(m, n)


def bits(x):
    return np.asarray(x).view(np.uint32)


# --- formats --------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt,count", [("e2m1", 16), ("e2m3", 64), ("e3m2", 64)])
def test_every_element_code_decodes_to_ml_dtypes_value(fmt, count):
    # d = code * 1 + 0 on the kind::f8f6f4 datapath of that format is the code's value, exactly.
    dp = tcemu.preset("sm100", fmt, "fp32", "tcgen05")
    a = np.arange(count, dtype=np.uint8).reshape(-1, 1)
    one = np.full_like(a, codes([1.0], fmt)[0])
    zeros = np.zeros(count, np.float32)
    d = tcemu.mma(dp, a, one, zeros)
    expected = a.view(ELEMENTS[fmt]).astype(np.float32).reshape(-1)
    np.testing.assert_array_equal(d, expected)  # -0 == +0: the datapath's zero is +0
    # The ml_dtypes array is read as its codes, without a copy of another meaning.
    np.testing.assert_array_equal(bits(tcemu.mma(dp, a.view(ELEMENTS[fmt]), one, zeros)), bits(d))
    assert tcemu.Format(fmt).special == "finite" and tcemu.Format(fmt).container_bits == (
        4 if fmt == "e2m1" else 6)


def test_every_ue8m0_code_decodes_to_ml_dtypes_value():
    # One product 1 * 1 scaled by 2^(code - 127) and by 1: d is the scale's value; 0xFF is NaN.
    dp = tcemu.preset(*MXFP8)
    one = np.zeros((256, 32), np.uint8)
    one[:, 0] = codes([1.0], "e4m3")[0]
    scale_a = np.arange(256, dtype=np.uint8).reshape(-1, 1)
    scale_b = np.full_like(scale_a, UE8M0_ONE)
    d = tcemu.mma(dp, one, one, np.zeros(256, np.float32), scale_a=scale_a, scale_b=scale_b)
    expected = scale_a.view(ml_dtypes.float8_e8m0fnu).astype(np.float64).reshape(-1)
    np.testing.assert_array_equal(d[:255].astype(np.float64), expected[:255])
    assert np.isnan(d[255]) and np.isnan(expected[255])
    typed = tcemu.mma(dp, one, one, np.zeros(256, np.float32),
                      scale_a=scale_a.view(ml_dtypes.float8_e8m0fnu), scale_b=scale_b)
    np.testing.assert_array_equal(bits(typed), bits(d))


def test_every_ue4m3_code_is_e4m3_without_its_sign():
    dp = tcemu.preset(*NVFP4)
    a = np.zeros((256, 64), np.uint8)
    a[:, 0] = codes([1.0], "e2m1")[0]
    scale_a = np.repeat(np.arange(256, dtype=np.uint8).reshape(-1, 1), 4, axis=1)
    scale_b = np.full_like(scale_a, UE4M3_ONE)
    d = tcemu.mma(dp, a, a, np.zeros(256, np.float32), scale_a=scale_a, scale_b=scale_b)
    magnitude = (scale_a[:, 0] & 0x7F).view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    np.testing.assert_array_equal(d, magnitude)  # 0x7F and 0xFF: NaN both
    assert np.isnan(d[0x7F]) and np.isnan(d[0xFF])
    # float8_e4m3fn scales: the sign is ignored, -x scales as x.
    negative = scale_a | 0x80
    typed = tcemu.mma(dp, a, a, np.zeros(256, np.float32),
                      scale_a=negative.view(ml_dtypes.float8_e4m3fn), scale_b=scale_b)
    np.testing.assert_array_equal(bits(typed), bits(d))


def test_formats_table_and_scale_formats():
    names = [f.name for f in tcemu.formats()]
    assert names[-5:] == ["e3m2", "e2m3", "e2m1", "ue8m0", "ue4m3"]
    assert tcemu.Format("ue8m0").special == "e8m0" and not tcemu.Format("ue8m0").is_signed
    assert tcemu.Format("ue4m3").is_scale and not tcemu.Format("e4m3").is_scale
    assert tcemu.Format("ue4m3").container_bits == 7


# --- the Datapath fields ----------------------------------------------------------------------


def test_block_scaled_fields_change_one_at_a_time():
    dp = tcemu.preset(*NVFP4)
    assert (dp.scale_block, dp.scale_a, dp.scale_b, dp.group_terms, dp.nan_scale) == (
        16, tcemu.Format("ue4m3"), tcemu.Format("ue4m3"), 16, "poison")
    assert dp.block_scaled and dp.input_b is None and dp.b_format == tcemu.Format("e2m1")
    assert dp.alignment_fraction_bits == 35
    format_fields = {"scale_a", "scale_b", "input_b"}
    for field, new in [("alignment_fraction_bits", 30), ("scale_block", 32), ("scale_a", "ue8m0"),
                       ("scale_b", "ue8m0"), ("group_terms", 8), ("nan_scale", "ignore-zero"),
                       ("input_b", "e2m3")]:
        changed = dp.copy()
        setattr(changed, field, new)
        assert getattr(changed, field) == (tcemu.Format(new) if field in format_fields else new)
        assert changed != dp, field
        changed.validate()
        assert f"{field}={new}" in repr(changed), field
    with pytest.raises(ValueError, match="nan_scale must be one of 'poison', 'ignore-zero'"):
        dp.nan_scale = "quiet"
    unscaled = dp.copy()
    unscaled.scale_block = 0
    assert not unscaled.block_scaled and "scale_block" not in repr(unscaled)
    bad = dp.copy()
    bad.scale_a = "e4m3"
    with pytest.raises(ValueError, match="scale formats must be ue8m0 or ue4m3"):
        bad.validate()
    bad.scale_a = None
    assert bad.scale_a is None


def test_preset_takes_input_b_for_kind_f8f6f4_pairs():
    dp = tcemu.preset("sm100", "e4m3", "fp32", "tcgen05", input_b="e2m1")
    assert dp.input == tcemu.Format("e4m3") and dp.input_b == tcemu.Format("e2m1")
    assert "input_b=e2m1" in repr(dp)
    pairs = [e for e in tcemu.presets() if e.datapath.input_b is not None]
    assert pairs and "e5m2 x e4m3 -> fp32" in repr(pairs[0])
    assert "tcgen05.mxf4nvf4.block16.ue4m3" in tcemu.instruction_names("sm100", "e2m1", "fp32")
    assert tcemu.instruction_names("sm100", "e4m3", "fp32", input_b="e2m1")
    same = dp.copy()
    same.input_b = None
    assert same.b_format == tcemu.Format("e4m3") and same != dp


def test_mixed_formats_read_b_in_its_own_format(rng):
    dp = tcemu.preset("sm100", "e4m3", "fp32", "tcgen05", input_b="e2m1")
    a = codes(rng.standard_normal((3, 40)), "e4m3")
    b = codes(rng.standard_normal((40, 2)) * 2, "e2m1")
    d = tcemu.matmul(a.view(ml_dtypes.float8_e4m3fn), b.view(ml_dtypes.float4_e2m1fn), datapath=dp)
    m, n = 3, 2
    by_mma = tcemu.mma(dp, np.repeat(a, n, axis=0), np.tile(b.T, (m, 1)), np.zeros(m * n,
                                                                                np.float32))
    np.testing.assert_array_equal(bits(d), bits(by_mma.reshape(m, n)))
    with pytest.raises(TypeError, match="b: dtype float8_e4m3fn does not hold e2m1"):
        tcemu.matmul(a, a.T.copy().view(ml_dtypes.float8_e4m3fn), datapath=dp)


# --- NVFP4 and MXFP8 GEMMs ----------------------------------------------------------------------


@pytest.mark.parametrize("k", [64, 160, 40])  # one instruction; chained; a partial scale block
def test_nvfp4_matmul_equals_mma_per_element(rng, k):
    dp = tcemu.preset(*NVFP4)
    m, n, s = 5, 4, -(-k // 16)
    a = rng.integers(0, 16, (m, k), dtype=np.uint8)
    b = rng.integers(0, 16, (k, n), dtype=np.uint8)
    # Any ue4m3 code: subnormal, zero, NaN (0x7F) and the ignored bit 7.
    scale_a = rng.integers(0, 256, (m, s), dtype=np.uint8)
    scale_b = rng.integers(0x20, 0x48, (s, n), dtype=np.uint8)
    c = rng.standard_normal((m, n)).astype(np.float32)
    d = tcemu.matmul(a, b, c, datapath=dp, scale_a=scale_a, scale_b=scale_b, beta=1.0,
                     c_input="initial_accumulator")
    np.testing.assert_array_equal(bits(d), bits(scaled_mma_by_cases(dp, a, b, c, scale_a,
                                                                     scale_b)))
    # The ml_dtypes arrays give the same bits.
    typed = tcemu.matmul(a.view(ml_dtypes.float4_e2m1fn), b.view(ml_dtypes.float4_e2m1fn), c,
                         datapath=dp, scale_a=scale_a.view(ml_dtypes.float8_e4m3fn),
                         scale_b=scale_b, beta=1.0, c_input="initial_accumulator")
    np.testing.assert_array_equal(bits(typed), bits(d))


def test_mxfp8_matmul_equals_mma_per_element(rng):
    dp = tcemu.preset(*MXFP8)
    m, n, k = 4, 3, 80
    a = codes(rng.standard_normal((m, k)) * 2.0 ** rng.integers(-6, 6, (m, k)), "e4m3")
    b = codes(rng.standard_normal((k, n)) * 2.0 ** rng.integers(-6, 6, (k, n)), "e4m3")
    scale_a = rng.integers(100, 150, (m, 3), dtype=np.uint8).view(ml_dtypes.float8_e8m0fnu)
    scale_b = rng.integers(100, 150, (3, n), dtype=np.uint8)
    c = np.zeros((m, n), np.float32)
    d = tcemu.matmul(a.view(ml_dtypes.float8_e4m3fn), b, datapath=dp, scale_a=scale_a,
                     scale_b=scale_b)
    np.testing.assert_array_equal(
        bits(d), bits(scaled_mma_by_cases(dp, a, b, c, scale_a.view(np.uint8), scale_b)))


def exact_scaled(a, b, c, scale_a, scale_b, fmt, scale_fmt, block):
    """The exact scaled product A B + C in Fractions, from the codes (independent of tcemu)."""
    m, k = a.shape
    n = b.shape[1]
    va = [[value(x, fmt) for x in row] for row in a]
    vb = [[value(x, fmt) for x in row] for row in b]
    out = []
    for i in range(m):
        row = []
        for j in range(n):
            total = Fraction(float(c[i, j]))
            for l in range(k):
                total += (va[i][l] * vb[l][j] * scale_value(scale_a[i, l // block], scale_fmt)
                          * scale_value(scale_b[l // block, j], scale_fmt))
            row.append(total)
        out.append(row)
    return out


def lsb_exponent(x):
    """t where the nonzero rational x is an odd multiple of 2^t."""
    def twos(v):
        return (v & -v).bit_length() - 1
    return twos(abs(x.numerator)) - twos(x.denominator)


@pytest.mark.parametrize(
    "preset_args,fmt,scale_fmt,block,k",
    [(NVFP4, "e2m1", "ue4m3", 16, 64), (MXFP8, "e4m3", "ue8m0", 32, 32),
     (MXFP4, "e2m1", "ue8m0", 32, 64)],
)
def test_one_instruction_is_the_exact_product_rounded_toward_zero(rng, preset_args, fmt,
                                                                  scale_fmt, block, k):
    # The scales of a row (of a column) are equal along k, and one product, at k = 0, has a
    # finer last bit than all others (0.5 * 0.5 among integer e2m1 products; 9/64 * 9/64 among
    # e4m3 products of 2^-2 to 4), with odd scale significands: the exact sum of the products is
    # an odd multiple of 2^L. c is 1.5 to 2 times 2^(L + 24), twice the products' sum: c has
    # the largest exponent, the alignment grid below it (F = 35 bits for FP4, 25 for FP8)
    # holds every bit, and the sum, at least 2^(L + 24) and an odd multiple of 2^L, needs 25 or
    # more bits. So the instruction's result is the exact sum rounded toward zero, never exact.
    dp = tcemu.preset(*preset_args)
    m, n, s = 6, 5, k // block
    if fmt == "e2m1":
        integers = np.array([2, 4, 5, 6, 7], np.uint8)  # 1, 2, 3, 4, 6
        a = rng.choice(integers, (m, k)) | rng.choice([0, 8], (m, k)).astype(np.uint8)
        b = rng.choice(integers, (k, n)) | rng.choice([0, 8], (k, n)).astype(np.uint8)
        fine = codes([0.5], "e2m1")[0]
    else:
        a = codes(rng.uniform(0.25, 4, (m, k)) * rng.choice([-1, 1], (m, k)), "e4m3")
        b = codes(rng.uniform(0.25, 4, (k, n)) * rng.choice([-1, 1], (k, n)), "e4m3")
        fine = codes([9 / 64], "e4m3")[0]
    a[:, 0], b[0, :] = fine, fine
    if scale_fmt == "ue4m3":
        row_scales = rng.choice(np.arange(0x31, 0x40, 2, dtype=np.uint8), (m, 1))  # odd, 0.5 to 2
        col_scales = rng.choice(np.arange(0x31, 0x40, 2, dtype=np.uint8), (1, n))
    else:
        row_scales = rng.integers(120, 135, (m, 1), dtype=np.uint8)
        col_scales = rng.integers(120, 135, (1, n), dtype=np.uint8)
    scale_a = np.repeat(row_scales, s, axis=1)
    scale_b = np.repeat(col_scales, s, axis=0)
    products = exact_scaled(a, b, np.zeros((m, n)), scale_a, scale_b, fmt, scale_fmt, block)
    lsb = [[lsb_exponent(x) for x in row] for row in products]
    assert all(abs(products[i][j]) < Fraction(2) ** (lsb[i][j] + 23)
               for i in range(m) for j in range(n))
    c = np.array([[rng.choice([-1, 1]) * (1.5 + rng.uniform() / 2) * 2.0 ** (lsb[i][j] + 24)
                   for j in range(n)] for i in range(m)]).astype(np.float32)
    exact = [[products[i][j] + Fraction(float(c[i, j])) for j in range(n)] for i in range(m)]
    expected = np.array([[rz_fp32(x) for x in row] for row in exact], np.float32)
    d = tcemu.matmul(a, b, c, datapath=dp, scale_a=scale_a, scale_b=scale_b, beta=1.0,
                     c_input="initial_accumulator")
    np.testing.assert_array_equal(bits(d), bits(expected))
    assert all(Fraction(float(expected[i, j])) != exact[i][j] for i in range(m) for j in range(n))
    np.testing.assert_array_equal(bits(d), bits(scaled_mma_by_cases(dp, a, b, c, scale_a,
                                                                     scale_b)))


def test_one_field_changed_changes_the_bits(rng):
    # Fewer fraction bits on the alignment grid truncate the small groups: F = 35 -> 2.
    dp = tcemu.preset(*NVFP4)
    a = rng.integers(0, 16, (8, 64), dtype=np.uint8)
    b = rng.integers(0, 16, (64, 8), dtype=np.uint8)
    scale_a = rng.integers(0x20, 0x50, (8, 4), dtype=np.uint8)
    scale_b = rng.integers(0x20, 0x50, (4, 8), dtype=np.uint8)
    narrow = dp.copy()
    narrow.alignment_fraction_bits = 2
    wide = tcemu.matmul(a, b, datapath=dp, scale_a=scale_a, scale_b=scale_b)
    cut = tcemu.matmul(a, b, datapath=narrow, scale_a=scale_a, scale_b=scale_b)
    assert (bits(wide) != bits(cut)).any()
    np.testing.assert_array_equal(
        bits(cut), bits(scaled_mma_by_cases(narrow, a, b, np.zeros((8, 8), np.float32), scale_a,
                                            scale_b)))


# --- packed FP4 ---------------------------------------------------------------------------------


def pack_k(x, axis, high_first=True):
    """Two FP4 codes a byte along `axis`: k = 2j in the high nibble, 2j + 1 in the low one (or
    the other way round)."""
    even = np.take(x, range(0, x.shape[axis], 2), axis=axis)
    odd = np.take(x, range(1, x.shape[axis], 2), axis=axis)
    return (even << 4 | odd if high_first else odd << 4 | even).astype(np.uint8)


def test_packed_fp4_gives_the_unpacked_bits(rng):
    dp = tcemu.preset(*NVFP4)
    m, n, k = 4, 6, 128
    a = rng.integers(0, 16, (m, k), dtype=np.uint8)
    b = rng.integers(0, 16, (k, n), dtype=np.uint8)
    scale_a = rng.integers(0x28, 0x48, (m, 8), dtype=np.uint8)
    scale_b = rng.integers(0x28, 0x48, (8, n), dtype=np.uint8)
    plain = tcemu.matmul(a, b, datapath=dp, scale_a=scale_a, scale_b=scale_b)
    pa, pb = pack_k(a, 1), pack_k(b, 0)
    assert pa.shape == (m, k // 2) and pb.shape == (k // 2, n)
    packed = tcemu.matmul(pa, pb, datapath=dp, scale_a=scale_a, scale_b=scale_b, packed=True)
    np.testing.assert_array_equal(bits(packed), bits(plain))
    # Any strides: a transposed (column-major) packed B.
    packed_t = tcemu.matmul(pa, np.asfortranarray(pb), datapath=dp, scale_a=scale_a,
                            scale_b=scale_b, packed=True)
    np.testing.assert_array_equal(bits(packed_t), bits(plain))
    low = tcemu.matmul(pack_k(a, 1, False), pack_k(b, 0, False), datapath=dp, scale_a=scale_a,
                       scale_b=scale_b, packed="low_first")
    np.testing.assert_array_equal(bits(low), bits(plain))
    c = np.zeros(m, np.float32)
    one = tcemu.mma(dp, pa, pack_k(b[:, :m].T.copy(), 1), c, scale_a=scale_a,
                    scale_b=scale_b[:, :m].T.copy(), packed=True)
    np.testing.assert_array_equal(bits(one), bits(np.diagonal(plain[:, :m]).copy()))


def test_packed_byte_holds_k_even_in_the_high_nibble():
    # Byte 0x2C: k = 0 is 0x2 (1.0), k = 1 is 0xC (-2.0); times b = (1, 6): 1 - 12.
    dp = tcemu.preset(*MXFP4)
    a = np.zeros((1, 32), np.uint8)
    a[0, 0] = 0x2C
    b = np.zeros((64, 1), np.uint8)
    b[0, 0], b[1, 0] = codes([1.0], "e2m1")[0], codes([6.0], "e2m1")[0]
    ones = np.full((1, 2), UE8M0_ONE, np.uint8)
    d = tcemu.matmul(a, pack_k(b, 0), datapath=dp, scale_a=ones, scale_b=ones.T.copy(),
                     packed=True)
    assert d[0, 0] == 1.0 - 12.0
    # 'low_first' reads the same byte as k = 0: -2.0, k = 1: 1.0.
    d = tcemu.matmul(a, pack_k(b, 0, False), datapath=dp, scale_a=ones, scale_b=ones.T.copy(),
                     packed="low_first")
    assert d[0, 0] == -2.0 + 6.0


# --- errors -------------------------------------------------------------------------------------


def test_errors_name_the_argument():
    dp = tcemu.preset(*NVFP4)
    a = np.zeros((4, 64), np.uint8)
    b = np.zeros((64, 3), np.uint8)
    sa = np.full((4, 4), UE4M3_ONE, np.uint8)
    sb = np.full((4, 3), UE4M3_ONE, np.uint8)
    with pytest.raises(ValueError, match=r"block-scaled \(scale_block = 16, ue4m3/ue4m3 scales\):"
                                         r" pass scale_a and scale_b"):
        tcemu.matmul(a, b, datapath=dp)
    with pytest.raises(ValueError, match="pass scale_b"):
        tcemu.matmul(a, b, datapath=dp, scale_a=sa)
    with pytest.raises(ValueError, match=r"scale_a must be m x ceil\(k / scale_block\) = 4 x 4, "
                                         r"got 4 x 3"):
        tcemu.matmul(a, b, datapath=dp, scale_a=sa[:, :3], scale_b=sb)
    with pytest.raises(ValueError, match=r"scale_b must be ceil\(k / scale_block\) x n = 4 x 3, "
                                         r"got 3 x 4"):
        tcemu.matmul(a, b, datapath=dp, scale_a=sa, scale_b=sb.T.copy()[:3])
    with pytest.raises(ValueError, match="scale_a: expected a 2-D array, got 1-D"):
        tcemu.matmul(a, b, datapath=dp, scale_a=sa[0], scale_b=sb)
    with pytest.raises(TypeError, match="scale_a: dtype float8_e8m0fnu does not hold ue4m3 "
                                        r"values; pass float8_e4m3fn \(its sign ignored\)"):
        tcemu.matmul(a, b, datapath=dp, scale_a=sa.view(ml_dtypes.float8_e8m0fnu), scale_b=sb)
    with pytest.raises(TypeError, match="scale_b: dtype float32 does not hold ue4m3"):
        tcemu.matmul(a, b, datapath=dp, scale_a=sa, scale_b=sb.astype(np.float32))
    with pytest.raises(TypeError, match="a: dtype float6_e2m3fn does not hold e2m1 values; pass "
                                        "float4_e2m1fn or uint8"):
        tcemu.matmul(a.view(ml_dtypes.float6_e2m3fn), b, datapath=dp, scale_a=sa, scale_b=sb)
    bad = a.copy()
    bad[2, 7] = 0x1F
    with pytest.raises(ValueError, match=r"a: byte 0x1f at \[2, 7\] does not hold an e2m1 code "
                                         r"\(4 bits, 0 to 15\)"):
        tcemu.matmul(bad, b, datapath=dp, scale_a=sa, scale_b=sb)
    with pytest.raises(ValueError, match="scale_a given, but the datapath is not block-scaled"):
        tcemu.matmul(a, b, datapath=tcemu.preset("sm100", "e2m1", "fp32", "tcgen05"),
                     scale_a=sa, scale_b=sb)
    with pytest.raises(TypeError, match="a: packed FP4 is a uint8 array of two e2m1 codes a byte, "
                                        r"got dtype float4_e2m1fn \(one value a byte"):
        tcemu.matmul(a[:, :32].view(ml_dtypes.float4_e2m1fn), b[:32], datapath=dp, scale_a=sa,
                     scale_b=sb, packed=True)
    with pytest.raises(ValueError, match=r"packed FP4 asked for, but neither a \(e4m3\) nor b "
                                         r"\(e4m3\) is e2m1"):
        tcemu.matmul(a, b, datapath=tcemu.preset(*MXFP8), scale_a=sa[:, :2], scale_b=sb[:2],
                     packed=True)
    with pytest.raises(ValueError, match="packed must be False, True, 'high_first' or 'low_first', "
                                         "got 'yes'"):
        tcemu.matmul(a, b, datapath=dp, scale_a=sa, scale_b=sb, packed="yes")
    with pytest.raises(ValueError, match=r"validate: the datapath is block-scaled .* pass scale_a "
                                         "and scale_b"):
        tcemu.validate(a, b, None, np.zeros((4, 3), np.float32), datapath=dp)


def test_mma_errors_name_the_argument():
    dp = tcemu.preset(*NVFP4)
    a = np.zeros((3, 64), np.uint8)
    c = np.zeros(3, np.float32)
    s = np.full((3, 4), UE4M3_ONE, np.uint8)
    with pytest.raises(ValueError, match=r"mma: the datapath is block-scaled .* pass scale_a and "
                                         r"scale_b \(each cases x ceil\(K / scale_block\)\)"):
        tcemu.mma(dp, a, a, c)
    with pytest.raises(ValueError, match=r"scale_b must be cases x ceil\(K / scale_block\) = "
                                         r"3 x 4, got 3 x 2"):
        tcemu.mma(dp, a, a, c, scale_a=s, scale_b=s[:, :2])
    with pytest.raises(ValueError, match="mma: scale_b given, but the datapath is not"):
        tcemu.mma(tcemu.preset("sm100", "e2m1", "fp32", "tcgen05"), a, a, c, scale_b=s)


# --- the documentation's example ----------------------------------------------------------------


def test_readme_nvfp4_example_says_what_it_does():
    readme = (pathlib.Path(__file__).parents[1] / "README.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "mxf4nvf4" in b)
    scope = {}
    exec(block, scope)
    a, b, sa, sb, d, d12 = (scope[name] for name in ("a", "b", "sa", "sb", "d", "d12"))
    exact = (a.astype(np.float64) * np.repeat(sa.astype(np.float64), 16, axis=1)) @ (
        b.astype(np.float64) * np.repeat(sb.astype(np.float64), 16, axis=0))
    np.testing.assert_array_equal(d, exact)
    assert 0.6 < (d12 != d).mean() < 0.9


@pytest.mark.skipif(not tcemu.devices(), reason="no GPU present")
def test_gpu_block_scaled_matmul_gives_the_emulator_bits():
    # NVFP4 (ue4m3 scales, groups of 16) and MXFP8 with mixed formats (e4m3 x e2m1, ue8m0 scales)
    # through the GPU backend's emulated engine against the emulator, every scale code (NaN and
    # zero included), K with a partial last scale block.
    rng = np.random.default_rng(35)
    cases = [(tcemu.preset(*NVFP4), 16, 0x7F, 160),
             (tcemu.preset(*MXFP8[:3], MXFP8[3], input_b="e2m1"), 256, 0xFF, 80)]
    for dp, a_codes, nan, k in cases:
        m, n, s = 33, 17, -(-k // dp.scale_block)
        a = rng.integers(0, a_codes, (m, k), dtype=np.uint8)
        b = rng.integers(0, 16, (k, n), dtype=np.uint8)
        sa = rng.integers(0, nan + 1, (m, s), dtype=np.uint8)
        sb = rng.integers(0, nan + 1, (s, n), dtype=np.uint8)
        want = tcemu.matmul(a, b, datapath=dp, scale_a=sa, scale_b=sb)
        got = tcemu.matmul(a, b, datapath=dp, scale_a=sa, scale_b=sb, backend="gpu")
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_validate_checks_a_block_scaled_kernels_whole_output():
    # A kernel engineer's check: D from "the kernel" (here matmul's own) passes; one element moved
    # by one ulp is found, with its index, its inputs and the scales in the report.
    rng = np.random.default_rng(38)
    dp = tcemu.preset(*NVFP4)
    m, n, k = 12, 10, 96
    s = -(-k // dp.scale_block)
    a = rng.integers(0, 16, (m, k), dtype=np.uint8)
    b = rng.integers(0, 16, (k, n), dtype=np.uint8)
    sa = rng.integers(0x30, 0x40, (m, s), dtype=np.uint8)
    sb = rng.integers(0x30, 0x40, (s, n), dtype=np.uint8)
    d = tcemu.matmul(a, b, datapath=dp, scale_a=sa, scale_b=sb)
    assert tcemu.validate(a, b, None, d, datapath=dp, scale_a=sa, scale_b=sb).equal
    wrong = d.copy()
    wrong.view(np.uint32)[3, 7] += 1
    report = tcemu.validate(a, b, None, wrong, datapath=dp, scale_a=sa, scale_b=sb)
    assert not report.equal
    assert report.count == 1
    assert [(i, j) for i, j, *_ in report.differences] == [(3, 7)]
    # Packed FP4 is read as matmul reads it.
    packed_a = (a[:, 0::2] << 4 | a[:, 1::2]).astype(np.uint8)
    packed_b = (b[0::2] << 4 | b[1::2]).astype(np.uint8)
    assert tcemu.validate(packed_a, packed_b, None, d, datapath=dp, scale_a=sa, scale_b=sb,
                          packed=True).equal
