"""What the tcemu.torch studies share (issue 36, section 2): the datapaths they compare (None is
PyTorch's own float32 product) and their command line (an output folder, a device)."""

import argparse
import os

import tcemu


def study_parser(description):
    """An ArgumentParser with the studies' common arguments: out_dir and --device."""
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out_dir", help="where the CSV and the plot go")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (default cpu)")
    return parser


def parse_study_arguments(parser):
    """parser's arguments, out_dir made if it is missing."""
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    return args


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
