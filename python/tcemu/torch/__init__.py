"""tcemu.torch: whole PyTorch models on any tensor-core datapath, forward and backward.

    with tcemu.torch.emulate(policy, model):   # every matrix product of model, on the policy's datapaths
        loss = model(x).sum()
    loss.backward()                            # the gradients' products too

policy: a tcemu.Datapath, a Route or a Policy (per layer, type, operator). python/README.md has
the tour; help() on each name says more. PyTorch is an optional dependency of tcemu: this
subpackage alone needs it.
"""

try:
    import torch  # noqa: F401
except ImportError as e:
    raise ImportError(
        "tcemu.torch needs PyTorch, which is not installed (pip install torch); the rest of tcemu works without it"
    ) from e

from .forms import OPERATORS
from .mode import Layers, emulate
from .module import EmulatedModule, emulate_module
from .operators import gemm, matmul, recording, register
from .policy import Policy, Route
from .summary import Summary

__all__ = [
    "OPERATORS",
    "EmulatedModule",
    "Layers",
    "Policy",
    "Route",
    "Summary",
    "emulate",
    "emulate_module",
    "gemm",
    "matmul",
    "recording",
    "register",
]
