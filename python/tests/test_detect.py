"""detect(): fitting a datapath to recorded results needs no GPU."""

import numpy as np
import pytest
from conftest import random_bits

import tcemu


def test_detect_recovers_a_datapath_that_reproduces_the_results(rng):
    truth = tcemu.preset("sm80", "fp16", "fp32")
    a = random_bits(rng, (3000, 16), "fp16")
    b = random_bits(rng, (3000, 16), "fp16")
    c = random_bits(rng, (3000,), "fp32")
    d = tcemu.mma(truth, a, b, c)
    fit = tcemu.detect(a, b, c, d, input="fp16", accumulator="fp32")
    assert fit.cases == 3000 and fit.mismatches == 0
    again = tcemu.mma(fit.datapath, a, b, c)
    np.testing.assert_array_equal(again.view(np.uint32), d.view(np.uint32))
    assert "mismatches" in repr(fit)


def test_detect_fits_the_block_scaled_fields(rng):
    # NVFP4 cases whose scales spread over ue4m3's range, with the alignment narrowed to 20
    # fraction bits so that the truncation shows: the fit reproduces every result and finds F.
    truth = tcemu.preset("sm100", "e2m1", "fp32", "tcgen05.mxf4nvf4.block16.ue4m3")
    truth.alignment_fraction_bits = 20
    n, k = 3000, 64
    a = rng.integers(0, 16, (n, k), dtype=np.uint8)
    b = rng.integers(0, 16, (n, k), dtype=np.uint8)
    c = np.zeros(n, np.float32)
    scale_a = rng.integers(0x08, 0x78, (n, k // 16), dtype=np.uint8)
    scale_b = rng.integers(0x08, 0x78, (n, k // 16), dtype=np.uint8)
    d = tcemu.mma(truth, a, b, c, scale_a=scale_a, scale_b=scale_b)
    fit = tcemu.detect(a, b, c, d, input="e2m1", accumulator="fp32", scale_block=16,
                       scale_format="ue4m3", scale_a=scale_a, scale_b=scale_b)
    assert fit.mismatches == 0, fit
    assert fit.datapath.alignment_fraction_bits == 20
    assert fit.datapath.scale_block == 16
    again = tcemu.mma(fit.datapath, a, b, c, scale_a=scale_a, scale_b=scale_b)
    np.testing.assert_array_equal(again.view(np.uint32), d.view(np.uint32))
    with pytest.raises(ValueError, match="come together"):
        tcemu.detect(a, b, c, d, input="e2m1", accumulator="fp32", scale_block=16)
    with pytest.raises(ValueError, match="scale_a"):
        tcemu.detect(a, b, c, d, input="e2m1", accumulator="fp32", scale_block=16,
                     scale_format="ue4m3", scale_a=scale_a[:, :2], scale_b=scale_b)
