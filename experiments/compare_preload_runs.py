#!/usr/bin/env python3
"""Side by side: runs of cublas_gemm_program (an ordinary cuBLAS program) plainly and under
LD_PRELOAD libraries, from their CSVs. For every (routine, n, phi) the plain run measured and every
other run's label: its speed over the plain run's (plain seconds / its seconds: above 1 is faster
than cuBLAS), its largest relative error against the plain run's, and its parts that are not
correctly rounded. Prints a Markdown table and writes it as CSV with --out.

    python3 experiments/compare_preload_runs.py plain.csv crt-dp.csv crt-cr.csv --out ratios.csv
"""

import argparse
import csv
import sys


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("csvs", nargs="+", help="cublas_gemm_program CSVs (one has label 'plain')")
    parser.add_argument("--baseline", default="plain", help="the label of cuBLAS's own run")
    parser.add_argument("--out", help="CSV of the comparison")
    args = parser.parse_args()
    rows = []
    for path in args.csvs:
        try:
            with open(path, newline="") as f:
                rows += list(csv.DictReader(f))
        except OSError as e:
            sys.exit(f"compare_preload_runs.py: {path}: {e.strerror}")
    key = lambda r: (r["routine"], int(r["n"]), float(r["phi"]))
    base = {key(r): r for r in rows if r["label"] == args.baseline}
    if not base:
        sys.exit(f"compare_preload_runs.py: no run labelled '{args.baseline}' in {args.csvs}")
    table = []
    for r in rows:
        if r["label"] == args.baseline or key(r) not in base:
            continue
        b = base[key(r)]
        table.append(
            {
                "routine": r["routine"],
                "n": r["n"],
                "phi": r["phi"],
                "label": r["label"],
                "speedup": float(b["seconds"]) / float(r["seconds"]),
                "seconds": float(r["seconds"]),
                "cublas_seconds": float(b["seconds"]),
                "max_relative_error": float(r["max_relative_error"]),
                "cublas_max_relative_error": float(b["max_relative_error"]),
                "not_correctly_rounded": int(r["not_correctly_rounded"]),
                "parts_checked": int(r["parts_checked"]),
            }
        )
    table.sort(key=lambda t: (t["routine"], int(t["n"]), float(t["phi"]), t["label"]))
    print(
        "| routine | n | phi | run | speed over cuBLAS | seconds (cuBLAS) | max rel. error (cuBLAS) | not CR |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for t in table:
        print(
            f"| {t['routine']} | {t['n']} | {t['phi']} | {t['label']} | {t['speedup']:.2f}x | "
            f"{t['seconds']:.4f} ({t['cublas_seconds']:.4f}) | {t['max_relative_error']:.2e} "
            f"({t['cublas_max_relative_error']:.2e}) | {t['not_correctly_rounded']} of {t['parts_checked']} |"
        )
    if args.out:
        with open(args.out, "w", newline="") as f:
            out = csv.DictWriter(f, fieldnames=list(table[0]) if table else ["routine"])
            out.writeheader()
            out.writerows(table)


if __name__ == "__main__":
    main()
