"""compare() and validate(): mismatch reports with positions and ulp distances."""

import numpy as np
import pytest
from conftest import from_float

import tcemu


@pytest.fixture
def gemm(rng):
    dp = tcemu.preset("sm90", "bf16", "fp32")
    a = from_float(rng.standard_normal((12, 40)), "bf16")
    b = from_float(rng.standard_normal((40, 9)), "bf16")
    c = rng.standard_normal((12, 9)).astype(np.float32)
    return dp, a, b, c, tcemu.matmul(a, b, c, datapath=dp, beta=1.0)


def test_validate_finds_a_planted_mismatch(gemm):
    dp, a, b, c, d = gemm
    assert tcemu.validate(a, b, c, d, datapath=dp, beta=1.0).count == 0
    planted = d.copy()
    planted[7, 3] = np.nextafter(np.nextafter(d[7, 3], np.inf), np.inf)  # 2 ulps up
    report = tcemu.validate(a, b, c, planted, datapath=dp, beta=1.0)
    assert (report.count, report.rows, report.cols) == (1, 12, 9)
    assert report.share == pytest.approx(1 / 108)
    assert report.max_ulps == 2 and report.histogram[2] == 1 and sum(report.histogram) == 1
    (i, j, expected, got, distance), = report.differences
    assert (i, j, distance) == (7, 3, 2)
    assert expected == d.view(np.uint32)[7, 3] and got == planted.view(np.uint32)[7, 3]
    text = str(report)
    assert "1 of 108 elements" in text and "(7, 3)" in text and "2 ulps" in text
    assert not report and not report.equal


def test_validate_other_options_and_fortran_result(gemm):
    dp, a, b, c, d = gemm
    # The same D as the initial accumulator's chain: C enters first, not in the epilogue.
    chained = tcemu.matmul(a, b, c, datapath=dp, beta=1.0, c_input="initial_accumulator")
    report = tcemu.validate(a, b, c, np.asfortranarray(chained), datapath=dp, beta=1.0,
                            c_input="initial_accumulator")
    assert report.count == 0 and report
    wrong = tcemu.validate(a, b, c, chained, datapath=dp, beta=1.0)
    assert wrong.count == np.count_nonzero(chained.view(np.uint32) != d.view(np.uint32))


def test_compare_nan_and_formats():
    x = np.array([[1.0, np.nan], [0.0, 2.0]], np.float32)
    y = x.copy()
    y[1, 0] = -0.0
    y[0, 1] = 1.0
    r = tcemu.compare(x, y)
    assert r.count == 2 and r.nan_involved == 1 and r.histogram[0] == 1
    assert [(i, j) for i, j, *_ in r.differences] == [(0, 1), (1, 0)]
    assert r.differences[0][4] is None
    bits = tcemu.compare(x.view(np.uint32), y.view(np.uint32), format="fp32")
    assert bits.count == 2
    with pytest.raises(TypeError, match="format="):
        tcemu.compare(x.view(np.uint32), y.view(np.uint32))
    with pytest.raises(ValueError):
        tcemu.compare(x, y[:1])


def test_validate_errors(gemm):
    dp, a, b, c, d = gemm
    with pytest.raises(ValueError, match="d_recorded: expected a 2-D array"):
        tcemu.validate(a, b, c, d[0], datapath=dp)
    with pytest.raises(TypeError, match="d_recorded: dtype float16 does not hold fp32"):
        tcemu.validate(a, b, c, d.astype(np.float16), datapath=dp)
