"""tcemu.torch on CUDA tensors: every routed product of a model on the GPU engine gives the bits
of tcemu.matmul on the same operands (which the GPU tests check against the emulator), forward
and gradients, and the results stay on the device. Skipped without a CUDA device."""

import pytest

torch = pytest.importorskip(
    "torch", reason="tcemu.torch needs PyTorch (bash scripts/setup.sh installs it)"
)
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch_support import assert_bits, reference  # noqa: E402

import tcemu  # noqa: E402
import tcemu.torch as tt  # noqa: E402

if not (torch.cuda.is_available() and tcemu.gpu_built() and tcemu.devices()):
    pytest.skip(
        "no CUDA device, or tcemu built without its GPU backend (these run on a GPU machine: "
        "docs/gpu.md)",
        allow_module_level=True,
    )


@pytest.mark.parametrize("arch", ["sm90", "sm70"])
def test_cuda_linear_and_attention_give_the_emulators_bits(arch):
    dp = tcemu.preset(arch, "fp16", "fp32")
    gen = torch.Generator().manual_seed(11)
    x, w, bias = (torch.randn(*s, generator=gen) for s in [(33, 64), (24, 64), (24,)])
    g = torch.randn(33, 24, generator=gen)
    xc, wc, bc = (t.cuda().requires_grad_() for t in (x, w, bias))
    with tt.emulate(dp) as mode:
        y = F.linear(xc, wc, bc)
    y.backward(g.cuda())
    assert y.is_cuda and mode.summary.routed() == 1
    assert_bits(y.cpu(), reference(x, w.t(), dp, c=bias.expand(33, 24), beta=1.0), "forward")
    assert_bits(xc.grad.cpu(), reference(g, w, dp), "grad input")
    assert_bits(wc.grad.cpu(), reference(x.t(), g, dp).t(), "grad weight")


def test_cuda_model_matches_the_cpu_model():
    torch.manual_seed(12)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 8 * 8, 10)
    )
    x = torch.randn(4, 3, 8, 8)
    dp = tcemu.preset("sm90", "fp16", "fp32")
    with tt.emulate(dp, model):
        cpu = model(x)
    model.cuda()
    with tt.emulate(dp, model) as mode:
        gpu = model(x.cuda())
    assert mode.summary.routed() == 2 and mode.summary.native() == 0
    assert_bits(gpu.cpu(), cpu, "CUDA against CPU")


def test_on_a_side_stream_the_engine_reads_the_operands_written_and_its_result_is_waited_for():
    """The operands are written on a stream other than the default one, behind long kernels:
    the engine (on the default stream) must wait for them (an engine that read early would see
    the zeros), and the stream must wait for the engine's result; the bits equal the default
    stream's."""
    dp = tcemu.preset("sm90", "fp16", "fp32")
    gen = torch.Generator().manual_seed(13)
    a = torch.randn(6, 64, 96, generator=gen).cuda()
    b = torch.randn(6, 96, 80, generator=gen).cuda()
    with tt.emulate(dp):
        expected = torch.bmm(a, b).cpu()
    big = torch.randn(4096, 4096, device="cuda")
    side = torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        ac, bc = torch.zeros_like(a), torch.zeros_like(b)
        busy = big
        for _ in range(8):
            busy = busy @ big
        ac.copy_(a)
        bc.copy_(b)
        with tt.emulate(dp):
            d = torch.bmm(ac, bc)
        got = (d + 0.0).cpu()
    assert_bits(got, expected, "side stream")
