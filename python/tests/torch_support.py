"""Shared helpers of the tcemu.torch tests: bit views and tcemu.matmul on torch operands."""

import numpy as np
import torch

import tcemu


def bits(t):
    """t's bit patterns as an integer tensor (float32 -> int32, float64 -> int64, ...)."""
    t = t.detach().contiguous()
    return t.view(
        {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]
    )


def assert_bits(got, expected, what=""):
    assert got.dtype == expected.dtype, f"{what}: dtype {got.dtype}, expected {expected.dtype}"
    assert (
        got.shape == expected.shape
    ), f"{what}: shape {tuple(got.shape)}, expected {tuple(expected.shape)}"
    differ = int((bits(got) != bits(expected)).sum())
    assert differ == 0, f"{what}: {differ} of {got.numel()} elements differ in their bits"


def reference(a, b, dp, c=None, alpha=1.0, beta=0.0):
    """tcemu.matmul of a, b (float32 torch tensors, 2-D) rounded by PyTorch's own cast to the
    datapath's fp16/bf16 input, as a float32 tensor."""
    held = {"fp16": torch.float16, "bf16": torch.bfloat16}[dp.input.name]
    cc = None if c is None else c.detach().float().contiguous().numpy()
    d = tcemu.matmul(
        a.detach().to(held), b.detach().to(held), cc, datapath=dp, alpha=alpha, beta=beta
    )
    return torch.from_numpy(np.asarray(d))


def batched_reference(a, b, dp, alpha=1.0):
    return torch.stack([reference(a[i], b[i], dp, alpha=alpha) for i in range(a.shape[0])])
