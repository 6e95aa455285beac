"""The accurate-GEMM schemes: Ozaki, Markidis, Dot2 and ExBLAS, against exact products."""

from fractions import Fraction

import numpy as np
import pytest
from exact import directed, exact_sums, round_to, ulps

import tcemu


def wide(rng, shape, spread=30):
    """Values whose magnitudes spread over 2^-spread .. 2^spread, half of them negative."""
    return rng.standard_normal(shape) * 2.0 ** rng.integers(-spread, spread, shape)


@pytest.fixture
def problem(rng):
    a = wide(rng, (5, 24))
    b = wide(rng, (24, 4))
    b[:, 1] = -b[:, 0] * (1 + 2.0**-40)  # near-cancelling columns: naive sums lose everything
    return a, b, round_to(exact_sums(a, b), np.float64)


@pytest.mark.parametrize(
    "backend,preset",
    [("emulator", None), ("emulator", ("sm70", "fp16")), ("emulator", ("sm80", "bf16")),
     ("cpu64", None)],
)
def test_ozaki_cr_is_correctly_rounded(problem, backend, preset):
    a, b, expected = problem
    datapath = tcemu.preset(*preset, "fp32") if preset else None
    d = tcemu.ozaki_gemm(a, b, mode="cr", backend=backend, datapath=datapath)
    np.testing.assert_array_equal(d, expected)
    # Any layout of the operands gives the same bits.
    np.testing.assert_array_equal(
        tcemu.ozaki_gemm(np.asfortranarray(a), b.T.copy().T, mode="cr", backend=backend), d
    )


@pytest.mark.parametrize("direction", ["upward", "downward", "toward-zero"])
@pytest.mark.parametrize("scheme", [{}, {"int8": True}, {"crt": True}, {"backend": "cpu64"}])
def test_ozaki_cr_rounds_in_the_direction_asked(problem, direction, scheme):
    a, b, nearest = problem
    expected = directed(exact_sums(a, b), direction)
    assert np.count_nonzero(expected != nearest) >= expected.size // 4  # the direction matters
    d = tcemu.ozaki_gemm(a, b, mode="cr", rounding=direction, **scheme)
    np.testing.assert_array_equal(d.view(np.uint64), expected.view(np.uint64))


@pytest.mark.parametrize("direction", ["nearest", "upward", "downward", "toward-zero"])
@pytest.mark.parametrize("scheme", [{}, {"int8": True}, {"crt": True}, {"backend": "cpu64"}])
def test_ozaki_float32_cr_rounds_once_in_the_direction_asked(rng, direction, scheme):
    # Rows whose exact sums lie just off a binary32 midpoint or number, closer than binary64
    # resolves (1 + 2^-24 + 2^-80, 1 +- 2^-80, 2^-150 + 2^-220 with B's 2^-100), and random ones:
    # rounding to float64 first, then to float32, gives other bits somewhere.
    a = np.array([[1, 2.0**-24, 2.0**-80], [1, 2.0**-80, 0], [1, -(2.0**-80), 0],
                  [2.0**-50, 2.0**-120, 0]], np.float32)
    a = np.vstack([a, rng.standard_normal((4, 3)).astype(np.float32)])
    b = np.array([[1, 2.0**-100], [1, 2.0**-100], [1, 2.0**-100]], np.float32)
    sums = exact_sums(a, b)
    expected = directed(sums, direction, np.float32)
    via_float64 = round_to(sums, np.float64)
    twice = directed([[Fraction(float(x)) for x in row] for row in via_float64], direction,
                     np.float32)
    assert np.count_nonzero(twice.view(np.uint32) != expected.view(np.uint32)) > 0
    d = tcemu.ozaki_gemm(a, b, mode="cr", rounding=direction, **scheme)
    assert d.dtype == np.float32
    np.testing.assert_array_equal(d.view(np.uint32), expected.view(np.uint32))
    # complex64: each part of (a - i a) b rounded so.
    za, zb = (a - 1j * a).astype(np.complex64), b.astype(np.complex64)
    z = tcemu.ozaki_gemm(za, zb, mode="cr", rounding=direction, **scheme)
    assert z.dtype == np.complex64
    want = directed(exact_sums(*real_form(za, zb)), direction, np.float32)
    np.testing.assert_array_equal(parts_bits(z), want.view(np.uint32))


