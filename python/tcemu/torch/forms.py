"""The GEMM forms of PyTorch's matrix products: each routed function rewritten onto tcemu::gemm
(2-D, or batched), or refused with the reason (the product then runs natively).

Reshaping a batch of rows onto the GEMM's m (matmul with a 2-D B, linear, convolution) gives
the bits of the per-matrix GEMMs: every element of D is computed from its row of A and column of
B alone. Results take the operands' dtype, converted from the accumulator's by PyTorch's cast.
"""

import math
import string

import torch
import torch.nn.functional as F

from .operands import FLOAT_DTYPES
from .operators import accumulator_dtype, gemm


class Native(Exception):
    """This call has no GEMM form here: it runs natively, counted with `reason`."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


class Products:
    """The routed products of one call: tcemu::gemm on one Route."""

    def __init__(self, route):
        self.key = route.key
        self.accumulator = accumulator_dtype(route.datapath)

    def __call__(self, a, b, c=None, alpha=1.0, beta=0.0):
        return gemm(a, b, c, self.key, float(alpha), float(beta))


def _operands(*tensors):
    """The operands' common dtype, or Native: tensors of one float dtype on the CPU or CUDA."""
    for t in tensors:
        if not isinstance(t, torch.Tensor):
            raise Native(f"an operand of type {type(t).__name__}")
        if t.dtype not in FLOAT_DTYPES:
            raise Native(f"dtype {str(t.dtype).replace('torch.', '')}")
        if t.device.type not in ("cpu", "cuda"):
            raise Native(f"device {t.device.type}")
        if t.is_sparse or t.layout != torch.strided:
            raise Native(f"layout {t.layout}")
    dtypes = {t.dtype for t in tensors}
    if len(dtypes) > 1:
        raise Native(
            "operands of dtypes "
            + " and ".join(sorted(str(d).replace("torch.", "") for d in dtypes))
        )
    if len({t.device for t in tensors}) > 1:
        raise Native("operands on several devices")
    return tensors[0].dtype


def _no_out(out):
    if out is not None:
        raise Native("out= given")


def _batched(p, a, b, alpha=1.0):
    """torch.matmul's product of a and b (both at least 2-D) on tcemu::gemm."""
    if b.dim() == 2:
        d = p(a.reshape(-1, a.shape[-1]), b, alpha=alpha)
        return d.reshape(*a.shape[:-1], b.shape[-1])
    batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    if b.shape[-2] != k:
        raise Native(f"k of A {k} and of B {b.shape[-2]} differ")
    a3 = a.expand(*batch, m, k).reshape(-1, m, k)
    b3 = b.expand(*batch, k, n).reshape(-1, k, n)
    return p(a3, b3, alpha=alpha).reshape(*batch, m, n)


def matmul(p, input, other, *, out=None):
    _no_out(out)
    dtype = _operands(input, other)
    if input.dim() == 0 or other.dim() == 0:
        raise Native("a 0-D operand")
    a = input.unsqueeze(0) if input.dim() == 1 else input
    b = other.unsqueeze(-1) if other.dim() == 1 else other
    if a.shape[-1] != b.shape[-2]:
        raise Native(f"k of A {a.shape[-1]} and of B {b.shape[-2]} differ")
    d = _batched(p, a, b)
    if other.dim() == 1:
        d = d.squeeze(-1)
    if input.dim() == 1:
        d = d.squeeze(-2 if other.dim() > 1 else -1)
    return d.to(dtype)


def rmatmul(p, self, other):
    return matmul(p, other, self)


def mm(p, input, mat2, *, out=None):
    _no_out(out)
    dtype = _operands(input, mat2)
    if input.dim() != 2 or mat2.dim() != 2 or input.shape[1] != mat2.shape[0]:
        raise Native(f"mm of shapes {list(input.shape)} and {list(mat2.shape)}")
    return p(input, mat2).to(dtype)


def bmm(p, input, mat2, *, out=None):
    _no_out(out)
    dtype = _operands(input, mat2)
    if (
        input.dim() != 3
        or mat2.dim() != 3
        or input.shape[0] != mat2.shape[0]
        or input.shape[2] != mat2.shape[1]
    ):
        raise Native(f"bmm of shapes {list(input.shape)} and {list(mat2.shape)}")
    return p(input, mat2).to(dtype)


