"""examples/block_scaled_error_vs_k.py runs and writes its CSV and PNG; its exact references are
exact (the datapath with exact alignment equals the exact product rounded once to fp32 wherever
one instruction covers k); its rows equal those of the stored docs/results/
block_scaled_error_vs_k.csv for the k it runs, so the stored figure is current."""

import csv
import importlib.util
import math
import pathlib
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).parents[2]
EXAMPLE = ROOT / "python" / "examples" / "block_scaled_error_vs_k.py"
STORED = ROOT / "docs" / "results" / "block_scaled_error_vs_k.csv"
KS = (16, 32, 64, 128)
STALE = ("docs/results/block_scaled_error_vs_k.csv is stale: "
         "python3 python/examples/block_scaled_error_vs_k.py docs/results")


def read_rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def load_example():
    spec = importlib.util.spec_from_file_location("block_scaled_error_vs_k", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("block_scaled_error_vs_k")
    subprocess.run([sys.executable, str(EXAMPLE), str(out), "--k", ",".join(map(str, KS))],
                   check=True)
    return out


@pytest.fixture(scope="module")
def rows(out_dir):
    return read_rows(out_dir / "block_scaled_error_vs_k.csv")


def table(rows, column):
    return {(r["format"], r["datapath"], r["distribution"], int(r["k"]), r["reference"]):
            float(r[column]) for r in rows}


def test_columns_and_rows(out_dir, rows):
    with open(out_dir / "block_scaled_error_vs_k.csv") as f:
        assert next(csv.reader(f)) == ["format", "instruction", "datapath", "distribution", "k",
                                       "reference", "mean_error", "max_error"]
    # 6 formats x 2 distributions x k x (the fp32 floor + 3 datapaths x 2 references)
    assert len(rows) == 6 * 2 * len(KS) * 7
    assert (out_dir / "block_scaled_error_vs_k.png").read_bytes()[:4] == b"\x89PNG"


def test_exact_alignment_is_the_exact_product_rounded_once(rows):
    # Where one instruction covers k (K = 32 on mxf8f6f4 and f8f6f4, 64 on mxf4 and mxf4nvf4),
    # exact alignment with RN sums every term and c exactly and rounds once: its D is the exact
    # product of the quantized operands rounded to nearest fp32, so its errors equal the floor's
    # to the last bit. Fails if the exact reference, the decoding of the scales or the datapath
    # were wrong.
    instruction_k = {"tcgen05.mxf4nvf4.block16.ue4m3": 64, "tcgen05.mxf4.block32": 64}
    checked = 0
    for column in ("mean_error", "max_error"):
        errors = table(rows, column)
        for r in rows:
            k, fmt, dist = int(r["k"]), r["format"], r["distribution"]
            if r["datapath"] == "exact alignment" and r["reference"] == "quantized" and (
                    k <= instruction_k.get(r["instruction"], 32)):
                floor = errors[(fmt, "fp32 of the exact product", dist, k, "quantized")]
                assert float(r[column]) == floor, r
                assert floor <= 2.0**-24
                checked += 1
    assert checked == 2 * 2 * (2 * 3 + 4 * 2)


def test_rz_costs_and_quantization_dominates(rows):
    mean = table(rows, "mean_error")
    for fmt in ("MXFP8 e4m3", "FP8 e4m3 per-tensor"):
        # uniform inputs: every truncation goes one way, so RZ's error exceeds RN's, which is
        # never below exact alignment's floor
        for k in (64, 128):
            preset = mean[(fmt, "preset", "uniform", k, "quantized")]
            rn = mean[(fmt, "RN blocks", "uniform", k, "quantized")]
            floor = mean[(fmt, "fp32 of the exact product", "uniform", k, "quantized")]
            assert preset > rn >= floor > 0
    for key, total in mean.items():
        fmt, datapath, dist, k, reference = key
        if reference == "fp32":  # the quantization error is orders above the accumulation's
            assert total > 1e4 * mean[(fmt, datapath, dist, k, "quantized")], key


def test_fp32_rounding_error_is_round_to_nearest_even():
    # Integers below 2^53 convert to float64 exactly, so float32(float64(n)) rounds once.
    example = load_example()
    rng = np.random.default_rng(5)
    n = rng.integers(-2**52, 2**52, size=2000, dtype=np.int64) >> rng.integers(0, 40, size=2000)
    ties = np.array([2**25 + 2, 2**25 + 6, -(2**26 + 4), 2**24 + 1, 2**24 + 3], dtype=np.int64)
    n = np.concatenate([n, ties])
    expected = np.abs(n.astype(np.float64).astype(np.float32).astype(np.float64) - n)
    assert np.array_equal(example.fp32_rounding_error(n), expected)


def test_stored_figure_is_current(rows):
    # Each (distribution, seed, k) draws from its own generator, so a short run reproduces the
    # stored CSV's rows of its k. The emulator's bits and the exact references are exact; the
    # tolerance only absorbs NumPy's summation order in the mean and the CSV's 6 digits.
    stored = {tuple(r[c] for c in ("format", "datapath", "distribution", "k", "reference")): r
              for r in read_rows(STORED)}
    for new in rows:
        key = tuple(new[c] for c in ("format", "datapath", "distribution", "k", "reference"))
        assert key in stored, (key, STALE)
        for column in ("mean_error", "max_error"):
            assert math.isclose(float(new[column]), float(stored[key][column]), rel_tol=1e-5,
                                abs_tol=0), (new, stored[key], STALE)
