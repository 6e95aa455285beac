"""The error of an fp16 GEMM against k: sm90, RN blocks, RN blocks with exact alignment, sm70.

    python error_vs_k.py OUT_DIR [--k 16,64,...]

A and B are uniform in [0, 1) (so the RZ accumulation's bias shows), the reference is their
product in float64; writes OUT_DIR/error_vs_k.csv and OUT_DIR/error_vs_k.png. RN blocks alone keep
the truncation of every product to the block's alignment grid (25 bits below its largest
exponent on sm90), whose errors all go one way: that curve stays near sm90's. Exact alignment
(`alignment_fraction_bits = None`) with RN blocks removes it. docs/results/error_vs_k.png and .csv
are this script's output with the default k (`python3 python/examples/error_vs_k.py docs/results`).
"""

import argparse
import csv
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import tcemu  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=pathlib.Path)
    parser.add_argument("--k", default="16,64,256,1024,4096,16384")
    args = parser.parse_args()
    ks = [int(k) for k in args.k.split(",")]

    rn_blocks = tcemu.preset("sm90", "fp16", "fp32")
    rn_blocks.block_rounding = "rn"
    exact_alignment = rn_blocks.copy()
    exact_alignment.alignment_fraction_bits = None  # no truncation to the alignment grid
    datapaths = {
        "sm90": tcemu.preset("sm90", "fp16", "fp32"),
        "sm90, RN blocks": rn_blocks,
        "sm90, RN blocks, exact alignment": exact_alignment,
        "sm70": tcemu.preset("sm70", "fp16", "fp32"),
    }
    rng = np.random.default_rng(1)
    rows = []
    for k in ks:
        a = rng.random((64, k)).astype(np.float16)
        b = rng.random((k, 64)).astype(np.float16)
        reference = a.astype(np.float64) @ b.astype(np.float64)
        for name, dp in datapaths.items():
            error = np.abs(tcemu.matmul(a, b, datapath=dp) - reference) / reference
            rows.append((name, k, error.max(), error.mean()))

    args.out_dir.mkdir(parents=True, exist_ok=True)
    with open(args.out_dir / "error_vs_k.csv", "w", newline="") as f:
        csv.writer(f).writerows([("datapath", "k", "max_relative_error", "mean_relative_error")]
                                + rows)
    for name in datapaths:
        plt.loglog(ks, [r[3] for r in rows if r[0] == name], "o-", label=name)
    plt.xlabel("k")
    plt.ylabel("mean relative error of D = A B (fp16 in, fp32 out)")
    plt.legend()
    plt.savefig(args.out_dir / "error_vs_k.png", dpi=120)


if __name__ == "__main__":
    main()
