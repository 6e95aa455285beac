"""Datapath objects: presets, every field as an attribute, validation."""

import copy

import pytest

import tcemu


def test_preset_fields_are_the_sm90_measurements():
    dp = tcemu.preset("sm90", "fp16", "fp32")
    assert dp.input == tcemu.Format("fp16") and dp.accumulator.name == "fp32"
    assert (dp.instruction_k, dp.block_terms, dp.k_group) == (16, 16, 16)
    assert dp.alignment_fraction_bits == 25
    assert dp.block_rounding == "rz" and dp.c_entry == "aligned"
    assert dp.zero_sign == "positive" and dp.nan_bits == 0x7FFFFFFF
    assert "alignment_fraction_bits=25" in repr(dp) and repr(dp).startswith("tcemu.Datapath(")


def test_every_field_is_writable_and_changes_equality():
    dp = tcemu.preset("sm80", "bf16", "fp32")
    other = dp.copy()
    assert other == dp and copy.deepcopy(dp) == dp
    for field, value in [
        ("block_terms", 4),
        ("k_group", 4),
        ("alignment_fraction_bits", None),
        ("alignment_floor", tcemu.NO_ALIGNMENT_FLOOR),
        ("block_rounding", "rn"),
        ("block_result_precision", 20),
        ("c_entry", "after-blocks"),
        ("overflow", "saturate"),
        ("zero_sign", "positive"),
        ("nan_bits", 0x7FC00000),
        ("input", "fp16"),
    ]:
        changed = dp.copy()
        setattr(changed, field, value)
        assert getattr(changed, field) == (tcemu.Format(value) if field == "input" else value)
        assert changed != dp, field


def test_validate_names_the_offending_field():
    dp = tcemu.preset("sm90", "fp16", "fp32")
    dp.block_terms = 5  # does not divide instruction_k = 16
    with pytest.raises(ValueError, match="block_terms"):
        dp.validate()
    with pytest.raises(ValueError, match="block_terms"):
        tcemu.mma(dp, [[1]], [[1]], [0])


def test_bad_names_raise_with_the_cpp_message():
    with pytest.raises(ValueError, match="unknown architecture preset 'sm99'"):
        tcemu.preset("sm99")
    with pytest.raises(ValueError, match="sm70 mma.sync has no bf16"):
        tcemu.preset("sm70", "bf16", "fp32")
    with pytest.raises(ValueError, match="unknown format 'fp12'"):
        tcemu.preset("sm90", "fp12")
    with pytest.raises(ValueError, match="block_rounding must be one of 'rz', 'rn', got 'up'"):
        tcemu.preset("sm90").block_rounding = "up"


def test_presets_table():
    table = tcemu.presets()
    assert {e.arch for e in table} >= {"sm70", "sm80", "sm89", "sm90", "sm100"}
    for e in table:
        e.datapath.validate()
        assert tcemu.preset(e.arch, e.datapath.input, e.datapath.accumulator, e.instruction,
                            input_b=e.datapath.input_b) == e.datapath
    assert "wgmma" in tcemu.instruction_names("sm90")
    assert "mma.sync.m16n8k8" in tcemu.instruction_names("sm90")
    assert "wmma.m16n16k8" in tcemu.instruction_names("sm80")


def test_instruction_shapes_have_their_own_datapath():
    # On the H100 fp8 m16n8k16 runs as two interleaved 8-term halves; wmma m16n16k8 tf32 is a
    # chain of two m16n8k4 instructions.
    assert tcemu.preset("sm90", "e4m3", "fp32", "mma.sync.m16n8k16").block_terms == 8
    assert tcemu.preset("sm90", "tf32", "fp32", "wmma.m16n16k8") == tcemu.preset(
        "sm90", "tf32", "fp32", "mma.sync.m16n8k4")
    with pytest.raises(ValueError, match="sm90 runs fp16 -> fp32 on: mma.sync, mma.sync.m8n8k4"):
        tcemu.preset("sm90", "fp16", "fp32", "mma.sync.m16n8k4")
    assert all(e.source for e in tcemu.presets())
    assert [f.name for f in tcemu.formats()] == [
        "fp32", "fp16", "bf16", "tf32", "e4m3", "e5m2", "e3m2", "e2m3", "e2m1", "ue8m0", "ue4m3"]
