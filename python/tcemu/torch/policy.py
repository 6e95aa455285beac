"""The policy: which datapath each matrix product of a model runs on, how its operands become the
datapath's input format, and which datapath its gradients take.

A Route is one such choice; a Policy maps a product to a Route (or to None: run natively) by the
modules it runs in (qualified names, then types, each from the innermost module out), then by
the operator, then the default.
"""

import threading

import tcemu

SCALINGS = ("round", "tensor", "block")


_ROUTES = {}
_ROUTES_LOCK = threading.Lock()


def route_of(key):
    """The Route whose key is `key` (every Route of this process is registered when made)."""
    try:
        return _ROUTES[key]
    except KeyError:
        raise RuntimeError(f"tcemu.torch: no route {key!r} in this process") from None


def release_routes():
    """Drops every Route (and so every datapath) this module holds."""
    _ROUTES.clear()


class Route:
    """One datapath choice for a product and its gradients.

    datapath: a tcemu.Datapath (copied: later changes to the caller's object do not reach it).
    scaling: how operands become the input format: "round" (round to nearest even, the default
    of unscaled datapaths), "tensor" (per-tensor power-of-two scaling that brings each operand's
    largest magnitude up to at most the format's largest value, then round to nearest; the
    product's scale goes into alpha) or "block" (the only one, and the default, of block-scaled
    datapaths: tcemu.quantize_mx for ue8m0 scales, tcemu.quantize_nvfp4 for NVFP4, the scales
    passed to tcemu.matmul).
    backward: the Route (or a Datapath, taken with this scaling) of the two gradient products
    grad_a = grad b^T and grad_b = a^T grad; None: this route; "native": PyTorch's own product
    in the gradient's dtype (for example fp32 gradients under an emulated forward).
    name: how the summary names the route (default: the first preset's architecture with this
    datapath and its formats, e.g. 'sm90 fp16->fp32', or 'fp16->fp32 (custom)')."""

    def __init__(self, datapath, scaling=None, backward=None, name=None):
        if not isinstance(datapath, tcemu.Datapath):
            raise TypeError(
                f"tcemu.torch.Route: datapath must be a tcemu.Datapath, got {type(datapath).__name__}"
            )
        datapath.validate()
        self.datapath = datapath.copy()
        scaled = datapath.block_scaled
        self.scaling = scaling if scaling is not None else ("block" if scaled else "round")
        if self.scaling not in SCALINGS:
            raise ValueError(
                f"tcemu.torch.Route: scaling must be one of {SCALINGS}, got {self.scaling!r}"
            )
        if scaled != (self.scaling == "block"):
            raise ValueError(
                "tcemu.torch.Route: scaling 'block' is for block-scaled datapaths, and the only one "
                f"they take; this datapath is {'' if scaled else 'not '}block-scaled, scaling {self.scaling!r}"
            )
        if backward is None or backward == "native" or isinstance(backward, Route):
            self.backward = backward
        elif isinstance(backward, tcemu.Datapath):
            keep = not backward.block_scaled and self.scaling != "block"  # this route's scaling
            self.backward = Route(backward, self.scaling if keep else None)
        else:
            raise TypeError(
                "tcemu.torch.Route: backward must be None, 'native', a Route or a tcemu.Datapath, "
                f"got {backward!r}"
            )
        self.name = name or _default_name(self.datapath)
        # The route's full description, equal keys for equal bits (str(datapath) lists every
        # field): the tcemu::gemm operator's argument, a plain string as operator schemas
        # require (and a constant attribute to torch.compile). A Route is callable by its key from
        # its construction on (route_of), so that nothing registers while torch.compile traces.
        back = self.backward.key if isinstance(self.backward, Route) else str(self.backward)
        self.key = f"{self.scaling}|{self.datapath}|backward=({back})"
        with _ROUTES_LOCK:
            _ROUTES.setdefault(self.key, self)

    def gradient_route(self):
        """The Route of the gradient products, or "native"."""
        return self if self.backward is None else self.backward

    def __repr__(self):
        return (
            f"tcemu.torch.Route({self.name}, scaling={self.scaling!r}, backward={self.backward!r})"
        )


def _default_name(dp):
    """'ARCH INPUT->ACCUMULATOR' of the first preset with this datapath, else 'INPUT->ACCUMULATOR
    (custom)'."""
    b = f"x{dp.input_b.name}" if dp.input_b is not None else ""
    formats = f"{dp.input.name}{b}->{dp.accumulator.name}"
    arch = next((e.arch for e in tcemu.presets() if e.datapath == dp), None)
    return f"{arch} {formats}" if arch else f"{formats} (custom)"


def _as_route(value, where):
    if value is None or isinstance(value, Route):
        return value
    if isinstance(value, tcemu.Datapath):
        return Route(value)
    raise TypeError(
        f"tcemu.torch.Policy: {where} must be a tcemu.Datapath, a Route or None (native), got {value!r}"
    )


class Policy:
    """Which Route each product takes.

    datapath: the default, a tcemu.Datapath or Route (None: products that nothing below names run
    natively). scaling, backward: the default Route's (see Route) when datapath is a Datapath.
    layers: {qualified module name: Datapath | Route | None}, names as model.named_modules()
    gives them ("" is the model itself). types: {module class: Datapath | Route | None}.
    operators: {operator name: Datapath | Route | None}, the names of tcemu.torch.OPERATORS.
    A product takes the entry of the innermost module whose name has one, going outwards; else
    that of the innermost module whose type (or a base class) has one; else its operator's; else
    the default. None means natively."""

    def __init__(
        self, datapath=None, *, scaling=None, backward=None, layers=None, types=None, operators=None
    ):
        from .forms import OPERATORS

        if isinstance(datapath, tcemu.Datapath):
            datapath = Route(datapath, scaling=scaling, backward=backward)
        elif scaling is not None or backward is not None:
            raise ValueError(
                "tcemu.torch.Policy: scaling= and backward= apply to a Datapath default; give a Route their place"
            )
        self.default = _as_route(datapath, "datapath")
        self.layers = {str(k): _as_route(v, f"layers[{k!r}]") for k, v in (layers or {}).items()}
        self.types = {}
        for k, v in (types or {}).items():
            if not isinstance(k, type):
                raise TypeError(
                    f"tcemu.torch.Policy: the keys of types must be module classes, got {k!r}"
                )
            self.types[k] = _as_route(v, f"types[{k.__name__}]")
        self.operators = {}
        for k, v in (operators or {}).items():
            if k not in OPERATORS:
                raise ValueError(
                    f"tcemu.torch.Policy: operators[{k!r}]: no such operator; they are {sorted(OPERATORS)}"
                )
            self.operators[k] = _as_route(v, f"operators[{k!r}]")

    def route(self, operator, modules):
        """(Route or None, why): the route of a product of `operator` run inside `modules`, a list
        of (qualified name, module) from the outermost to the innermost."""
        for name, _ in reversed(modules):
            if name in self.layers:
                return self.layers[name], f"layer {name!r}"
        for _, module in reversed(modules):
            for cls in type(module).__mro__:
                if cls in self.types:
                    return self.types[cls], f"type {cls.__name__}"
        if operator in self.operators:
            return self.operators[operator], f"operator {operator}"
        return self.default, "default"
