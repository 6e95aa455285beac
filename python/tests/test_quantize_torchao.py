"""quantize_mx() and quantize_nvfp4() against torchao itself (PyPI's torchao, on PyTorch), bits
compared: torchao.prototype.mx_formats.mx_tensor.to_mx with the FLOOR scale (OCP MX v1.0) for
MXFP8/MXFP6/MXFP4, and nvfp4_tensor.nvfp4_quantize with per_tensor_amax_to_scale for NVFP4, on
float32 and bfloat16 inputs over many binades. scripts/setup.sh installs torch and torchao, so CI
runs this; test_quantize.py checks the same recipes through NumPy ports and ml_dtypes.
"""

import ml_dtypes
import numpy as np
import pytest

import tcemu

torch = pytest.importorskip("torch", reason="PyTorch is not installed (scripts/setup.sh installs it)")
mx_tensor = pytest.importorskip(
    "torchao.prototype.mx_formats.mx_tensor", reason="torchao is not installed (scripts/setup.sh)"
)
from torchao.prototype.mx_formats.constants import DTYPE_FP6_E2M3, DTYPE_FP6_E3M2  # noqa: E402
from torchao.prototype.mx_formats.nvfp4_tensor import (  # noqa: E402
    nvfp4_quantize,
    per_tensor_amax_to_scale,
)

from test_quantize import random_matrix  # noqa: E402

# tcemu's element format name: torchao's element dtype.
TORCHAO_ELEMENTS = {
    "e4m3": torch.float8_e4m3fn,
    "e5m2": torch.float8_e5m2,
    "e2m3": DTYPE_FP6_E2M3,
    "e3m2": DTYPE_FP6_E3M2,
    "e2m1": torch.float4_e2m1fn_x2,
}


def as_input(x, dtype):
    """x (float32 NumPy) as the torch tensor torchao takes and the NumPy array tcemu takes."""
    t = torch.from_numpy(x)
    if dtype == "bf16":
        t = t.to(torch.bfloat16)
        return t, t.view(torch.uint16).numpy().view(ml_dtypes.bfloat16)
    return t, x


def unpacked_codes(data_lp, fmt):
    """torchao's element data as one uint8 code per element (FP4 comes two a byte, k = 2j low)."""
    codes = data_lp.view(torch.uint8).numpy()
    if fmt != "e2m1":
        return codes
    out = np.empty(codes.shape[:-1] + (codes.shape[-1] * 2,), np.uint8)
    out[..., 0::2] = codes & 0xF
    out[..., 1::2] = codes >> 4
    return out


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
@pytest.mark.parametrize("fmt", list(TORCHAO_ELEMENTS))
@pytest.mark.parametrize("spread", [4, 60])
def test_mx_is_torchaos_to_mx_floor(rng, fmt, dtype, spread):
    x = random_matrix(rng, 48, 256, spread)
    t, arr = as_input(x, dtype)
    scale, data = mx_tensor.to_mx(t, TORCHAO_ELEMENTS[fmt], 32, mx_tensor.ScaleCalculationMode.FLOOR)
    codes, scales = tcemu.quantize_mx(arr, fmt, block=32)
    np.testing.assert_array_equal(scales.view(np.uint8), scale.view(torch.uint8).numpy())
    np.testing.assert_array_equal(codes, unpacked_codes(data, fmt))


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
@pytest.mark.parametrize("spread", [4, 40])
def test_nvfp4_is_torchaos_two_level_recipe(rng, dtype, spread):
    x = random_matrix(rng, 48, 256, spread)
    t, arr = as_input(x, dtype)
    tensor_scale = per_tensor_amax_to_scale(torch.max(torch.abs(t)))
    block_scales, data = nvfp4_quantize(t, 16, tensor_scale)
    codes, scales, ours = tcemu.quantize_nvfp4(arr)
    assert np.float32(ours).view(np.uint32) == tensor_scale.numpy().view(np.uint32)
    np.testing.assert_array_equal(scales.view(np.uint8), block_scales.view(torch.uint8).numpy())
    np.testing.assert_array_equal(codes, unpacked_codes(data, "e2m1"))