def addmm(p, input, mat1, mat2, *, beta=1, alpha=1, out=None):
    _no_out(out)
    dtype = _operands(input, mat1, mat2)
    if mat1.dim() != 2 or mat2.dim() != 2 or mat1.shape[1] != mat2.shape[0]:
        raise Native(f"addmm of shapes {list(mat1.shape)} and {list(mat2.shape)}")
    shape = (mat1.shape[0], mat2.shape[1])
    c = None if beta == 0 else input.expand(shape)  # beta 0: input ignored, its NaNs too
    return p(mat1, mat2, c, alpha=alpha, beta=beta if c is not None else 0.0).to(dtype)


def baddbmm(p, input, batch1, batch2, *, beta=1, alpha=1, out=None):
    _no_out(out)
    dtype = _operands(input, batch1, batch2)
    if (
        batch1.dim() != 3
        or batch2.dim() != 3
        or batch1.shape[0] != batch2.shape[0]
        or batch1.shape[2] != batch2.shape[1]
    ):
        raise Native(f"baddbmm of shapes {list(batch1.shape)} and {list(batch2.shape)}")
    shape = (batch1.shape[0], batch1.shape[1], batch2.shape[2])
    c = None if beta == 0 else input.expand(shape)
    return p(batch1, batch2, c, alpha=alpha, beta=beta if c is not None else 0.0).to(dtype)


def linear(p, input, weight, bias=None):
    dtype = _operands(input, weight, *([bias] if bias is not None else []))
    if weight.dim() != 2 or input.dim() == 0 or input.shape[-1] != weight.shape[1]:
        raise Native(f"linear of shapes {list(input.shape)} and {list(weight.shape)}")
    x = input.reshape(-1, input.shape[-1])
    c = None if bias is None else bias.expand(x.shape[0], weight.shape[0])
    d = p(x, weight.t(), c, beta=1.0 if c is not None else 0.0)
    return d.reshape(*input.shape[:-1], weight.shape[0]).to(dtype)


def _einsum_labels(spec, ndim, ellipsis):
    """spec's labels with '...' replaced by the last ndim - (len(spec) - 3) of `ellipsis`."""
    if "..." not in spec:
        return spec
    head, tail = spec.split("...")
    n = ndim - len(head) - len(tail)
    if n < 0 or n > len(ellipsis):
        raise Native(f"einsum operand '{spec}' of {ndim} dimensions")
    return head + ellipsis[len(ellipsis) - n :] + tail