def test_ozaki_directed_rounding_is_refused_outside_cr_and_c_equals_ab(problem):
    a, b, _ = problem
    with pytest.raises(ValueError, match="needs mode cr"):
        tcemu.ozaki_gemm(a, b, mode="dp", rounding="upward")
    with pytest.raises(ValueError, match="alpha = 1, beta = 0"):
        tcemu.ozaki_gemm(a, b, mode="cr", rounding="upward", alpha=2.0)
    with pytest.raises(ValueError, match="rounding must be"):
        tcemu.ozaki_gemm(a, b, mode="cr", rounding="up")


def real_form(a, b):
    """[Ar Ai] and [[Br Bi], [-Bi Br]]: their product is [Re Im] of a @ b, each part one real
    inner product (BlasRoutines::zgemm)."""
    return (np.hstack([a.real, a.imag]),
            np.block([[b.real, b.imag], [-b.imag, b.real]]))


def parts_bits(z):
    """The real and imaginary parts of a complex array side by side, as bit patterns."""
    bits = np.uint64 if z.dtype == np.complex128 else np.uint32
    return np.ascontiguousarray(np.hstack([z.real, z.imag])).view(bits)


@pytest.mark.parametrize("direction", ["nearest", "upward", "downward"])
@pytest.mark.parametrize("scheme", [{}, {"int8": True}, {"crt": True}, {"backend": "cpu64"}])
def test_ozaki_complex_cr_rounds_each_part(rng, direction, scheme):
    a = wide(rng, (5, 12)) + 1j * wide(rng, (5, 12))
    b = wide(rng, (12, 4)) + 1j * wide(rng, (12, 4))
    sums = exact_sums(*real_form(a, b))
    expected = round_to(sums, np.float64) if direction == "nearest" else directed(sums, direction)
    d = tcemu.ozaki_gemm(a, b, mode="cr", rounding=direction, **scheme)
    assert d.dtype == np.complex128
    np.testing.assert_array_equal(parts_bits(d), expected.view(np.uint64))


def test_ozaki_complex_is_the_real_routine_on_the_real_form(rng):
    for dtype, real in ((np.complex128, np.float64), (np.complex64, np.float32)):
        a = (rng.standard_normal((6, 9)) + 1j * rng.standard_normal((6, 9))).astype(dtype)
        b = (rng.standard_normal((9, 5)) + 1j * rng.standard_normal((9, 5))).astype(dtype)
        c = (rng.standard_normal((6, 5)) + 1j * rng.standard_normal((6, 5))).astype(dtype)
        a2, b2 = real_form(a, b)
        # Real alpha and beta: dgemm's (sgemm's) bits on the real form, any layout of a.
        want = tcemu.ozaki_gemm(a2, b2, np.hstack([c.real, c.imag]), alpha=1.5, beta=-0.5)
        got = tcemu.ozaki_gemm(np.asfortranarray(a), b, c, alpha=1.5, beta=-0.5)
        assert got.dtype == dtype
        np.testing.assert_array_equal(parts_bits(got), np.ascontiguousarray(want).view(
            np.uint64 if real is np.float64 else np.uint32))
    with pytest.raises(ValueError, match="complex alpha or beta needs complex arrays"):
        tcemu.ozaki_gemm(a2, b2, alpha=1j)
    with pytest.raises(TypeError, match="is not complex64"):
        tcemu.ozaki_gemm(a, b2)


