#!/usr/bin/python3
"""Plots markidis_split's CSVs: kept bits per split variant, and residual underflow vs exponent.

usage: plot_split.py DIR   (reads DIR/markidis-split-{bits,underflow}.csv, writes the PNGs there)
Needs Debian's python3-matplotlib (scripts/setup.sh installs it).
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(directory):
    with open(f"{directory}/markidis-split-bits.csv") as f:
        bits = list(csv.DictReader(f))
    fig, ax = plt.subplots(figsize=(8, 4))
    names = [r["variant"] for r in bits]
    y = range(len(names))
    ax.barh([i + 0.2 for i in y], [float(r["analytic_kept_bits"]) for r in bits], height=0.4,
            label="analytic")
    ax.barh([i - 0.2 for i in y], [float(r["montecarlo_kept_bits"]) for r in bits], height=0.4,
            label=f"Monte Carlo ({bits[0]['samples']} samples)")
    ax.set_yticks(list(y), names)
    ax.set_xlim(22.0, 23.0)
    ax.axvline(23.0, color="k", lw=0.8)
    ax.set_xlabel("mean fraction bits of x kept by hi + lo (of 23), x in [1, 2)")
    ax.legend(loc="lower left")
    fig.tight_layout()
    fig.savefig(f"{directory}/markidis-split-bits.png", dpi=120)

    with open(f"{directory}/markidis-split-underflow.csv") as f:
        rows = list(csv.DictReader(f))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6.5), sharex=True)
    for scale, style in (("0", "--"), ("11", "-")):
        sel = [r for r in rows if r["lo_scale"] == scale]
        e = [int(r["exponent"]) for r in sel]
        label = "lo = fp16(r)" if scale == "0" else "lo = fp16(r 2^11)"
        top.plot(e, [float(r["p_lo_subnormal"]) for r in sel], style, color="C0",
                 label=f"{label}: lo subnormal")
        top.plot(e, [float(r["p_lo_flushed"]) for r in sel], style, color="C3",
                 label=f"{label}: lo = 0, r != 0")
        bottom.plot(e, [float(r["mean_kept_bits"]) for r in sel], style, color="C2", label=label)
    top.set_ylabel("probability")
    top.legend(fontsize=8)
    bottom.set_ylabel("mean kept fraction bits")
    bottom.set_xlabel("exponent of x (x uniform in [2^e, 2^(e+1)))")
    bottom.axhline(22.75, color="k", lw=0.6)
    bottom.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(f"{directory}/markidis-split-underflow.png", dpi=120)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