def einsum(p, equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if len(operands) != 2:
        raise Native(f"einsum of {len(operands)} operands")
    a, b = operands
    dtype = _operands(a, b)
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    specs = lhs.split(",")
    if len(specs) != 2 or "." in eq.replace("...", ""):
        raise Native(f"einsum equation '{equation}'")
    spare = [c for c in string.ascii_letters if c not in eq]
    dims = max(t.dim() - len(s.replace("...", "")) for s, t in zip(specs, operands))
    ellipsis = "".join(spare[: max(dims, 0)])
    sa, sb = (_einsum_labels(s, t.dim(), ellipsis) for s, t in zip(specs, operands))
    if arrow:
        out = out.replace("...", ellipsis)
    else:  # implicit: the ellipsis, then the labels seen once, in (ASCII) alphabetical order
        once = sorted(c for c in set(sa + sb) if (sa + sb).count(c) == 1 and c not in ellipsis)
        out = "".join(c for c in ellipsis if c in sa or c in sb) + "".join(once)
    if (
        len(sa) != a.dim()
        or len(sb) != b.dim()
        or len(set(sa)) != len(sa)
        or len(set(sb)) != len(sb)
    ):
        raise Native(f"einsum equation '{equation}' (a repeated or missing index)")
    size = {**dict(zip(sb, b.shape)), **dict(zip(sa, a.shape))}
    if any(c in sb and b.shape[sb.index(c)] != size[c] for c in sa):
        raise Native(f"einsum equation '{equation}' broadcasts an index")
    if any(c not in sa and c not in sb for c in out):
        raise Native(f"einsum equation '{equation}'")
    batch = [c for c in sa if c in sb and c in out]
    contracted = [c for c in sa if c in sb and c not in out]
    free_a = [c for c in sa if c not in sb]
    free_b = [c for c in sb if c not in sa]
    if any(c not in out for c in free_a + free_b):
        raise Native(f"einsum equation '{equation}' sums an index of one operand")
    if not contracted:
        raise Native(f"einsum equation '{equation}' contracts no index")

    def numel(labels):
        return math.prod(size[c] for c in labels)

    a3 = a.permute([sa.index(c) for c in batch + free_a + contracted])
    b3 = b.permute([sb.index(c) for c in batch + contracted + free_b])
    m, k, n = numel(free_a), numel(contracted), numel(free_b)
    if batch:
        d = p(a3.reshape(numel(batch), m, k), b3.reshape(numel(batch), k, n))
    else:
        d = p(a3.reshape(m, k), b3.reshape(k, n))
    order = batch + free_a + free_b
    d = d.reshape([size[c] for c in order]).permute([order.index(c) for c in out])
    return d.to(dtype)


def _pairs(value, n, name):
    if isinstance(value, int):
        return (value,) * n
    if len(value) == 1:
        return (value[0],) * n
    if len(value) != n:
        raise Native(f"{name} {value}")
    return tuple(value)


def _conv(p, input, weight, bias, stride, padding, dilation, groups, n):
    """conv{n}d as im2col (F.unfold) and a GEMM per group: A = the patches [N L, C/g kh kw],
    B = the weights transposed [C/g kh kw, O/g], the bias as C with beta = 1."""
    dtype = _operands(input, weight, *([bias] if bias is not None else []))
    if input.dim() == n + 1:  # unbatched
        return _conv(
            p, input.unsqueeze(0), weight, bias, stride, padding, dilation, groups, n
        ).squeeze(0)
    if input.dim() != n + 2 or weight.dim() != n + 2:
        raise Native(f"conv{n}d of shapes {list(input.shape)} and {list(weight.shape)}")
    stride, dilation = _pairs(stride, n, "stride"), _pairs(dilation, n, "dilation")
    kernel = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * n
        elif padding == "same" and all(s == 1 for s in stride):
            # PyTorch's 'same': total d (k - 1) per dimension, the odd one on the right/bottom
            pads = []
            for d, k in reversed(list(zip(dilation, kernel))):
                total = d * (k - 1)
                pads += [total // 2, total - total // 2]
            input, padding = F.pad(input, pads), (0,) * n
        else:
            raise Native(f"padding '{padding}' with stride {stride}")
    padding = _pairs(padding, n, "padding")
    batch, channels = input.shape[:2]
    out_channels = weight.shape[0]
    if (
        groups < 1
        or channels % groups
        or out_channels % groups
        or weight.shape[1] * groups != channels
    ):
        raise Native(
            f"conv{n}d of {channels} channels, weight {list(weight.shape)}, groups {groups}"
        )
    if n == 1:
        x, kernel2 = input.unsqueeze(2), (1, kernel[0])
        stride2, padding2, dilation2 = (1, stride[0]), (0, padding[0]), (1, dilation[0])
    else:
        x, kernel2, stride2, padding2, dilation2 = input, kernel, stride, padding, dilation
    spatial = [
        (x.shape[2 + i] + 2 * padding2[i] - dilation2[i] * (kernel2[i] - 1) - 1) // stride2[i] + 1
        for i in range(2)
    ]
    if min(spatial) <= 0:
        raise Native(f"conv{n}d with an empty output {spatial}")
    cols = F.unfold(x, kernel2, dilation=dilation2, padding=padding2, stride=stride2)  # [N, C k, L]
    length, kg, og = (
        cols.shape[2],
        (channels // groups) * math.prod(kernel2),
        out_channels // groups,
    )
    a = cols.view(batch, groups, kg, length).permute(1, 0, 3, 2).reshape(groups, batch * length, kg)
    b = weight.reshape(groups, og, kg).transpose(1, 2)
    c = None if bias is None else bias.view(groups, 1, og).expand(groups, batch * length, og)
    beta = 0.0 if c is None else 1.0
    if groups == 1:
        d = p(a[0], b[0], None if c is None else c[0], beta=beta).unsqueeze(0)
    else:
        d = p(a, b, c, beta=beta)
    d = d.view(groups, batch, length, og).permute(1, 0, 3, 2).reshape(batch, out_channels, *spatial)
    return (d.squeeze(2) if n == 1 else d).to(dtype)


def conv1d(p, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(p, input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(p, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(p, input, weight, bias, stride, padding, dilation, groups, 2)


def scaled_dot_product_attention(
    p,
    query,
    key,
    value,
    attn_mask=None,
    dropout_p=0.0,
    is_causal=False,
    scale=None,
    enable_gqa=False,
):
    """Both products on tcemu::gemm: S = scale Q K^T (scale as alpha), the mask and softmax (and
    dropout) natively in the accumulator's dtype, then P V."""
    dtype = _operands(query, key, value)
    if attn_mask is not None and is_causal:
        raise Native("attn_mask with is_causal")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise Native("an operand of fewer than 2 dimensions")
    if enable_gqa and query.dim() >= 3:
        key = key.repeat_interleave(query.shape[-3] // key.shape[-3], -3)
        value = value.repeat_interleave(query.shape[-3] // value.shape[-3], -3)
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise Native(
            f"attention of shapes {list(query.shape)}, {list(key.shape)}, {list(value.shape)}"
        )
    alpha = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    s = _batched(p, query, key.transpose(-2, -1), alpha=alpha)
    if is_causal:
        keep = torch.ones(s.shape[-2], s.shape[-1], dtype=torch.bool, device=s.device).tril()
        s = s.masked_fill(~keep, -math.inf)
    elif attn_mask is not None:
        s = s.masked_fill(~attn_mask, -math.inf) if attn_mask.dtype == torch.bool else s + attn_mask
    weights = torch.softmax(s, dim=-1)
    if dropout_p > 0.0:
        weights = F.dropout(weights, dropout_p, training=True)
    return _batched(p, weights, value).to(dtype)


# func -> (operator name, form): what emulate() routes. Tensor methods take self as `input`.
FORMS = {
    F.linear: ("linear", linear),
    torch.matmul: ("matmul", matmul),
    torch.Tensor.matmul: ("matmul", matmul),
    torch.Tensor.__matmul__: ("matmul", matmul),
    torch.Tensor.__rmatmul__: ("matmul", rmatmul),
    torch.linalg.matmul: ("matmul", matmul),
    torch.mm: ("mm", mm),
    torch.Tensor.mm: ("mm", mm),
    torch.bmm: ("bmm", bmm),
    torch.Tensor.bmm: ("bmm", bmm),
    torch.addmm: ("addmm", addmm),
    torch.Tensor.addmm: ("addmm", addmm),
    torch.baddbmm: ("baddbmm", baddbmm),
    torch.Tensor.baddbmm: ("baddbmm", baddbmm),
    torch.einsum: ("einsum", einsum),
    F.conv1d: ("conv1d", conv1d),
    F.conv2d: ("conv2d", conv2d),
    F.scaled_dot_product_attention: ("scaled_dot_product_attention", scaled_dot_product_attention),
}
OPERATORS = sorted({name for name, _ in FORMS.values()})

# Products that have no form here: they run natively and are counted, never passed silently.
UNROUTED = {
    F.conv3d: "conv3d",
    F.conv_transpose1d: "conv_transpose1d",
    F.conv_transpose2d: "conv_transpose2d",
    F.conv_transpose3d: "conv_transpose3d",
    F.bilinear: "bilinear",
    torch.mv: "mv",
    torch.Tensor.mv: "mv",
    torch.dot: "dot",
    torch.Tensor.dot: "dot",
    torch.vdot: "vdot",
    torch.inner: "inner",
    torch.tensordot: "tensordot",
    torch.addmv: "addmv",
    torch.addbmm: "addbmm",
    torch.Tensor.addmm_: "addmm_",
    torch.Tensor.baddbmm_: "baddbmm_",
    torch.Tensor.addbmm_: "addbmm_",
    torch.chain_matmul: "chain_matmul",
    torch.linalg.multi_dot: "multi_dot",
    torch.cdist: "cdist",
    torch.lstm: "lstm",  # the fused recurrent kernels of nn.LSTM, nn.GRU, nn.RNN
    torch.gru: "gru",
    torch.rnn_tanh: "rnn_tanh",
    torch.rnn_relu: "rnn_relu",
}

# Python-level functions whose products are the routed functions above: run with the mode still
# active (see mode.emulate), so that their products are routed and counted one by one.
TRANSPARENT = {F.multi_head_attention_forward}
