"""emulate(): a TorchFunctionMode that routes every matrix product of the code it runs through
tcemu (the functions of forms.FORMS), following a Policy, and counts each in a Summary.

A TorchFunctionMode sees every torch function call of unmodified model code (F.linear, methods,
operators such as @) before dispatch and without patching PyTorch; it is thread-local, as
PyTorch's mode stack is, so only the thread that entered it is routed. Layer names come from
forward hooks on the model's modules (Layers), which keep a per-thread stack of the modules
being run.

A Python-level torch function (F.multi_head_attention_forward) reaches the mode whole, and
PyTorch runs a mode's handler with the mode off: the products inside would pass unseen. The
functions of forms.TRANSPARENT are therefore run from a copy whose has_torch_function checks
answer False (their plain-Tensor arguments have no override of their own), with the mode
pushed again, so that each product inside reaches it.
"""

import threading
import types

import torch
from torch.overrides import TorchFunctionMode

import tcemu

from . import operators
from .forms import FORMS, TRANSPARENT, UNROUTED, Native, Products
from .policy import Policy, Route
from .summary import Summary


class Layers:
    """Forward hooks on every module of `model` that keep the stack of modules running in the
    current thread: [(qualified name, module)], outermost first. remove() takes the hooks off."""

    def __init__(self, model):
        if not isinstance(model, torch.nn.Module):
            raise TypeError(
                f"tcemu.torch: model must be a torch.nn.Module, got {type(model).__name__}"
            )
        self._local = threading.local()
        self._handles = []
        for name, module in model.named_modules():
            self._handles.append(module.register_forward_pre_hook(self._enter(name)))
            self._handles.append(module.register_forward_hook(self._leave, always_call=True))

    def stack(self):
        if not hasattr(self._local, "stack"):
            self._local.stack = []
        return self._local.stack

    def _enter(self, name):
        def hook(module, args):
            self.stack().append((name, module))

        return hook

    def _leave(self, module, args, output):
        stack = self.stack()
        if stack and stack[-1][1] is module:
            stack.pop()

    def remove(self):
        for h in self._handles:
            h.remove()
        self._handles = []


_UNCHECKED = {}


def _unchecked(func):
    """func with has_torch_function* answering False in its globals (cached)."""
    if func not in _UNCHECKED:
        no = {
            n: (lambda *args: False)
            for n in (
                "has_torch_function",
                "has_torch_function_unary",
                "has_torch_function_variadic",
            )
        }
        copy = types.FunctionType(
            func.__code__,
            {**func.__globals__, **no},
            func.__name__,
            func.__defaults__,
            func.__closure__,
        )
        copy.__kwdefaults__ = func.__kwdefaults__
        _UNCHECKED[func] = copy
    return _UNCHECKED[func]


def _plain_tensors(args, kwargs):
    """Whether every tensor among the arguments is a torch.Tensor or Parameter, no subclass."""
    values = list(args) + list(kwargs.values())
    return all(
        type(v) in (torch.Tensor, torch.nn.Parameter) for v in values if isinstance(v, torch.Tensor)
    )


def as_policy(policy):
    if isinstance(policy, Policy):
        return policy
    if isinstance(policy, (tcemu.Datapath, Route)):
        return Policy(policy)
    raise TypeError(
        f"tcemu.torch: policy must be a Policy, a Route or a tcemu.Datapath, got {type(policy).__name__}"
    )


class emulate(TorchFunctionMode):
    """with tcemu.torch.emulate(policy, model=None, summary=None) as mode: every matrix product
    run inside (forms.OPERATORS: linear, matmul, mm, bmm, addmm, baddbmm, einsum, conv1d,
    conv2d, scaled_dot_product_attention) goes through tcemu::gemm on the Route the policy gives
    it (a Policy, or a Datapath or Route for all products), with its gradients. model: the
    nn.Module whose qualified names and types the policy's layers and types name (hooks are
    added for the duration). Products the policy leaves native, that have no GEMM form here
    (forms.UNROUTED, an integer dtype, ...) run natively; every product is counted in
    mode.summary (a new Summary unless one is given)."""

    def __init__(self, policy, model=None, summary=None):
        super().__init__()
        self.policy = as_policy(policy)
        self.summary = summary if summary is not None else Summary()
        self._model = model
        self._layers = None

    def __enter__(self):
        if isinstance(self._model, Layers):
            self._layers = self._model
        elif self._model is not None:
            self._layers = Layers(self._model)
        return super().__enter__()

    def __exit__(self, *exc):
        try:
            return super().__exit__(*exc)
        finally:
            if self._layers is not None and self._layers is not self._model:
                self._layers.remove()
            self._layers = None

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        form = FORMS.get(func)
        if form is None:
            if func in TRANSPARENT and _plain_tensors(args, kwargs):
                TorchFunctionMode.__enter__(self)  # the handler runs with this mode popped
                try:
                    return _unchecked(func)(*args, **kwargs)
                finally:
                    TorchFunctionMode.__exit__(self, None, None, None)
            if func in UNROUTED:
                name = UNROUTED[func]
                self.summary.record(
                    self._layer(), name, reason=f"no GEMM form for {name} in tcemu.torch"
                )
            return func(*args, **kwargs)
        operator, rewrite = form
        modules = self._layers.stack() if self._layers is not None else []
        layer = modules[-1][0] if modules else ""
        route, why = self.policy.route(operator, modules)
        if route is None:
            self.summary.record(layer, operator, reason=f"policy ({why})")
            return func(*args, **kwargs)
        try:
            out = operators.timed("forward_seconds", rewrite, Products(route), *args, **kwargs)
        except Native as e:
            self.summary.record(layer, operator, reason=e.reason)
            return func(*args, **kwargs)
        self.summary.record(layer, operator, route=route)
        operators.routed(operator)
        return out

    def _layer(self):
        modules = self._layers.stack() if self._layers is not None else []
        return modules[-1][0] if modules else ""
