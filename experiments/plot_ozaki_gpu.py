#!/usr/bin/env python3
"""Plots of Table 1 on the GPU (experiments/ozaki_gpu_table.cpp).

Usage: plot_ozaki_gpu.py CSV OUT_DIR -- writes OUT_DIR/ozaki-gpu-gflops.png (GFLOPS of every
method per phi, cuBLAS's emulation at each mantissa width), OUT_DIR/ozaki-gpu-phases.png (the
time of each phase of the Ozaki methods, as Fig. 5 of Mukunoki et al.) and prints the table as
Markdown (for docs/results/ozaki-gpu.md).
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

OZAKI = ["DGEMM-TC-DP", "DGEMM-TC-CR", "DGEMM-DP-CR"]
PHASES = [("seconds_split_a", "split A"), ("seconds_split_b", "split B"),
          ("seconds_products", "products"), ("seconds_summation", "summation")]


def label(r):
    if r["method"].startswith("cuBLAS FP64 emulation"):
        bits = int(r["mantissa_bits"])
        return "cuBLAS emulation, " + ("dynamic" if bits == 0 else f"{bits} bits")
    return r["method"]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1], newline="") as f:
        rows = [r for r in csv.DictReader(f)]
    out = sys.argv[2]
    phis = sorted({float(r["phi"]) for r in rows})
    labels = []
    for r in rows:
        if label(r) not in labels:
            labels.append(label(r))

    fig, ax = plt.subplots(figsize=(10, 5))
    width = 0.8 / len(phis)
    for p, phi in enumerate(phis):
        values = []
        for name in labels:
            hit = [r for r in rows if float(r["phi"]) == phi and label(r) == name]
            values.append(float(hit[0]["gflops"]) if hit else 0.0)
        ax.bar([x + p * width for x in range(len(labels))], values, width, label=f"phi = {phi:g}")
    ax.set_xticks([x + width * (len(phis) - 1) / 2 for x in range(len(labels))])
    ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)
    ax.set_ylabel("GFLOPS (2 n^3 / time)")
    ax.set_yscale("log")
    ax.set_title(f"DGEMM on {rows[0]['device']}, m = n = k = {rows[0]['n']}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "ozaki-gpu-gflops.png"), dpi=120)

    fig, ax = plt.subplots(figsize=(9, 4.5))
    bars = [(m, phi) for m in OZAKI for phi in phis
            if any(r["method"] == m and float(r["phi"]) == phi for r in rows)]
    bottom = [0.0] * len(bars)
    for key, name in PHASES:
        values = []
        for m, phi in bars:
            r = next(r for r in rows if r["method"] == m and float(r["phi"]) == phi)
            values.append(float(r[key]))
        ax.bar(range(len(bars)), values, bottom=bottom, label=name)
        bottom = [b + v for b, v in zip(bottom, values)]
    ax.set_xticks(range(len(bars)))
    ax.set_xticklabels([f"{m}\nphi {phi:g}" for m, phi in bars], fontsize=7)
    ax.set_ylabel("seconds (one call)")
    ax.set_title("Time per phase")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "ozaki-gpu-phases.png"), dpi=120)

    print("| phi | method | GFLOPS | slices A / B | GEMMs | max rel. error | not CR | note |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        slices = f"{r['slices_a']} / {r['slices_b']}" if r["method"] in OZAKI else "-"
        gemms = r["gemms"] if r["method"] in OZAKI else "-"
        if label(r).startswith("cuBLAS emulation"):
            slices = f"{r['used_bits']} bits used" if int(r["used_bits"]) > 0 else slices
        print(f"| {float(r['phi']):g} | {label(r)} | {float(r['gflops']):.0f} | {slices} | {gemms} "
              f"| {float(r['max_relative_error']):.2e} | {r['not_correctly_rounded']} "
              f"| {r['note']} |")


if __name__ == "__main__":
    main()
