"""The custom operator tcemu::gemm (torch.library): D = alpha A B + beta C through a Route, 2-D
or batched, on tcemu.matmul (CPU tensors on the emulator, CUDA tensors on the GPU engine through
DLPack), with a fake kernel for torch.compile and autograd through the Route's backward datapath.

The operator takes the Route by its key (a string, as operator schemas require); routes are
registered in this process when it is made (policy.py) before any call names it.
"""

import atexit
import collections
import contextlib
import math
import time
from typing import Optional

import numpy as np
import torch

import tcemu

from . import operands
from .policy import Route, release_routes, route_of

@atexit.register
def _release():
    """Drops the datapaths the routes and torch.compile's caches hold before the interpreter
    shuts down, so that none is alive when the extension checks for leaked instances."""
    release_routes()
    try:
        torch._dynamo.reset()
    except RuntimeError:
        # Resetting imports inductor's modules, which register with threading's exit: refused
        # once the interpreter is shutting down (nothing was compiled with inductor, then).
        pass


_ACCUMULATOR_DTYPES = {"fp32": torch.float32, "fp16": torch.float16}


def register(route):
    """The key of `route` (a Route, or a tcemu.Datapath taken as Route(datapath)); every Route is
    callable by its key from its construction on."""
    return (Route(route) if isinstance(route, tcemu.Datapath) else route).key


def accumulator_dtype(datapath):
    return _ACCUMULATOR_DTYPES[datapath.accumulator.name]


def _check(a, b, c):
    """The shape of D, or a ValueError naming the dimension that does not fit."""
    if a.dim() not in (2, 3) or b.dim() != a.dim():
        raise ValueError(
            f"tcemu::gemm: A and B must both be 2-D or both 3-D (batched), got {a.dim()}-D and {b.dim()}-D"
        )
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"tcemu::gemm: A's k = {a.shape[-1]} differs from B's k = {b.shape[-2]}")
    if a.dim() == 3 and a.shape[0] != b.shape[0]:
        raise ValueError(f"tcemu::gemm: A's batch {a.shape[0]} differs from B's batch {b.shape[0]}")
    shape = (*a.shape[:-1], b.shape[-1])
    if c is not None and tuple(c.shape) != shape:
        raise ValueError(f"tcemu::gemm: C must be {list(shape)}, got {list(c.shape)}")
    if a.device != b.device or (c is not None and c.device != a.device):
        raise ValueError(
            f"tcemu::gemm: operands on {a.device} and {b.device}: put them on one device"
        )
    return shape


def _float32_alpha(alpha, exponent):
    """alpha (rounded to float32, as tcemu.matmul takes it) times 2^exponent, which must stay an
    exact float32: the per-tensor scales of the operands undone in the product's alpha."""
    a32 = float(np.float32(alpha))
    scaled = math.ldexp(a32, exponent)
    if float(np.float32(scaled)) != scaled or (scaled != 0.0 and abs(scaled) < 2.0**-126):
        raise ValueError(
            f"tcemu.torch: per-tensor scaling: alpha {alpha} times the scales' 2^{exponent} is not a "
            "normal float32 (an operand's magnitudes are too far from the format's range)"
        )
    return scaled


def _gemm2d(a, b, c, route, alpha, beta):
    """One product on `route`; with scaling "round" also a batch of them ([batch, m, k] operands),
    which the engine takes in one call."""
    dp = route.datapath
    if route.scaling == "round":
        return _engine(*_rounded(a, b, c, dp), dp, alpha, beta, {})
    extra = {}
    if route.scaling == "block":
        ca, cb, sa, sb, factor = operands.block_operands(a, b, dp)
        alpha, extra = alpha * factor, {"scale_a": sa, "scale_b": sb}
    else:  # "tensor"
        ca, ea = operands.scaled_operand(a, dp.input)
        cb, eb = operands.scaled_operand(b, dp.b_format)
        alpha = _float32_alpha(alpha, -(ea + eb))
    cc = None if c is None else _rounded_accumulator(c, dp)
    return _engine(ca, cb, cc, dp, alpha, beta, extra)


def _rounded_accumulator(c, dp):
    return operands.encode(operands.rounded(c, dp.accumulator), dp.accumulator)


