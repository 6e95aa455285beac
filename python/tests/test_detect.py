"""detect(): fitting a datapath to recorded results needs no GPU."""

import numpy as np
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