@pytest.mark.parametrize("backend", ["emulator", "cpu64"])
def test_ozaki_int8_cr_is_correctly_rounded_and_dp_accurate(problem, backend):
    a, b, expected = problem
    cr = tcemu.ozaki_gemm(a, b, mode="cr", int8=True, backend=backend)
    np.testing.assert_array_equal(cr, expected)
    d = tcemu.ozaki_gemm(a, b, mode="dp", int8=True, backend=backend)
    assert np.all(np.abs(d - expected) <= 4 * 2.0**-53 * (np.abs(a) @ np.abs(b)))
    with pytest.raises(ValueError, match="no datapath"):
        tcemu.ozaki_gemm(a, b, int8=True, datapath=tcemu.preset("sm90", "fp16", "fp32"))


def test_ozaki_crt_cr_is_correctly_rounded_and_dp_within_its_bound(problem):
    a, b, expected = problem
    np.testing.assert_array_equal(tcemu.ozaki_gemm(a, b, mode="cr", crt=True), expected)
    # dp: the norm scaling with 15 moduli or more (these spreads need more moduli held exactly),
    # so within the normwise bound of 15 moduli.
    d = tcemu.ozaki_gemm(a, b, mode="dp", crt=True)
    norms = np.outer(np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=0))
    bound = np.sqrt(a.shape[1]) * 2.0**-55 * norms + 2.0**-53 * np.abs(expected)
    assert np.all(np.abs(d - expected) <= bound)
    few = tcemu.ozaki_gemm(a, b, mode="tunable", splits=4, crt=True)
    assert np.any(few != expected)
    with pytest.raises(ValueError, match="pick one"):
        tcemu.ozaki_gemm(a, b, int8=True, crt=True)


def test_ozaki_crt_report_names_the_moduli_and_dps_bound(rng):
    # k = 4096 and a narrow spread: dp's bound on the leading k/16 terms already allows the least
    # count (15 moduli), so that bound decides; the report's counts are the call's own.
    a = (rng.random((3, 4096)) - 0.5) * np.exp(0.1 * rng.standard_normal((3, 4096)))
    b = (rng.random((4096, 2)) - 0.5) * np.exp(0.1 * rng.standard_normal((4096, 2)))
    d, report = tcemu.ozaki_gemm(a, b, mode="dp", crt=True, return_report=True)
    np.testing.assert_array_equal(d, tcemu.ozaki_gemm(a, b, mode="dp", crt=True))
    assert report["slices_a"] == 15 and report["dp_bound_met"]
    assert report["dp_bound_terms"] == 4096 // 16
    assert report["gemms"] == 16  # 15 moduli and the bound's one
    assert 40 < report["dp_bound_bits"] <= 58
    # A small k: the whole bound; tunable: no bound at all.
    _, small = tcemu.ozaki_gemm(a[:, :64], b[:64], mode="dp", crt=True, return_report=True)
    assert small["dp_bound_terms"] == 64
    _, tunable = tcemu.ozaki_gemm(a, b, mode="tunable", splits=9, crt=True, return_report=True)
    assert tunable["slices_a"] == 9 and tunable["gemms"] == 9
    assert tunable["dp_bound_terms"] == 0 and tunable["dp_bound_bits"] == 0


