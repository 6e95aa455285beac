"""fp64_mma(), fp64_preset() and the fp64 instruction names: the chain's order, fusion and NaN."""

import numpy as np
import pytest

import tcemu

# c = 1, -1 at k = 1, 2^-60 at k = 2: 2^-60 when k = 1 comes before k = 2, else 0.
A = np.array([[0.0, -1.0, 2.0**-60, 0.0]])
B = np.ones((1, 4))
C = np.array([1.0])


def test_the_preset_chain_is_ascending_and_fused():
    dp = tcemu.fp64_preset("sm80")
    fields = (dp.instruction_k, dp.order, dp.step, dp.nan, dp.nan_bits)
    assert fields == (4, "ascending", "fused", "propagate", 0xFFF8000000000000)
    assert tcemu.fp64_mma(dp, A, B, C)[0] == 2.0**-60
    dp.order = "descending"
    assert tcemu.fp64_mma(dp, A, B, C)[0] == 0.0
    # (1 + 2^-30)^2 = 1 + 2^-29 + 2^-60 on c = -(1 + 2^-29): 2^-60 fused, 0 unfused.
    x = np.array([[1 + 2.0**-30]])
    c = np.array([-(1 + 2.0**-29)])
    fused = tcemu.fp64_preset("sm90", "mma.sync.m16n8k4")
    assert tcemu.fp64_mma(fused, x, x, c)[0] == 2.0**-60
    fused.step = "unfused"
    assert tcemu.fp64_mma(fused, x, x, c)[0] == 0.0


def test_bit_patterns_and_float64_agree_and_nan_keeps_its_bits():
    dp = tcemu.fp64_preset("sm90")
    bits = tcemu.fp64_mma(dp, A.view(np.uint64), B.view(np.uint64), C.view(np.uint64))
    assert bits.dtype == np.float64
    np.testing.assert_array_equal(bits.view(np.uint64), tcemu.fp64_mma(dp, A, B, C).view(np.uint64))
    inf = np.array([[np.inf, -np.inf]])
    d = tcemu.fp64_mma(dp, inf, np.ones((1, 2)), np.array([0.0]))
    assert d.view(np.uint64)[0] == 0xFFF8000000000000
    dp.nan_bits = 0x7FF8000000000000
    d = tcemu.fp64_mma(dp, inf, np.ones((1, 2)), np.array([0.0]))
    assert d.view(np.uint64)[0] == 0x7FF8000000000000
    # A NaN operand keeps its payload, quieted, unless every NaN is replaced.
    payload = np.array([[0x7FF0000000000ABC, 0x3FF0000000000000]], np.uint64)
    ones = np.ones((1, 2)).view(np.uint64)
    zero = np.zeros(1).view(np.uint64)
    assert tcemu.fp64_mma(dp, payload, ones, zero).view(np.uint64)[0] == 0x7FF8000000000ABC
    dp.nan = "replace"
    assert tcemu.fp64_mma(dp, payload, ones, zero).view(np.uint64)[0] == 0x7FF8000000000000
    with pytest.raises(ValueError, match="propagate"):
        dp.nan = "keep"
    # Strided views are read in place of a copy's order.
    wide = np.zeros((1, 8))
    wide[0, ::2] = A[0]
    assert tcemu.fp64_mma(tcemu.fp64_preset("sm80"), wide[:, ::2], B, C)[0] == 2.0**-60


def test_names_and_table():
    assert tcemu.instruction_names("sm90", "fp64", "fp64") == [
        "mma.sync", "mma.sync.m8n8k4", "mma.sync.m16n8k4", "mma.sync.m16n8k8", "mma.sync.m16n8k16"]
    assert tcemu.instruction_names("sm89", "fp64", "fp64") == ["mma.sync", "mma.sync.m8n8k4"]
    assert tcemu.instruction_names("sm75", "fp64", "fp64") == []
    rows = tcemu.fp64_instructions()
    table = {(r.arch, r.name, r.k) for r in rows}
    assert {("sm120", "mma.sync.m16n8k16", 16), ("sm80", "mma.sync.m8n8k4", 4)} <= table
    assert not any(r.arch in ("sm70", "sm75") for r in rows)
    assert tcemu.fp64_preset("sm100").instruction_k == 16


def test_refusals_name_the_problem():
    with pytest.raises(ValueError, match="sm80 has no fp64 instruction 'mma.sync.m16n8k16'"):
        tcemu.fp64_preset("sm80", "mma.sync.m16n8k16")
    with pytest.raises(ValueError, match="sm75 has no fp64 MMA instruction"):
        tcemu.fp64_preset("sm75")
    with pytest.raises(ValueError, match="input='fp64' and accumulator='fp64'"):
        tcemu.instruction_names("sm90", "fp64", "fp32")
    dp = tcemu.fp64_preset()
    with pytest.raises(TypeError, match="a: fp64 MMA takes float64 values or uint64 bit patterns"):
        tcemu.fp64_mma(dp, A.astype(np.float32), B, C)
    with pytest.raises(ValueError, match="a and b must have the same shape"):
        tcemu.fp64_mma(dp, A, np.ones((1, 3)), C)
    with pytest.raises(ValueError, match="c must have one element per case"):
        tcemu.fp64_mma(dp, A, B, np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="is not ascending or descending"):
        dp.order = "sideways"
    dp.nan_bits = 0x7FF0000000000000
    with pytest.raises(ValueError, match="is not a binary64 NaN"):
        dp.validate()
