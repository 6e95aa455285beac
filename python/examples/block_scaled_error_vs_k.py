"""The error of block-scaled GEMMs against k on Blackwell's tcgen05.mma, RZ against RN and exact.

    python block_scaled_error_vs_k.py OUT_DIR [--k 16,64,...] [--seeds 3] [--size 16]

For each k, seed and input distribution (standard normal, uniform in [0, 1)) it draws fp32 A
(size x k) and B (k x size), quantizes them to six formats and multiplies them on the sm100
tcgen05.mma datapath of each (presets "MMA-Sim 2.1.1", docs/presets.md):

  NVFP4          quantize_nvfp4 (e2m1, ue4m3 per 16, fp32 per tensor), kind::mxf4nvf4.block16
  MXFP4          quantize_mx e2m1 (ue8m0 per 32), kind::mxf4.block32
  MXFP6 e2m3     quantize_mx e2m3, kind::mxf8f6f4.block32
  MXFP6 e3m2     quantize_mx e3m2, kind::mxf8f6f4.block32
  MXFP8 e4m3     quantize_mx e4m3, kind::mxf8f6f4.block32
  FP8 e4m3       x / s rounded to e4m3 with one fp32 s = amax / 448 per tensor, kind::f8f6f4

NVFP4's and FP8's per-tensor scales multiply D afterwards, in float64. Three datapaths each:
"preset" (the hardware's: every product or scaled group truncated to F fraction bits below the
block's largest alignment exponent, F = 25 for f8f6f4/mxf8f6f4 and 35 for mxf4/mxf4nvf4, the
block's sum then rounded toward zero to fp32); "RN blocks" (block_rounding = "rn": the same
truncated terms, the block's sum rounded to nearest even; the model has no separate rounding of
the alignment shift, which always truncates); "exact alignment" (alignment_fraction_bits = None
and RN: each instruction's products, scaled groups and c summed exactly and rounded to nearest
once, so one rounding to fp32 per instruction_k = 32 or 64 values of k).

Two errors per element, both relative to the sum of the magnitudes of the terms,
e = |d - r| / sum_k |a b| (for uniform inputs this is the relative error |d - r| / |r|):
reference "quantized" is the accumulation error alone, against the exact product of the
quantized operands (D before the per-tensor scales; computed in integers, exact); reference
"fp32" is the total error, against the product of the original fp32 A and B in float64 (whose own
error is below k 2^-53 sum |a b|, under 1e-11 here). Beside the datapaths, "fp32 of the exact
product" is the exact quantized product rounded once to nearest fp32: the least error an fp32 D
can have. Rows give the mean and the maximum over all elements and seeds.

Writes OUT_DIR/block_scaled_error_vs_k.csv and .png; progress on stderr.
docs/results/block_scaled_error_vs_k.csv and .png are this program's output with the defaults
(`python3 python/examples/block_scaled_error_vs_k.py docs/results`); docs/results/
block-scaled-error-vs-k.md reads them.
"""

import argparse
import csv
import pathlib
import sys
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

import tcemu  # noqa: E402

NAME = "block_scaled_error_vs_k"
DISTRIBUTIONS = ("normal", "uniform")
FLOOR = "fp32 of the exact product"
COLUMNS = ("format", "instruction", "datapath", "distribution", "k", "reference", "mean_error",
           "max_error")

# Element and scale codes as float64 values (ml_dtypes' formats keep a code in a byte's low bits).
ELEMENT = {"e2m1": ml_dtypes.float4_e2m1fn, "e2m3": ml_dtypes.float6_e2m3fn,
           "e3m2": ml_dtypes.float6_e3m2fn, "e4m3": ml_dtypes.float8_e4m3fn}


def values(codes, dtype):
    return codes.view(dtype).astype(np.float64)


def ue4m3_values(codes):
    return values(codes & 0x7F, ml_dtypes.float8_e4m3fn)  # ue4m3 ignores bit 7 (PTX ISA)


