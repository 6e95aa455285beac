"""mma(): hand-checked cases and the argument checks."""

import numpy as np
import pytest

import tcemu

# 1 + 15 * 2^-26: c = 1 and fifteen products 2^-13 * 2^-13 (one zero term pads K to 16).
A = np.array([[2.0**-13] * 15 + [0.0]], dtype=np.float16)
B = A.copy()
C = np.array([1.0], dtype=np.float32)


def test_sm90_truncates_small_terms_that_exact_alignment_keeps():
    dp = tcemu.preset("sm90", "fp16", "fp32")
    # sm90 aligns to 25 fraction bits below 2^0: each 2^-26 product is dropped.
    assert tcemu.mma(dp, A, B, C).view(np.uint32)[0] == 0x3F800000
    dp.alignment_fraction_bits = None  # exact: 1 + 1.875 * 2^-23, RZ to 1 + 2^-23
    assert tcemu.mma(dp, A, B, C).view(np.uint32)[0] == 0x3F800001
    dp.block_rounding = "rn"  # exact and RN: 1 + 2 * 2^-23
    assert tcemu.mma(dp, A, B, C).view(np.uint32)[0] == 0x3F800002


def test_bit_patterns_and_typed_arrays_agree():
    dp = tcemu.preset("sm90", "fp16", "fp32")
    typed = tcemu.mma(dp, A, B, C)
    bits = tcemu.mma(dp, A.view(np.uint16), B.view(np.uint16), C.view(np.uint32))
    assert typed.dtype == np.float32
    np.testing.assert_array_equal(typed.view(np.uint32), bits.view(np.uint32))


def test_readme_case_and_fp16_accumulator():
    # README: "2 3c00 3c00 4000 4000 3f800000" gives 40a00000 (1*2 + 1*2 + 1).
    dp = tcemu.preset("sm90", "fp16", "fp32")
    a = np.array([[0x3C00, 0x3C00]], dtype=np.uint16)
    b = np.array([[0x4000, 0x4000]], dtype=np.uint16)
    assert tcemu.mma(dp, a, b, np.array([0x3F800000], np.uint32)).view(np.uint32)[0] == 0x40A00000
    d = tcemu.mma(tcemu.preset("sm90", "fp16", "fp16"), a, b, np.array([1.0], np.float16))
    assert d.dtype == np.float16 and d[0] == 5.0


def test_argument_errors():
    dp = tcemu.preset("sm90", "fp16", "fp32")
    with pytest.raises(ValueError, match=r"same shape \[cases, K\]"):
        tcemu.mma(dp, A, B[:, :8], C)
    with pytest.raises(ValueError, match="one element per case"):
        tcemu.mma(dp, A, B, np.zeros(2, np.float32))
    with pytest.raises(TypeError, match="c: dtype float16 does not hold fp32"):
        tcemu.mma(dp, A, B, np.zeros(1, np.float16))
    with pytest.raises(ValueError, match="a: expected a 2-D array, got 1-D"):
        tcemu.mma(dp, A[0], B, C)
    with pytest.raises(TypeError, match="expected a NumPy array or an object with __dlpack__"):
        tcemu.mma(dp, [[1.0]], B, C)


def test_reversed_and_broadcast_c():
    dp = tcemu.preset("sm90", "fp16", "fp32")
    a = np.tile(A, (3, 1))
    c = np.array([4.0, 2.0, 1.0], np.float32)
    d = tcemu.mma(dp, a, a, c[::-1])
    np.testing.assert_array_equal(d, [1.0, 2.0, 4.0])
    d = tcemu.mma(dp, np.broadcast_to(A, (3, 16)), a, np.broadcast_to(C, (3,)))
    np.testing.assert_array_equal(d, [1.0, 1.0, 1.0])