def _rounded(a, b, c, dp):
    """A, B and C (or None) rounded to nearest in the datapath's formats, as tcemu.matmul reads
    them; 2-D or batched alike: the rounding is elementwise, so element i of a converted batch is
    the conversion of element i."""
    ca, cb = operands.rounded_operand(a, dp.input), operands.rounded_operand(b, dp.b_format)
    return ca, cb, None if c is None else _rounded_accumulator(c, dp)


def _for_engine(t):
    """t as tcemu.matmul takes it: a CPU tensor as it is; a CUDA tensor as a DLPack capsule made
    for the legacy default stream (DLPack stream 1), on which the engine copies its operands in and
    works. PyTorch's __dlpack__ then makes that stream wait for the current stream's work (an
    event, no host synchronization; nothing when the current stream is the default one), so the
    engine reads the operands after they are written. nanobind's own __dlpack__ call passes no
    stream, hence the capsule."""
    if not t.is_cuda:
        return t
    with torch.cuda.device(t.device):
        return t.detach().__dlpack__(stream=1)


def _engine_layout(t):
    """t as the engine reads a CUDA matrix (or each matrix of a batch) in place, row or column
    major with a leading dimension: a broadcast (stride 0) or otherwise strided one is copied, as
    the CPU path copies it."""
    if t is None or not t.is_cuda or t.is_contiguous() or t.transpose(-1, -2).is_contiguous():
        return t
    return t.contiguous()


def _engine(ca, cb, cc, dp, alpha, beta, extra):
    """One tcemu.matmul on converted operands, its result as a tensor on their device. The engine
    synchronizes the device after its GEMM and then copies the result out on the legacy default
    stream: a current stream other than the default one waits for that stream (an event)."""
    ca, cb, cc = _engine_layout(ca), _engine_layout(cb), _engine_layout(cc)
    for r in _RECORDERS:
        r.products.append(EngineProduct(ca, cb, cc, dp, alpha, beta, extra))
    d = tcemu.matmul(
        _for_engine(ca),
        _for_engine(cb),
        None if cc is None else _for_engine(cc),
        datapath=dp,
        alpha=alpha,
        beta=beta,
        **{name: _for_engine(t) if isinstance(t, torch.Tensor) else t for name, t in extra.items()},
    )
    if isinstance(d, np.ndarray):
        return torch.from_numpy(d)
    out = torch.from_dlpack(d)
    current = torch.cuda.current_stream(out.device)
    if current != torch.cuda.default_stream(out.device):
        current.wait_stream(torch.cuda.default_stream(out.device))
    return out


class EngineProduct:
    """One tcemu.matmul call of the operator, as a Recorder keeps it: the converted operands'
    shapes, strides and dtypes (not their values; [batch, m, k] for a batched call), the device,
    the datapath, alpha and beta, and the block scales (kept, they are small)."""

    def __init__(self, ca, cb, cc, datapath, alpha, beta, extra):
        self.a = (tuple(ca.shape), tuple(ca.stride()), ca.dtype)
        self.b = (tuple(cb.shape), tuple(cb.stride()), cb.dtype)
        self.c = None if cc is None else (tuple(cc.shape), tuple(cc.stride()), cc.dtype)
        self.device = ca.device
        self.datapath, self.alpha, self.beta, self.extra = datapath, alpha, beta, dict(extra)

    @property
    def macs(self):
        """batch m k n: the multiply-adds of the call."""
        *batch, m, k = self.a[0]
        return math.prod(batch) * m * k * self.b[0][-1]


class Recorder:
    """with recording(timed) as r: r.products lists every tcemu.matmul call the operator makes in
    this process while r is active (EngineProduct: forward and gradient products; a batched
    product is one call, or one per batch element where each has its own scales), so that a
    benchmark can time the engine alone on the same products; r.calls counts emulate()'s routed calls by operator, as its Summary does. With
    timed=True, r.forward_seconds and r.backward_seconds add up the wall time inside emulate()'s
    routed calls and inside the operator's backward, each synchronized with the CUDA device at
    both ends (which slows the model: time the model in a run without it)."""

    def __init__(self, timed):
        self.timed = timed
        self.products = []
        self.calls = collections.Counter()  # operator -> routed calls emulate() made
        self.forward_seconds = 0.0
        self.backward_seconds = 0.0


_RECORDERS = []


@contextlib.contextmanager
def recording(timed=False):
    r = Recorder(timed)
    _RECORDERS.append(r)
    try:
        yield r
    finally:
        _RECORDERS.remove(r)


def _synchronize():
    if torch.cuda.is_initialized():
        torch.cuda.synchronize()


