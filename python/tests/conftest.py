"""Shared helpers of the Python tests: random operands and the per-element reference."""

import numpy as np
import pytest

import tcemu


@pytest.fixture
def rng():
    return np.random.default_rng(20261124)


def random_bits(rng, shape, fmt):
    """Random finite values of `fmt` as their bit patterns (uint16/uint32/uint8)."""
    f = tcemu.Format(fmt)
    dtype = {1: np.uint8, 2: np.uint16, 4: np.uint32}[(f.container_bits + 7) // 8]
    values = rng.standard_normal(shape) * 2.0 ** rng.integers(-4, 5, shape)
    return from_float(values, fmt).view(dtype)


def from_float(values, fmt):
    """`values` rounded to the array type that holds `fmt` (float32 for tf32, padding cleared)."""
    import ml_dtypes

    dtype = {
        "fp16": np.float16,
        "bf16": ml_dtypes.bfloat16,
        "fp32": np.float32,
        "tf32": np.float32,
        "e4m3": ml_dtypes.float8_e4m3fn,
        "e5m2": ml_dtypes.float8_e5m2,
    }[fmt]
    out = np.asarray(values).astype(dtype)
    if fmt == "tf32":
        out = (out.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    return out


def matmul_by_mma(dp, a, b, c):
    """Every element of A B + C as one mma() case: row i of A, column j of B, C[i, j]."""
    m, k = a.shape
    n = b.shape[1]
    rows = np.repeat(a, n, axis=0)
    cols = np.tile(b.T, (m, 1))
    return tcemu.mma(dp, rows, cols, c.reshape(-1)).reshape(m, n)