def test_ozaki_dp_tunable_and_sgemm(rng, problem):
    a, b, expected = problem
    scale = np.abs(a) @ np.abs(b)
    d = tcemu.ozaki_gemm(a, b, mode="dp")
    assert np.all(np.abs(d - expected) <= 4 * 2.0**-53 * scale)
    c = wide(rng, (5, 4))
    exact_ab = round_to(exact_sums(a, b, 2.0, c, -1.0), np.float64)
    d = tcemu.ozaki_gemm(a, b, c, alpha=2.0, beta=-1.0, mode="dp")
    assert np.all(np.abs(d - exact_ab) <= 8 * 2.0**-53 * (2 * scale + np.abs(c)))
    few = tcemu.ozaki_gemm(a, b, mode="tunable", splits=1, fast=False)
    assert np.max(np.abs(few - expected) / scale) > np.max(np.abs(d - exact_ab) / scale)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    s = tcemu.ozaki_gemm(a32, b32)
    assert s.dtype == np.float32
    exact32 = round_to(exact_sums(a32, b32), np.float32)
    assert np.all(np.abs(s - exact32) <= 4 * 2.0**-24 * (np.abs(a32) @ np.abs(b32)))
    with pytest.raises(ValueError, match="splits"):
        tcemu.ozaki_gemm(a, b, mode="tunable")
    with pytest.raises(ValueError, match="mode must be"):
        tcemu.ozaki_gemm(a, b, mode="fast")


@pytest.mark.parametrize("backend", ["cpu64", "emulator"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_exblas_is_correctly_rounded_and_dot2_within_an_ulp(problem, backend, dtype):
    a, b, _ = problem
    a, b = a.astype(dtype), b.astype(dtype)
    expected = round_to(exact_sums(a, b), dtype)
    d = tcemu.accurate_gemm(a, b, method="exblas", backend=backend, threads=2)
    assert d.dtype == dtype
    np.testing.assert_array_equal(d, expected)
    dot2 = tcemu.accurate_gemm(a, b, method="dot2", backend=backend)
    assert np.max(ulps(dot2, expected)) <= 1
    with pytest.raises(ValueError, match="method must be"):
        tcemu.accurate_gemm(a, b, method="kahan")


def test_markidis_schemes(rng):
    a = rng.standard_normal((16, 64)).astype(np.float32)
    b = rng.standard_normal((64, 8)).astype(np.float32)
    exact = round_to(exact_sums(a, b), np.float32)
    scale = np.abs(a) @ np.abs(b)
    names = tcemu.markidis_schemes()
    assert {"markidis", "halfhalf", "tf32tf32", "3xtf32", "bf16x3", "bf16x9"} <= set(names)
    plain = tcemu.matmul(a, b, datapath=tcemu.preset("sm80", "tf32", "fp32"))
    for name in ["halfhalf", "tf32tf32", "3xtf32", "bf16x9"]:
        d = tcemu.markidis_gemm(a, b, scheme=name, threads=1)
        assert d.dtype == np.float32
        err = np.max(np.abs(d - exact) / scale)
        assert err < 2.0**-20, name
        assert err < np.max(np.abs(plain - exact) / scale) / 8, name  # beats one tf32 GEMM
        np.testing.assert_array_equal(
            tcemu.markidis_gemm(np.asfortranarray(a), b, scheme=name, threads=3), d
        )
    c = rng.standard_normal((16, 8)).astype(np.float32)
    d = tcemu.markidis_gemm(a, b, c, scheme="halfhalf", alpha=2.0, beta=1.0)
    assert np.max(np.abs(d - (2 * exact + c)) / (2 * scale + np.abs(c))) < 2.0**-20
    dp = tcemu.markidis_datapath("halfhalf", "sm70")
    assert dp.input.name == "fp16"
    assert tcemu.markidis_gemm(a, b, scheme="halfhalf", datapath=dp).shape == (16, 8)
    assert "halfhalf" in tcemu.markidis_scheme("halfhalf")


def test_markidis_errors():
    a = np.ones((2, 2), np.float32)
    with pytest.raises(ValueError, match="halfhalf"):
        tcemu.markidis_gemm(a, a, scheme="quarterquarter")
    with pytest.raises(TypeError, match="float64 is not float32"):
        tcemu.markidis_gemm(a.astype(np.float64), a)
    with pytest.raises(ValueError, match="overflow|range|fp16"):
        tcemu.markidis_gemm(a * 1e6, a, scheme="halfhalf")
    with pytest.raises(ValueError, match="backend must be"):
        tcemu.markidis_gemm(a, a, backend="cpu64")