def routed(operator):
    """Counts one routed call of `operator` in every active Recorder (emulate() calls this)."""
    for r in _RECORDERS:
        r.calls[operator] += 1


def timed(field, fn, *args, **kwargs):
    """fn(*args, **kwargs), its wall time added to `field` ("forward_seconds" or
    "backward_seconds") of every active timed Recorder; a plain call when there is none."""
    clocks = [r for r in _RECORDERS if r.timed]
    if not clocks:
        return fn(*args, **kwargs)
    _synchronize()
    start = time.perf_counter()
    try:
        return fn(*args, **kwargs)
    finally:
        _synchronize()
        elapsed = time.perf_counter() - start
        for r in clocks:
            setattr(r, field, getattr(r, field) + elapsed)


@torch.library.custom_op("tcemu::gemm", mutates_args=())
def gemm(
    a: torch.Tensor,
    b: torch.Tensor,
    c: Optional[torch.Tensor],
    route: str,
    alpha: float,
    beta: float,
) -> torch.Tensor:
    """D = alpha A B + beta C through the Route registered as `route`: A [m, k] or [batch, m, k],
    B [k, n] or [batch, k, n], C of D's shape or None; D has the accumulator's dtype."""
    _check(a, b, c)
    r = route_of(route)
    if a.device.type not in ("cpu", "cuda"):
        raise ValueError(f"tcemu::gemm: tensors on {a.device}: tcemu runs CPU and CUDA tensors")
    if a.dim() == 2 or r.scaling == "round":  # rounding is elementwise: one batched engine call
        return _gemm2d(a, b, c, r, alpha, beta)
    # Per-tensor and block scales are each 2-D product's own (and so is the alpha that undoes them).
    out = a.new_empty((a.shape[0], a.shape[1], b.shape[2]), dtype=accumulator_dtype(r.datapath))
    for i in range(a.shape[0]):
        out[i] = _gemm2d(a[i], b[i], None if c is None else c[i], r, alpha, beta)
    return out


@gemm.register_fake
def _(a, b, c, route, alpha, beta):
    shape = _check(a, b, c)
    return a.new_empty(shape, dtype=accumulator_dtype(route_of(route).datapath))


def _gradient_product(x, y, route, alpha, dtype):
    """alpha x y for a gradient: on `route` (a Route), or natively ("native") in `dtype`, the
    gradient's."""
    if route == "native":
        d = torch.matmul(x.to(dtype), y.to(dtype))
        return d if alpha == 1.0 else d * alpha
    return gemm(x, y, None, route.key, alpha, 0.0)


def _setup_context(ctx, inputs, output):
    a, b, c, route, alpha, beta = inputs
    ctx.save_for_backward(a, b)
    ctx.route, ctx.alpha, ctx.beta, ctx.c_dtype = route, alpha, beta, None if c is None else c.dtype


def _backward(ctx, grad):
    """grad_a = alpha grad B^T, grad_b = alpha A^T grad through the route's backward datapath;
    grad_c = beta grad."""
    with torch._C.DisableTorchFunction():  # a native gradient product is no model product
        return timed("backward_seconds", _gradients, ctx, grad)


def _gradients(ctx, grad):
    a, b = ctx.saved_tensors
    back = route_of(ctx.route).gradient_route()
    ga = gb = gc = None
    if ctx.needs_input_grad[0]:
        ga = _gradient_product(grad, b.transpose(-1, -2), back, ctx.alpha, grad.dtype).to(a.dtype)
    if ctx.needs_input_grad[1]:
        gb = _gradient_product(a.transpose(-1, -2), grad, back, ctx.alpha, grad.dtype).to(b.dtype)
    if ctx.c_dtype is not None and ctx.needs_input_grad[2]:
        gc = (grad if ctx.beta == 1.0 else grad * ctx.beta).to(ctx.c_dtype)
    return ga, gb, gc, None, None, None


torch.library.register_autograd("tcemu::gemm", _backward, setup_context=_setup_context)


def matmul(a, b, route, c=None, alpha=1.0, beta=0.0):
    """alpha A B + beta C on `route` (a Route or a tcemu.Datapath), differentiable: A [m, k] or
    [batch, m, k] and B likewise, any float dtype on the CPU or a CUDA device; the result has
    the accumulator's dtype (C is rounded to it)."""
    return gemm(a, b, c, register(route), float(alpha), float(beta))
