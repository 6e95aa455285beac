#!/usr/bin/python3
"""Plots markidis_accuracy's CSV: relative residual vs k, one panel per distribution x datapath.

usage: plot_accuracy.py CSV   (reads CSV as markidis_accuracy writes it, writes CSV's name .png)
Needs Debian's python3-matplotlib (scripts/setup.sh installs it).
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


# The fp32 GEMMs drawn in every panel: scheme name in the CSV -> (line style, legend).
BASELINES = {"sgemm": ("k--", "SGEMM (fp32 CPU)"), "cublasSgemm": ("k:", "cublasSgemm")}


def main(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    dists = list(dict.fromkeys(r["distribution"] for r in rows))
    archs = list(dict.fromkeys(r["arch"] for r in rows if r["scheme"] not in BASELINES))
    schemes = list(dict.fromkeys(r["scheme"] for r in rows if r["scheme"] not in BASELINES))
    series = defaultdict(list)  # (dist, arch, scheme) -> [(k, residual)]
    for r in rows:
        if r["status"] != "ok":
            continue
        arch_keys = archs if r["scheme"] in BASELINES else [r["arch"]]
        for arch in arch_keys:
            series[(r["distribution"], arch, r["scheme"])].append(
                (int(r["k"]), max(float(r["relative_residual"]), 1e-17)))
    fig, axes = plt.subplots(len(dists), len(archs), figsize=(4 * len(archs), 3 * len(dists)),
                             sharex=True, sharey=True, squeeze=False)
    for i, dist in enumerate(dists):
        for j, arch in enumerate(archs):
            ax = axes[i][j]
            for s, scheme in enumerate(schemes):
                pts = sorted(series[(dist, arch, scheme)])
                if pts:
                    ax.loglog(*zip(*pts), "o-", ms=3, color=f"C{s}", label=scheme)
            for baseline, (style, label) in BASELINES.items():
                pts = sorted(series[(dist, arch, baseline)])
                if pts:
                    ax.loglog(*zip(*pts), style, lw=1.5, label=label)
            ax.set_title(f"{dist}, {arch}", fontsize=9)
            ax.grid(True, which="major", lw=0.3)
            if j == 0:
                ax.set_ylabel("||C - Cref||_F / ||Cref||_F")
            if i == len(dists) - 1:
                ax.set_xlabel("k")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path.removesuffix(".csv") + ".png", dpi=100)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "markidis-accuracy.csv")