def expand(scales, block, k, axis):
    """Block scales (m x s or s x n) repeated along k to the operand's shape."""
    return np.repeat(scales, block, axis=axis).take(np.arange(k), axis=axis)


def quantize_block_scaled(element, block, quantizer):
    """A quantizer of (a, b) for a block-scaled format: the codes and scales the GEMM takes, the
    scaled values in float64 and the per-tensor factors of A and B."""

    def run(a, b):
        k = a.shape[1]
        if quantizer == "nvfp4":
            ca, sa, ta = tcemu.quantize_nvfp4(a, block)
            cb, sb, tb = tcemu.quantize_nvfp4(b, block, axis=0)
            scale_values, tensor = ue4m3_values, (float(ta), float(tb))
        else:
            ca, sa = tcemu.quantize_mx(a, element, block)
            cb, sb = tcemu.quantize_mx(b, element, block, axis=0)
            scale_values, tensor = (lambda c: values(c, ml_dtypes.float8_e8m0fnu)), (1.0, 1.0)
        va = values(ca, ELEMENT[element]) * expand(scale_values(sa), block, k, 1)
        vb = values(cb, ELEMENT[element]) * expand(scale_values(sb), block, k, 0)
        return {"a": ca, "b": cb, "scale_a": sa, "scale_b": sb}, va, vb, tensor

    return run


def quantize_fp8_per_tensor(a, b):
    """e4m3 values of x / s, s = amax(x) / 448 in fp32, rounded to nearest even by ml_dtypes
    (|x / s| exceeds 448 only by the division's rounding, and rounds back to 448)."""
    quantized, tensor = [], []
    for x in (a, b):
        s = np.float32(np.max(np.abs(x))) / np.float32(448)
        quantized.append((x / s).astype(ml_dtypes.float8_e4m3fn))
        tensor.append(float(s))
    qa, qb = quantized
    return {"a": qa, "b": qb}, qa.astype(np.float64), qb.astype(np.float64), tuple(tensor)


# (format, element, instruction, quantizer)
FORMATS = (
    ("NVFP4", "e2m1", "tcgen05.mxf4nvf4.block16.ue4m3", quantize_block_scaled("e2m1", 16, "nvfp4")),
    ("MXFP4", "e2m1", "tcgen05.mxf4.block32", quantize_block_scaled("e2m1", 32, "mx")),
    ("MXFP6 e2m3", "e2m3", "tcgen05.mxf8f6f4.block32", quantize_block_scaled("e2m3", 32, "mx")),
    ("MXFP6 e3m2", "e3m2", "tcgen05.mxf8f6f4.block32", quantize_block_scaled("e3m2", 32, "mx")),
    ("MXFP8 e4m3", "e4m3", "tcgen05.mxf8f6f4.block32", quantize_block_scaled("e4m3", 32, "mx")),
    ("FP8 e4m3 per-tensor", "e4m3", "tcgen05", quantize_fp8_per_tensor),
)


def datapaths(element, instruction):
    preset = tcemu.preset("sm100", element, "fp32", instruction)
    rn = preset.copy()
    rn.block_rounding = "rn"
    exact = rn.copy()
    exact.alignment_fraction_bits = None
    return {"preset": preset, "RN blocks": rn, "exact alignment": exact}


def integers(v):
    """v (float64, every value dyadic) as int64 n with v = n 2^e, and e: the exponent of the
    lowest set bit over all nonzero values. frexp gives v = f 2^x, 0.5 <= |f| < 1; f 2^53 is an
    integer whose lowest set bit is v's at 2^(x - 53 + trailing zeros)."""
    f, x = np.frexp(v[v != 0])
    mantissa = np.abs(f * 2.0**53).astype(np.int64)
    lowest = np.frexp((mantissa & -mantissa).astype(np.float64))[1] - 1  # log2 of the low bit
    e = int((x - 53 + lowest).min()) if f.size else 0
    n = np.ldexp(v, -e)  # exact: a power-of-two scaling of integers below 2^62
    if np.abs(n).max(initial=0) >= 2.0**62:
        raise ValueError(f"the quantized values reach 2^{np.log2(np.abs(n).max()):.0f} units of "
                         f"2^{e}: beyond int64")
    return n.astype(np.int64), e


