#!/usr/bin/env python3
"""Plots of the Ozaki experiments (experiments/ozaki_experiments.cpp).

Usage: plot_ozaki.py DIR   -- reads DIR/ozaki_*.csv, writes DIR/ozaki_*.png and prints the
accuracy tables as Markdown (for docs/results/ozaki-accuracy.md).

An error of exactly 0 (every element correctly rounded) cannot sit on a log axis; it is drawn at
1e-17 with a marker and labelled.
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


def methods_in(rows):
    seen = []
    for r in rows:
        if r["method"] not in seen:
            seen.append(r["method"])
    return seen


def plot_lines(rows, x_key, x_label, title, path, log_x=False):
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for method in methods_in(rows):
        pts = [(float(r[x_key]), float(r["max_relative_error"])) for r in rows
               if r["method"] == method]
        xs = [p[0] for p in pts]
        ys = [max(p[1], FLOOR) for p in pts]
        style = "--" if method.startswith("plain") else "-"
        ax.plot(xs, ys, style, marker="o", label=method)
    ax.set_yscale("log")
    if log_x:
        ax.set_xscale("log", base=2)
    ax.axhline(FLOOR, color="grey", linewidth=0.5)
    ax.text(ax.get_xlim()[0], FLOOR * 1.5, " 0: correctly rounded", fontsize=8, color="grey")
    ax.set_xlabel(x_label)
    ax.set_ylabel("max relative error vs MPFR")
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_table(rows, title, path):
    phis = sorted({float(r["phi"]) for r in rows})
    methods = methods_in(rows)
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for phi in phis:
        ys = []
        for method in methods:
            v = [float(r["max_relative_error"]) for r in rows
                 if r["method"] == method and float(r["phi"]) == phi]
            ys.append(max(v[0], FLOOR) if v else float("nan"))
        ax.plot(range(len(methods)), ys, marker="o", label=f"phi = {phi:g}")
    ax.axhline(FLOOR, color="grey", linewidth=0.5)
    ax.text(0, FLOOR * 1.5, " 0: correctly rounded", fontsize=8, color="grey")
    ax.set_xticks(range(len(methods)))
    ax.set_xticklabels(methods, rotation=45, ha="right", fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("max relative error vs MPFR")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def markdown_table(rows):
    phis = sorted({float(r["phi"]) for r in rows})
    out = ["| method | " + " | ".join(f"phi = {p:g}" for p in phis) + " |",
           "|---" * (len(phis) + 1) + "|"]
    for method in methods_in(rows):
        cells = []
        for phi in phis:
            v = [r for r in rows if r["method"] == method and float(r["phi"]) == phi]
            if not v:
                cells.append("")
                continue
            r = v[0]
            e = float(r["max_relative_error"])
            cell = "0" if e == 0 else f"{e:.2e}"
            if int(r["gemms"]) > 0:
                cell += f" ({r['slices_a']}x{r['slices_b']} slices, {r['gemms']} GEMMs)"
            cells.append(cell)
        out.append(f"| {method} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "docs/results"
    for path in sorted(glob.glob(os.path.join(d, "ozaki_*.csv"))):
        name = os.path.splitext(os.path.basename(path))[0]
        rows = read(path)
        png = os.path.join(d, name + ".png")
        if name.startswith("ozaki_table"):
            r0 = rows[0]
            plot_table(rows, f"Accuracy, m = n = k = {r0['n']}, {r0['backend']} ({r0['arch']})",
                       png)
            print(f"\n### {name}\n\n" + markdown_table(rows))
        elif name.startswith("ozaki_phi"):
            r0 = rows[0]
            plot_lines(rows, "phi", "phi", f"Accuracy vs phi, n = {r0['n']}, "
                       f"{r0['backend']} ({r0['arch']})", png)
            print(f"\n### {name}\n\n" + markdown_table(rows))
        elif name.startswith("ozaki_size"):
            r0 = rows[0]
            plot_lines(rows, "n", "m = n = k", f"Accuracy vs size, phi = {r0['phi']}, "
                       f"{r0['backend']} ({r0['arch']})", png, log_x=True)
        else:
            continue
        print(f"wrote {png}", file=sys.stderr)


if __name__ == "__main__":
    main()
