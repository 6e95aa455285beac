#!/usr/bin/env python3
"""Plot of the integer Ozaki schemes beside cuBLAS (experiments/int8_ozaki_table.cpp).

Usage: plot_int8_ozaki.py OUT.png CSV [CSV ...] -- one panel per matrix size: TFLOP/s (bars) of
every method for each phi, with the max relative error on the sampled elements written above
each bar ("CR" when every sampled element is correctly rounded); prints the table as Markdown
(for docs/results/int8-ozaki.md).
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rows = []
    for path in sys.argv[2:]:
        with open(path, newline="") as f:
            rows += [r for r in csv.DictReader(f) if not r["note"]]
    sizes = sorted({int(r["n"]) for r in rows})
    fig, axes = plt.subplots(len(sizes), 1, figsize=(14, 5.5 * len(sizes)), squeeze=False)
    for ax, n in zip(axes[:, 0], sizes):
        here = [r for r in rows if int(r["n"]) == n]
        phis = sorted({float(r["phi"]) for r in here})
        methods = []
        for r in here:
            if r["method"] not in methods:
                methods.append(r["method"])
        width = 0.8 / len(methods)
        for m, method in enumerate(methods):
            for p, phi in enumerate(phis):
                match = [r for r in here if r["method"] == method and float(r["phi"]) == phi]
                if not match:
                    continue
                r = match[0]
                x = p + (m - len(methods) / 2 + 0.5) * width
                ax.bar(x, float(r["tflops"]), width, color=f"C{m % 10}",
                       hatch="//" if m >= 10 else None, label=method if p == 0 else None)
                err = float(r["max_relative_error"])
                text = "CR" if int(r["not_correctly_rounded"]) == 0 else f"{err:.0e}"
                ax.text(x, float(r["tflops"]) + 0.5, text, rotation=90, ha="center",
                        va="bottom", fontsize=7)
        ax.set_xticks(range(len(phis)), [f"phi = {phi:g}" for phi in phis])
        ax.set_ylabel("TFLOP/s (2 n^3 / time)")
        ax.set_title(f"n = {n}: TFLOP/s; above each bar the max relative error over "
                     f"{here[0]['samples']} sampled elements (CR: all correctly rounded)")
        ax.set_ylim(0, max(float(r["tflops"]) for r in here) * 1.35)
        ax.legend(fontsize=7, ncol=3, loc="upper right")
    fig.suptitle(f"Integer Ozaki schemes beside cublasDgemm and cuBLAS FP64 emulation, "
                 f"{rows[0]['device']}")
    fig.tight_layout()
    fig.savefig(sys.argv[1], dpi=110)
    print("| n | phi | method | TFLOP/s | max rel. error | not CR (of samples) | GEMMs |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        gemms = r["gemms"] if int(r["gemms"]) else ""
        print(f"| {r['n']} | {float(r['phi']):g} | {r['method']} | {float(r['tflops']):.1f} | "
              f"{float(r['max_relative_error']):.1e} | {r['not_correctly_rounded']} of "
              f"{r['samples']} | {gemms} |")


if __name__ == "__main__":
    main()