def exact_product(va, vb):
    """The exact product of the quantized values as integers r and s = sum |a b| with their unit
    2^e; raises where int64 could overflow (every partial sum is at most s's largest)."""
    ia, ea = integers(va)
    ib, eb = integers(vb)
    bound = (np.abs(ia).astype(np.float64) @ np.abs(ib).astype(np.float64)).max(initial=0)
    if bound >= 2.0**61:  # float64's estimate is within k 2^-53 of the true bound
        raise ValueError(f"sum |a b| reaches 2^{np.log2(bound):.1f} units: beyond int64")
    return ia @ ib, np.abs(ia) @ np.abs(ib), ea + eb


def fp32_rounding_error(r):
    """|RN_fp32(r) - r| for integers r (the unit cancels: rounding to 24 significant bits)."""

    def one(n):
        n = abs(int(n))
        shift = max(n.bit_length() - 24, 0)
        if shift == 0:
            return 0
        q, rest = divmod(n, 1 << shift)
        half = 1 << (shift - 1)
        q += rest > half or (rest == half and q & 1)
        return abs((q << shift) - n)

    return np.array([one(n) for n in r.ravel()], dtype=np.float64).reshape(r.shape)


def accumulation_error(d, r, s, unit):
    """|d - r| / s with d an fp32 result and r, s integers of the given unit. Every term the
    datapath sums is a multiple of 2^unit, truncating it to a coarser grid keeps it one, and
    rounding a multiple of 2^unit to 24 bits gives one again (or the same value), so d / 2^unit
    is an integer and the difference is exact."""
    n = np.ldexp(d.astype(np.float64), -unit)
    if not np.array_equal(n, np.round(n)) or np.abs(n).max(initial=0) >= 2.0**62:
        raise ValueError("D is not a multiple of the operands' unit: the exact error needs "
                         "wider integers")
    return np.abs(n.astype(np.int64) - r).astype(np.float64) / s.astype(np.float64)


def draw(distribution, seed, k, size):
    """A and B of one (distribution, seed, k), independent of the other k and seeds run."""
    rng = np.random.default_rng([seed, k, DISTRIBUTIONS.index(distribution)])
    sample = rng.standard_normal if distribution == "normal" else rng.random
    return (sample((size, k)).astype(np.float32), sample((k, size)).astype(np.float32))


def run(ks, seeds, size, distributions):
    errors = {}  # (format, datapath, distribution, k, reference) -> list of error arrays

    def record(key, e):
        errors.setdefault(key, []).append(e)

    for k in ks:
        start = time.time()
        for distribution in distributions:
            for seed in range(seeds):
                a, b = draw(distribution, seed, k, size)
                reference = a.astype(np.float64) @ b.astype(np.float64)
                magnitude = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
                for name, element, instruction, quantize in FORMATS:
                    operands, va, vb, (ta, tb) = quantize(a, b)
                    r, s, unit = exact_product(va, vb)
                    record((name, FLOOR, distribution, k, "quantized"),
                           fp32_rounding_error(r) / s.astype(np.float64))
                    scales = {key: operands[key] for key in ("scale_a", "scale_b")
                              if key in operands}
                    for label, dp in datapaths(element, instruction).items():
                        d = tcemu.matmul(operands["a"], operands["b"], datapath=dp, threads=0,
                                         **scales)
                        record((name, label, distribution, k, "quantized"),
                               accumulation_error(d, r, s, unit))
                        total = d.astype(np.float64) * ta * tb
                        record((name, label, distribution, k, "fp32"),
                               np.abs(total - reference) / magnitude)
        print(f"k = {k}: {time.time() - start:.1f} s", file=sys.stderr, flush=True)
    instruction_of = {name: instruction for name, _, instruction, _ in FORMATS}
    rows = []
    for (name, label, distribution, k, ref), arrays in errors.items():
        e = np.concatenate([x.ravel() for x in arrays])
        rows.append((name, instruction_of[name], label, distribution, k, ref, e.mean(), e.max()))
    return rows


