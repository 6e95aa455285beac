"""emulate_module(): one module whose forward runs under emulate(), its summary kept."""

import torch

from .mode import Layers, as_policy, emulate
from .summary import Summary


class EmulatedModule(torch.nn.Module):
    """`module` with every forward under tcemu.torch.emulate(policy): layer names are relative
    to `module` ("" is the module itself); self.summary counts every call's products. The
    wrapped module is self.module (its parameters are this module's, prefixed "module.")."""

    def __init__(self, module, policy):
        super().__init__()
        self.module = module
        self.policy = as_policy(policy)
        self.summary = Summary()
        self._layers = Layers(module)

    def forward(self, *args, **kwargs):
        with emulate(self.policy, model=self._layers, summary=self.summary):
            return self.module(*args, **kwargs)


def emulate_module(module, policy):
    """An EmulatedModule: `module` (unchanged but for forward hooks that track layer names) run
    with all its matrix products on `policy` (a Policy, Route or tcemu.Datapath)."""
    return EmulatedModule(module, policy)
