"""Exact matrix products with fractions.Fraction, rounded once to float64 or float32."""

from fractions import Fraction

import numpy as np


def exact_sums(a, b, alpha=1, c=None, beta=0):
    """alpha A B + beta C exactly, as a list of rows of Fractions."""
    m, k = a.shape
    n = b.shape[1]
    fa = [[Fraction(float(x)) for x in row] for row in a]
    fb = [[Fraction(float(x)) for x in row] for row in b]
    out = []
    for i in range(m):
        row = []
        for j in range(n):
            s = Fraction(alpha) * sum((fa[i][l] * fb[l][j] for l in range(k)), Fraction(0))
            if c is not None:
                s += Fraction(beta) * Fraction(float(c[i, j]))
            row.append(s)
        out.append(row)
    return out


def round_to(sums, dtype):
    """Each exact sum rounded to nearest even in `dtype` (float64 or float32)."""
    out = np.empty((len(sums), len(sums[0])), dtype)
    for i, row in enumerate(sums):
        for j, s in enumerate(row):
            out[i, j] = nearest(s, dtype)
    return out


def nearest(s, dtype):
    x = dtype(float(s))  # float(Fraction) rounds correctly to float64
    if dtype is np.float64:
        return x
    # float64 -> float32 may round twice: choose among the neighbours by the exact distance.
    best = x
    for y in (np.nextafter(x, dtype(-np.inf)), np.nextafter(x, dtype(np.inf))):
        dy, db = abs(Fraction(float(y)) - s), abs(Fraction(float(best)) - s)
        if dy < db or (dy == db and int(y.view(np.uint32)) % 2 == 0):
            best = y
    return best


def directed(sums, direction, dtype=np.float64):
    """Each exact sum rounded to `dtype` (float64 or float32) 'upward', 'downward' or
    'toward-zero' ('nearest': round_to)."""
    out = round_to(sums, dtype)
    if direction == "nearest":
        return out
    for i, row in enumerate(sums):
        for j, s in enumerate(row):
            x = out[i, j]
            up = direction == "upward" or (direction == "toward-zero" and s < 0)
            if up and Fraction(float(x)) < s:
                out[i, j] = np.nextafter(x, dtype(np.inf))
            elif not up and Fraction(float(x)) > s:
                out[i, j] = np.nextafter(x, dtype(-np.inf))
    return out


def ulps(x, y):
    """Distance in units in the last place of float64/float32 arrays of one sign convention."""
    bits = np.int64 if x.dtype == np.float64 else np.int32

    def ordered(v):
        i = v.view(bits).astype(np.int64)
        return np.where(i < 0, np.iinfo(bits).min - i, i)

    return np.abs(ordered(x) - ordered(y))
