#!/usr/bin/env python3
"""Tables and a figure from the output of bench/accurate_gpu_benchmark.cpp.

Usage: plot_accurate_gpu.py OUT_DIR LOG [EARLIER_LOG]

LOG is what `accurate_gpu_benchmark` printed (stdout, stderr mixed in is fine); EARLIER_LOG,
optional, is an earlier run of the same program, drawn faintly for comparison. Writes
  OUT_DIR/accurate-gpu-blas.csv   DOT, GEMV, GEMM: cuBLAS, Dot2 and ExBLAS-style times (ms)
  OUT_DIR/accurate-gpu-cr.csv     correctly rounded DGEMM: time, slices, memory per phi and method
  OUT_DIR/accurate-gpu-cr.png     time against phi for the three correctly rounded methods
(the column `run` is "current" for LOG and "earlier" for EARLIER_LOG) and prints both tables as
Markdown (for docs/results/accurate-accuracy.md).
"""
import csv
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

BLAS = re.compile(r"^(DOT|GEMV|GEMM)\s+(\S+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$")
CR = re.compile(r"^(\d+)\s+(ExBLAS-style|Ozaki CR, tensor cores|Ozaki CR, FP64)\s+([\d.]+)\s+"
                r"(-|\d+ x \d+)\s+([\d.]+)\s+(\S+)$")
METHODS = ["ExBLAS-style", "Ozaki CR, tensor cores", "Ozaki CR, FP64"]


def parse(path, run):
    blas, cr = [], []
    with open(path) as f:
        for line in f:
            line = line.rstrip()
            if m := BLAS.match(line):
                op, size, cublas, dot2, dot2_x, exblas, exblas_x = m.groups()
                blas.append({"run": run, "op": op, "size": size, "cublas_ms": cublas,
                             "dot2_ms": dot2, "dot2_over_cublas": dot2_x, "exblas_ms": exblas,
                             "exblas_over_cublas": exblas_x})
            elif m := CR.match(line):
                phi, method, ms, slices, mib, same = m.groups()
                a, b = slices.split(" x ") if slices != "-" else ("", "")
                cr.append({"run": run, "phi": phi, "method": method, "ms": ms, "slices_a": a,
                           "slices_b": b, "device_mib": mib, "bits_equal_exblas": same})
    if not blas or not cr:
        sys.exit(f"{path}: no accurate_gpu_benchmark tables found")
    return blas, cr


def write(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    out = sys.argv[1]
    blas, cr = parse(sys.argv[2], "current")
    if len(sys.argv) == 4:
        earlier_blas, earlier_cr = parse(sys.argv[3], "earlier")
        blas += earlier_blas
        cr += earlier_cr
    write(os.path.join(out, "accurate-gpu-blas.csv"), blas)
    write(os.path.join(out, "accurate-gpu-cr.csv"), cr)

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, method in enumerate(METHODS):
        for run, style, alpha in (("current", "o-", 1.0), ("earlier", "x--", 0.45)):
            pts = [(int(r["phi"]), float(r["ms"])) for r in cr
                   if r["run"] == run and r["method"] == method]
            if not pts:
                continue
            label = method
            if run == "earlier":
                label += " (earlier run" + (", steps on the host)" if "Ozaki" in method else ")")
            ax.semilogy(*zip(*sorted(pts)), style, color=f"C{i}", alpha=alpha, ms=4, label=label)
    ax.set_xlabel("phi (inputs (rand - 0.5) exp(phi randn))")
    ax.set_ylabel("ms, one dgemm call, host arrays in and out")
    ax.set_title("Correctly rounded DGEMM, n = 1024")
    ax.grid(True, which="major", lw=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "accurate-gpu-cr.png"), dpi=110)

    print("| run | op | size | cuBLAS (ms) | Dot2 (ms) | Dot2 / cuBLAS | ExBLAS-style (ms) "
          "| ExBLAS / cuBLAS |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in blas:
        print(f"| {r['run']} | {r['op']} | {r['size']} | {r['cublas_ms']} | {r['dot2_ms']} "
              f"| {r['dot2_over_cublas']} | {r['exblas_ms']} | {r['exblas_over_cublas']} |")
    print()
    print("| run | phi | method | ms | slices A x B | device MiB | bits = ExBLAS |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in cr:
        slices = f"{r['slices_a']} x {r['slices_b']}" if r["slices_a"] else "-"
        print(f"| {r['run']} | {r['phi']} | {r['method']} | {r['ms']} | {slices} "
              f"| {r['device_mib']} | {r['bits_equal_exblas']} |")


if __name__ == "__main__":
    main()
