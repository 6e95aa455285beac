"""The datapaths the tcemu.torch studies compare (issue 36, section 2): None is PyTorch's own
float32 product."""

import tcemu


def study_datapaths():
    """[(name, tcemu.Datapath or None)]: fp32; sm90 (H100/H200, RZ blocks of 16); sm70 (V100,
    RZ blocks of 4); sm90 with RN blocks; exact accumulation (RN, no alignment loss); sm90 with 3
    fewer alignment bits."""
    rn = tcemu.preset("sm90", "fp16", "fp32")
    rn.block_rounding = "rn"
    short = tcemu.preset("sm90", "fp16", "fp32")
    short.alignment_fraction_bits = short.alignment_fraction_bits - 3
    return [
        ("fp32", None),
        ("sm90", tcemu.preset("sm90", "fp16", "fp32")),
        ("sm70", tcemu.preset("sm70", "fp16", "fp32")),
        ("sm90-rn", rn),
        ("exact", tcemu.preset("exact-rn", "fp16", "fp32")),
        (f"sm90-F{short.alignment_fraction_bits}", short),
    ]
