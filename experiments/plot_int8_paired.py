#!/usr/bin/env python3
"""Plot of int8_ozaki_table --paired: cublasDgemm time / Ozaki-II dp time, pair by pair.

Usage: plot_int8_paired.py OUT.png CSV [CSV ...] -- one panel per matrix size, one series per
(CSV, phi): each pair's ratio (a cublasDgemm run, then a dp run, in turn) against the pair's
index, with the 1.3x goal of issue 17 drawn; prints the medians as Markdown.
"""
import csv
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    series = []  # (file, n, phi, rows)
    for path in sys.argv[2:]:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        for key in sorted({(int(r["n"]), float(r["phi"])) for r in rows}):
            here = [r for r in rows if (int(r["n"]), float(r["phi"])) == key]
            series.append((os.path.basename(path), key[0], key[1], here))
    sizes = sorted({s[1] for s in series})
    fig, axes = plt.subplots(len(sizes), 1, figsize=(11, 4.5 * len(sizes)), squeeze=False)
    for ax, n in zip(axes[:, 0], sizes):
        for i, (name, _, phi, rows) in enumerate(s for s in series if s[1] == n):
            ax.plot([int(r["pair"]) for r in rows], [float(r["dgemm_over_dp"]) for r in rows],
                    marker="o", ms=3, color=f"C{i % 10}", label=f"{name}, phi = {phi:g}")
        ax.axhline(1.3, color="k", ls="--", lw=1, label="1.3x (issue 17's goal at n = 16384)")
        ax.set_xlabel("pair (a cublasDgemm run, then a dp run)")
        ax.set_ylabel("cublasDgemm time / dp time")
        ax.set_title(f"n = {n}: each pair's ratio")
        ax.legend(fontsize=7, ncol=2, loc="center")
    fig.suptitle(f"Ozaki-II dp against cublasDgemm in turn, {series[0][3][0]['device']}")
    fig.tight_layout()
    fig.savefig(sys.argv[1], dpi=110)
    print("| CSV | n | phi | moduli | pairs | dgemm ms | dp ms | ratio median (min, max) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, n, phi, rows in series:
        ratios = [float(r["dgemm_over_dp"]) for r in rows]
        print(f"| {name} | {n} | {phi:g} | {rows[0]['moduli']} | {len(rows)} | "
              f"{statistics.median(float(r['dgemm_seconds']) for r in rows) * 1e3:.1f} | "
              f"{statistics.median(float(r['dp_seconds']) for r in rows) * 1e3:.1f} | "
              f"{statistics.median(ratios):.3f} ({min(ratios):.3f}, {max(ratios):.3f}) |")


if __name__ == "__main__":
    main()
