#!/usr/bin/env python3
"""Plots of the accurate-BLAS experiments (experiments/accurate_experiments.cpp).

Usage: plot_accurate.py DIR   -- reads DIR/accurate-condition.csv and DIR/accurate-table-*.csv
(accurate-table-cpu64-n500.csv from `table --backend cpu64`, accurate-table-gpu-n500.csv from
`table --backend gpu`), writes PNGs next to them and prints the accuracy tables as Markdown (for
docs/results/accurate-accuracy.md). An error of exactly 0 (correctly rounded) is drawn at 1e-17.
"""
import csv
import glob
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

FLOOR = 1e-17


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def in_order(rows, key):
    seen = []
    for r in rows:
        if r[key] not in seen:
            seen.append(r[key])
    return seen


def plot_condition(rows, path):
    fig, ax = plt.subplots(figsize=(7, 4.5))
    markers = {"plain binary64": "x", "Dot2": "o", "ExBLAS": "s", "Ozaki DP (cpu64)": "^",
               "Ozaki CR (cpu64)": "v"}
    for method in in_order(rows, "method"):
        pts = sorted((float(r["condition"]), max(float(r["relative_error"]), FLOOR))
                     for r in rows if r["method"] == method)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], markers.get(method, "."),
                label=method, markersize=4, alpha=0.8)
    bound = sorted((float(r["condition"]), float(r["dot2_bound"])) for r in rows
                   if r["method"] == "Dot2")
    ax.plot([b[0] for b in bound], [min(b[1], 1e3) for b in bound], "k-", linewidth=1,
            label="Dot2 bound u + gamma_n^2 cond / 2")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(FLOOR / 2, 1e3)
    ax.axhline(FLOOR, color="grey", linewidth=0.5)
    ax.text(1.5, FLOOR * 1.5, " 0: correctly rounded", fontsize=8, color="grey")
    ax.set_xlabel("condition number 2 |x|'|y| / |x'y|")
    ax.set_ylabel("relative error")
    ax.set_title(f"Ill-conditioned dot products (GenDot), n = {rows[0]['n']}")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_table(rows, where, path):
    phis = in_order(rows, "phi")
    methods = [m for m in in_order(rows, "method") if "reference" not in m]
    fig, ax = plt.subplots(figsize=(max(9, 0.6 * len(methods)), 4.5))
    for phi in phis:
        ys = []
        for method in methods:
            v = [float(r["max_relative_error"]) for r in rows
                 if r["method"] == method and r["phi"] == phi]
            ys.append(max(v[0], FLOOR))
        ax.plot(range(len(methods)), ys, marker="o", label=f"phi = {phi}")
    ax.axhline(FLOOR, color="grey", linewidth=0.5)
    ax.text(0, FLOOR * 1.5, " 0: correctly rounded", fontsize=8, color="grey")
    ax.set_xticks(range(len(methods)))
    ax.set_xticklabels(methods, rotation=30, ha="right", fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("max relative error vs MPFR")
    ax.set_title(f"DGEMM accuracy, m = n = k = {rows[0]['n']}, {where}")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def markdown_table(rows):
    phis = in_order(rows, "phi")
    out = ["| method | " + " | ".join(f"phi = {p}" for p in phis) + " |",
           "|---" * (len(phis) + 1) + "|"]
    for method in [m for m in in_order(rows, "method") if "reference" not in m]:
        cells = []
        for phi in phis:
            r = [x for x in rows if x["method"] == method and x["phi"] == phi][0]
            e = float(r["max_relative_error"])
            cells.append(("0" if e == 0 else f"{e:.2e}") + f" ({r['not_correctly_rounded']})")
        out.append(f"| {method} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "docs/results/accurate"
    cond = os.path.join(d, "accurate-condition.csv")
    if os.path.exists(cond):
        plot_condition(read(cond), cond.replace(".csv", ".png"))
        print(f"wrote {cond.replace('.csv', '.png')}", file=sys.stderr)
    for path in sorted(glob.glob(os.path.join(d, "accurate-table-*.csv"))):
        rows = read(path)
        where = "GPU" if "-gpu-" in os.path.basename(path) else "CPU"
        plot_table(rows, where, path.replace(".csv", ".png"))
        print(f"\n### {os.path.basename(path)}\n\n" + markdown_table(rows))
        print(f"wrote {path.replace('.csv', '.png')}", file=sys.stderr)


if __name__ == "__main__":
    main()
