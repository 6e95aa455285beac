"""How a PyTorch operand becomes a datapath's input format: round to nearest, per-tensor scaling,
block scaling (the three `scaling` words of a Route).

Every conversion here is one rounding to nearest even from the operand's own value: float16 and
bfloat16 operands are widened exactly first, float32 operands go to fp16/bf16 through PyTorch's
cast (itself one RNE rounding), and every other case is rounded in float64 by `round_to` below,
whose scalings by powers of two are exact. Overflow: a format with infinities rounds to +-inf
(IEEE RNE); e4m3 and FP6/FP4, which have none, saturate to +-max (cvt.rn.satfinite, OCP MX).
"""

import math

import numpy as np
import torch

import tcemu

# The torch dtype that holds each input format's values exactly (tf32 in float32, its 13 low bits
# zero); the float8 ones are passed to tcemu.matmul as their uint8 bit patterns.
_HOLDER = {
    "fp16": torch.float16,
    "bf16": torch.bfloat16,
    "tf32": torch.float32,
    "fp32": torch.float32,
    "e4m3": torch.float8_e4m3fn,
    "e5m2": torch.float8_e5m2,
}
# FP6/FP4 have no torch dtype: their codes come from ml_dtypes, one a byte.
_ML_DTYPES = {"e3m2": "float6_e3m2fn", "e2m3": "float6_e2m3fn", "e2m1": "float4_e2m1fn"}

FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def max_finite(fmt):
    """The largest finite value of tcemu.Format `fmt`, as a Python float."""
    top = 2.0 - 2.0**-fmt.fraction_bits
    if fmt.special == "fn_e4m3":  # S.1111.111 is NaN: the top mantissa is one step lower
        top -= 2.0**-fmt.fraction_bits
    return math.ldexp(top, fmt.max_exponent)


def round_to(x, fmt):
    """x rounded to nearest even in tcemu.Format `fmt`, as a float64 tensor of x's shape.

    frexp gives x = m 2^e with 0.5 <= |m| < 1, so x's leading bit has weight 2^(e-1); clamped to
    the format's minimum exponent it gives the quantum q = 2^(lead - fraction_bits) of x's binade
    (or of the subnormals). x / q and round(x / q) q are exact in float64 (powers of two, far from
    its range ends for every format here), and torch.round rounds half to even."""
    x = x.to(torch.float64)
    _, e = torch.frexp(x)
    q = torch.clamp(e.to(torch.int64) - 1, min=fmt.min_exponent) - fmt.fraction_bits
    r = torch.round(x * _pow2(-q)) * _pow2(q)
    top = max_finite(fmt)
    if fmt.special == "ieee":
        return torch.where(r.abs() > top, torch.copysign(torch.full_like(r, math.inf), r), r)
    return torch.clamp(r, -top, top)  # saturating formats: inf to +-max as well; NaN stays NaN


def _pow2(e):
    """2^e as float64 for an int64 tensor e in [-1022, 1023], built from its exponent field (an
    exact power of two, whatever libm's exp2 does). round_to's exponents lie within: |x q| < 2^1024
    gives q <= 1022, and the clamp gives q >= -126 - 23."""
    return ((e + 1023) << 52).view(torch.float64)


def rounded(x, fmt):
    """x rounded to nearest even in `fmt`: x's own cast where that is one RNE rounding (float16,
    bfloat16 and float32 into fp16, bf16 and fp32; widening is exact), else round_to's float64."""
    if fmt.name in ("fp16", "bf16", "fp32") and x.dtype != torch.float64:
        return x.to(_HOLDER[fmt.name])
    return round_to(x, fmt)


def encode(values, fmt):
    """Values already in `fmt` (exactly) as the tensor tcemu.matmul reads for `fmt`."""
    name = fmt.name
    if name in _HOLDER:
        held = values.to(_HOLDER[name])
        return held.view(torch.uint8) if held.element_size() == 1 else held
    if name in _ML_DTYPES:
        import ml_dtypes

        if bool(torch.isnan(values).any()):
            raise ValueError(
                f"tcemu.torch: a NaN operand has no {name} value (the format has no NaN)"
            )
        host = values.detach().to("cpu", torch.float32).numpy()
        codes = host.astype(getattr(ml_dtypes, _ML_DTYPES[name])).view(np.uint8)
        return torch.from_numpy(codes).to(values.device)
    raise ValueError(f"tcemu.torch: input format {name} has no PyTorch conversion")


def rounded_operand(x, fmt):
    """x rounded to nearest in `fmt`, as tcemu.matmul reads it."""
    return encode(rounded(x, fmt), fmt)


def tensor_scale_exponent(x, fmt):
    """e such that x 2^e has its largest finite magnitude at most max_finite(fmt) and above half
    of it: e = floor(log2(max / amax)); 0 for an x without a finite nonzero value."""
    finite = x[torch.isfinite(x)]
    amax = float(finite.abs().max()) if finite.numel() else 0.0
    if amax == 0.0:
        return 0
    _, e = math.frexp(max_finite(fmt) / amax)
    return max(-600, min(600, e - 1))  # 2^e and x 2^e stay finite and normal in float64


def scaled_operand(x, fmt):
    """(operand, e): x 2^e rounded to nearest in `fmt` (per-tensor scaling), as tcemu.matmul
    reads it; the product's scale 2^-(e_a + e_b) goes into alpha."""
    e = tensor_scale_exponent(x, fmt)
    return encode(round_to(x.to(torch.float64) * math.ldexp(1.0, e), fmt), fmt), e


def block_operands(a, b, datapath):
    """(codes_a, codes_b, scale_a, scale_b, factor) of a block-scaled datapath: A quantized along
    k per row (tcemu.quantize_mx / quantize_nvfp4, axis -1), B along k per column (axis 0), the
    scales of the datapath's scale formats; factor multiplies alpha (NVFP4's two fp32 tensor
    scales, 1 for MX). The quantizers take float32: float64 operands are rounded to it first."""
    block = datapath.scale_block
    host = [t.detach().to("cpu", torch.float32).numpy() for t in (a, b)]
    fmts = (datapath.input, datapath.b_format)
    if datapath.scale_a.name == "ue8m0" and datapath.scale_b.name == "ue8m0":
        qa = tcemu.quantize_mx(host[0], fmts[0], block=block, axis=-1)
        qb = tcemu.quantize_mx(host[1], fmts[1], block=block, axis=0)
        factor = 1.0
    elif (datapath.scale_a.name, datapath.scale_b.name, fmts[0].name, fmts[1].name) == (
        "ue4m3",
        "ue4m3",
        "e2m1",
        "e2m1",
    ):
        ca, sa, ta = tcemu.quantize_nvfp4(host[0], block=block, axis=-1)
        cb, sb, tb = tcemu.quantize_nvfp4(host[1], block=block, axis=0)
        qa, qb, factor = (ca, sa), (cb, sb), float(ta) * float(tb)
    else:
        raise ValueError(
            "tcemu.torch: block scaling quantizes to MX (ue8m0 scales) or NVFP4 (e2m1 with ue4m3 "
            f"scales); this datapath has {fmts[0].name}/{fmts[1].name} with "
            f"{datapath.scale_a.name}/{datapath.scale_b.name} scales"
        )
    dev = a.device
    return (
        torch.from_numpy(qa[0]).to(dev),
        torch.from_numpy(qb[0]).to(dev),
        torch.from_numpy(qa[1]).to(dev),
        torch.from_numpy(qb[1]).to(dev),
        factor,
    )