ZERO_AT = 1e-13  # where the plot draws an error of exactly 0 (the log axis has no 0)


def plot(rows, distributions, path):
    names = [f[0] for f in FORMATS]
    figure, axes = plt.subplots(len(distributions), len(names), sharex=True, sharey=True,
                                figsize=(3.2 * len(names), 3.3 * len(distributions)),
                                squeeze=False)
    styles = {"preset": "C0", "RN blocks": "C1", "exact alignment": "C2", FLOOR: "0.6"}
    for row, distribution in zip(axes, distributions):
        for ax, name in zip(row, names):
            for ref, line in (("quantized", "o-"), ("fp32", "x--")):
                for label, color in styles.items():
                    points = [(r[4], max(r[6], ZERO_AT)) for r in rows if r[0] == name
                              and r[2] == label and r[3] == distribution and r[5] == ref]
                    if points and (ref == "quantized" or label == "preset"):
                        ax.loglog(*zip(*points), line, color=color, markersize=3,
                                  label=label if ref == "quantized" else "preset, total error")
            ax.set_title(f"{name}, {distribution}", fontsize=9)
            ax.grid(True, which="major", alpha=0.3)
    ticks = [ZERO_AT] + [10.0**e for e in range(-11, 0, 2)]
    axes[0, 0].set_yticks(ticks, ["0"] + [f"1e{e}" for e in range(-11, 0, 2)])
    axes[0, 0].set_ylim(ZERO_AT / 3, 1)
    for ax in axes[-1]:
        ax.set_xlabel("k")
    for ax in axes[:, 0]:
        ax.set_ylabel("mean |d - r| / sum |a b|")
    axes[0, 0].legend(fontsize=7)
    figure.suptitle("sm100 tcgen05.mma, fp32 D: accumulation error against the exact product of "
                    "the quantized operands (solid; 0 on the bottom line) and total error against "
                    "the fp32 inputs' product (dashed)", fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 2)[2], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", type=pathlib.Path, help="where the CSV and PNG go")
    parser.add_argument("--k", default=",".join(str(2**e) for e in range(4, 17)),
                        help="comma-separated k (default: %(default)s)")
    parser.add_argument("--seeds", type=int, default=3,
                        help="A and B drawn per k and distribution (default: %(default)s)")
    parser.add_argument("--size", type=int, default=16,
                        help="m = n of the GEMMs (default: %(default)s)")
    parser.add_argument("--distributions", default=",".join(DISTRIBUTIONS),
                        help="comma-separated, of normal and uniform (default: %(default)s)")
    args = parser.parse_args()
    try:
        ks = [int(k) for k in args.k.split(",")]
    except ValueError:
        parser.error(f"--k: expected comma-separated integers, got '{args.k}'")
    if any(k < 1 for k in ks):
        parser.error(f"--k: every k must be at least 1, got '{args.k}'")
    if args.seeds < 1 or args.size < 1:
        parser.error("--seeds and --size must be at least 1")
    distributions = args.distributions.split(",")
    for distribution in distributions:
        if distribution not in DISTRIBUTIONS:
            parser.error(f"--distributions: '{distribution}' is not one of "
                         f"{', '.join(DISTRIBUTIONS)}")

    rows = run(ks, args.seeds, args.size, distributions)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    with open(args.out_dir / f"{NAME}.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(COLUMNS)
        writer.writerows(row[:6] + tuple(f"{x:.6g}" for x in row[6:]) for row in rows)
    plot(rows, distributions, args.out_dir / f"{NAME}.png")


if __name__ == "__main__":
    main()
