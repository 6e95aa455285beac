"""tcemu.torch's routed operators give, bit for bit, tcemu.matmul's results on the same operands
and datapath: forward and both gradients (grad_a = grad B^T, grad_b = A^T grad through the
route's backward datapath), for every operator of tcemu.torch.OPERATORS; the operand
conversions (round to nearest, per-tensor and block scaling)."""

import math

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="tcemu.torch needs PyTorch (bash scripts/setup.sh installs it)"
)
import torch.nn.functional as F  # noqa: E402
from torch_support import assert_bits, batched_reference, reference  # noqa: E402

import tcemu  # noqa: E402
import tcemu.torch as tt  # noqa: E402
from tcemu.torch import operands  # noqa: E402

SM90 = tcemu.preset("sm90", "fp16", "fp32")  # RZ blocks: truncation shows in the bits
SM70 = tcemu.preset("sm70", "fp16", "fp32")


def randn(gen, *shape, scale=1.0):
    return (torch.randn(*shape, generator=gen, dtype=torch.float32) * scale).requires_grad_()


@pytest.fixture
def gen():
    return torch.Generator().manual_seed(36)


def test_every_operator_is_tested():
    assert set(tt.OPERATORS) == {
        "linear",
        "matmul",
        "mm",
        "bmm",
        "addmm",
        "baddbmm",
        "einsum",
        "conv1d",
        "conv2d",
        "scaled_dot_product_attention",
    }


def test_linear_forward_and_gradients(gen):
    x, w, bias = randn(gen, 6, 40), randn(gen, 9, 40), randn(gen, 9)
    g = torch.randn(6, 9, generator=gen)
    with tt.emulate(SM90) as mode:
        y = F.linear(x, w, bias)
    y.backward(g)
    assert mode.summary.routed("linear") == 1 and mode.summary.native() == 0
    assert_bits(y, reference(x, w.t(), SM90, c=bias.expand(6, 9), beta=1.0), "forward")
    assert_bits(x.grad, reference(g, w, SM90), "grad input")
    assert_bits(w.grad, reference(x.t(), g, SM90).t(), "grad weight")
    assert_bits(bias.grad, g.sum(0), "grad bias (native sum)")


@pytest.mark.parametrize("form", ["matmul", "@", "method", "mm", "einsum"])
def test_2d_products(gen, form):
    a, b = randn(gen, 7, 33), randn(gen, 33, 5)
    g = torch.randn(7, 5, generator=gen)
    call = {
        "matmul": lambda: torch.matmul(a, b),
        "@": lambda: a @ b,
        "method": lambda: a.mm(b),
        "mm": lambda: torch.mm(a, b),
        "einsum": lambda: torch.einsum("ik,kj->ij", a, b),
    }[form]
    with tt.emulate(SM90) as mode:
        d = call()
    d.backward(g)
    assert mode.summary.routed() == 1
    assert_bits(d, reference(a, b, SM90), "forward")
    assert_bits(a.grad, reference(g, b.t(), SM90), "grad a")
    assert_bits(b.grad, reference(a.t(), g, SM90), "grad b")


@pytest.mark.parametrize("form", ["bmm", "matmul", "einsum", "einsum-permuted"])
def test_batched_products(gen, form):
    a, b = randn(gen, 3, 4, 20), randn(gen, 3, 20, 6)
    g = torch.randn(3, 4, 6, generator=gen)
    call = {
        "bmm": lambda: torch.bmm(a, b),
        "matmul": lambda: a.matmul(b),
        "einsum": lambda: torch.einsum("bik,bkj->bij", a, b),
        "einsum-permuted": lambda: torch.einsum("bik,bkj->jbi", a, b).permute(1, 2, 0),
    }[form]
    with tt.emulate(SM90) as mode:
        d = call()
    d.backward(g)
    assert mode.summary.routed() == 1
    assert_bits(d.contiguous(), batched_reference(a, b, SM90), "forward")
    assert_bits(a.grad, batched_reference(g, b.transpose(1, 2), SM90), "grad a")
    assert_bits(b.grad, batched_reference(a.transpose(1, 2), g, SM90), "grad b")


def test_matmul_broadcasts_and_takes_vectors(gen):
    a, b, v = randn(gen, 2, 3, 5, 16), randn(gen, 16, 4), randn(gen, 16)
    with tt.emulate(SM90) as mode:
        d = a @ b  # rows of every batch onto m: the per-matrix bits
        dv = a @ v
        vb = v @ b
        dot = v @ v
    assert mode.summary.routed("matmul") == 4
    for i in range(2):
        for j in range(3):
            assert_bits(d[i, j], reference(a[i, j], b, SM90), f"batch {i} {j}")
            assert_bits(dv[i, j], reference(a[i, j], v[:, None], SM90)[:, 0], "matrix @ vector")
    assert_bits(vb, reference(v[None, :], b, SM90)[0], "vector @ matrix")
    assert_bits(dot, reference(v[None, :], v[:, None], SM90)[0, 0], "vector @ vector")


@pytest.mark.parametrize("batched", [False, True])
def test_addmm_and_baddbmm_take_alpha_and_beta(gen, batched):
    a = randn(gen, *((2,) if batched else ()), 5, 24)
    b = randn(gen, *((2,) if batched else ()), 24, 3)
    c = randn(gen, 3)
    g = torch.randn(a.shape[:-1] + (3,), generator=gen)
    with tt.emulate(SM90) as mode:
        d = (torch.baddbmm if batched else torch.addmm)(c, a, b, beta=0.5, alpha=0.75)
    d.backward(g)
    assert mode.summary.routed() == 1
    pairs = [(a[i], b[i], g[i]) for i in range(2)] if batched else [(a, b, g)]
    for i, (ai, bi, gi) in enumerate(pairs):
        di = d[i] if batched else d
        assert_bits(di, reference(ai, bi, SM90, c=c.expand(5, 3), alpha=0.75, beta=0.5), "forward")
        assert_bits(
            ai.grad if not batched else a.grad[i], reference(gi, bi.t(), SM90, alpha=0.75), "grad a"
        )
        assert_bits(
            b.grad[i] if batched else b.grad, reference(ai.t(), gi, SM90, alpha=0.75), "grad b"
        )
    assert_bits(c.grad, (g * 0.5).reshape(-1, 3).sum(0), "grad c: beta grad, summed natively")


def test_conv2d_is_the_gemm_of_its_patches(gen):
    x, w, bias = randn(gen, 2, 4, 7, 6), randn(gen, 6, 2, 3, 2), randn(gen, 6)
    kw = dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2)
    with tt.emulate(SM90) as mode:
        y = F.conv2d(x, w, bias, **kw)
    assert mode.summary.routed("conv2d") == 1
    assert y.shape == F.conv2d(x, w, bias, **kw).shape
    cols = F.unfold(
        x.detach(), (3, 2), dilation=kw["dilation"], padding=kw["padding"], stride=kw["stride"]
    )
    for grp in range(2):
        patches = cols[:, grp * 12 : (grp + 1) * 12].permute(0, 2, 1).reshape(-1, 12)
        wg = w.detach()[grp * 3 : (grp + 1) * 3].reshape(3, 12)
        expected = reference(
            patches,
            wg.t(),
            SM90,
            c=bias.detach()[grp * 3 : (grp + 1) * 3].expand(patches.shape[0], 3),
            beta=1.0,
        )
        got = y[:, grp * 3 : (grp + 1) * 3].permute(0, 2, 3, 1).reshape(-1, 3)
        assert_bits(got, expected, f"group {grp}")


def test_sdpa_is_two_products_and_a_native_softmax(gen):
    q, k, v = randn(gen, 2, 5, 16), randn(gen, 2, 7, 16), randn(gen, 2, 7, 8)
    with tt.emulate(SM90) as mode:
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert mode.summary.routed("scaled_dot_product_attention") == 1
    s = batched_reference(q, k.transpose(1, 2), SM90, alpha=0.25)  # 1 / sqrt(16)
    s = s.masked_fill(~torch.ones(5, 7, dtype=torch.bool).tril(), -math.inf)
    assert_bits(o, batched_reference(torch.softmax(s, -1), v, SM90), "forward")
    # its gradients are those of the same composition through tcemu.torch.matmul
    g = torch.randn(2, 5, 8, generator=gen)
    o.backward(g)
    grads = [t.grad.clone() for t in (q, k, v)]
    for t in (q, k, v):
        t.grad = None
    s = tt.matmul(q, k.transpose(1, 2), SM90, alpha=0.25)
    s = s.masked_fill(~torch.ones(5, 7, dtype=torch.bool).tril(), -math.inf)
    tt.matmul(torch.softmax(s, -1), v, SM90).backward(g)
    for name, got, t in zip("qkv", grads, (q, k, v)):
        assert_bits(got, t.grad, f"grad {name}")


def test_backward_datapath_and_native_gradients(gen):
    a, b = randn(gen, 5, 24), randn(gen, 24, 4)
    g = torch.randn(5, 4, generator=gen)
    route = tt.Route(SM90, backward=SM70)
    tt.matmul(a, b, route).backward(g)
    assert_bits(a.grad, reference(g, b.t(), SM70), "grad a on the backward datapath")
    assert_bits(b.grad, reference(a.t(), g, SM70), "grad b on the backward datapath")
    a.grad = b.grad = None
    d = tt.matmul(a, b, tt.Route(SM90, backward="native"))
    assert_bits(d, reference(a, b, SM90), "forward on the forward datapath")
    d.backward(g)
    assert_bits(a.grad, g @ b.detach().t(), "native grad a")
    assert_bits(b.grad, a.detach().t() @ g, "native grad b")


def test_round_to_nearest_matches_pytorchs_casts():
    # float32 values around every fp16/bf16/e4m3 edge: ties, subnormals, overflow, specials
    gen = torch.Generator().manual_seed(1)
    x = torch.cat(
        [
            torch.randn(4000, generator=gen)
            * 2.0 ** torch.randint(-30, 20, (4000,), generator=gen),
            torch.tensor(
                [
                    65504.0,
                    65519.99,
                    65520.0,
                    1e6,
                    2.0**-25,
                    2.0**-24 * 1.5,
                    1 + 2.0**-11,
                    -0.0,
                    math.inf,
                    -math.inf,
                    448.0,
                    464.0,
                    2.0**-10,
                    3.0 * 2.0**-10,
                ]
            ),
        ]
    )
    for name, dtype in [
        ("fp16", torch.float16),
        ("bf16", torch.bfloat16),
        ("e5m2", torch.float8_e5m2),
    ]:
        got = operands.round_to(x, tcemu.Format(name)).to(dtype)
        assert_bits(got, x.to(dtype), name)
    # e4m3 saturates where PyTorch's cast gives NaN; within range both are RNE
    e4m3 = operands.round_to(x, tcemu.Format("e4m3"))
    inside = x.abs() <= 464.0
    assert_bits(e4m3[inside].to(torch.float8_e4m3fn), x[inside].to(torch.float8_e4m3fn), "e4m3")
    assert e4m3[~inside & x.isfinite()].abs().max() == 448.0


def test_float64_operands_are_rounded_once():
    # 1 + 2^-11 + 2^-40: float32 would round it to the tie 1 + 2^-11, then fp16 to 1.0; one RNE
    # rounding gives 1 + 2^-10
    a = torch.tensor([[1 + 2.0**-11 + 2.0**-40]], dtype=torch.float64)
    one = torch.ones(1, 1, dtype=torch.float64)
    d = tt.matmul(a, one, tcemu.preset("exact-rn", "fp16", "fp32"))
    assert d.item() == 1 + 2.0**-10


def test_per_tensor_scaling(gen):
    a, b = torch.randn(6, 40, generator=gen) * 1e-6, torch.randn(40, 5, generator=gen) * 3e5
    dp = tcemu.preset("sm89", "e4m3", "fp32")
    d = tt.matmul(a, b, tt.Route(dp, scaling="tensor"))
    ea = math.frexp(448.0 / float(a.abs().max()))[1] - 1
    eb = math.frexp(448.0 / float(b.abs().max()))[1] - 1
    qa = (a.double() * 2.0**ea).to(torch.float8_e4m3fn).view(torch.uint8)
    qb = (b.double() * 2.0**eb).to(torch.float8_e4m3fn).view(torch.uint8)
    assert (a * 2.0**ea).abs().max() <= 448 and (a * 2.0**ea).abs().max() > 224
    expected = tcemu.matmul(qa.numpy(), qb.numpy(), datapath=dp, alpha=2.0 ** -(ea + eb))
    assert_bits(d, torch.from_numpy(expected), "per-tensor scaled e4m3")


@pytest.mark.parametrize("recipe", ["mxfp8", "nvfp4"])
def test_block_scaling(gen, recipe):
    a, b = torch.randn(4, 64, generator=gen), torch.randn(64, 3, generator=gen)
    if recipe == "mxfp8":
        dp = tcemu.preset("sm100", "e4m3", "fp32", "tcgen05.mxf8f6f4.block32")
        qa, qb = tcemu.quantize_mx(a.numpy(), "e4m3", 32, -1), tcemu.quantize_mx(
            b.numpy(), "e4m3", 32, 0
        )
        alpha = 1.0
    else:
        dp = tcemu.preset("sm100", "e2m1", "fp32", "tcgen05.mxf4nvf4.block16.ue4m3")
        qa, qb = tcemu.quantize_nvfp4(a.numpy(), 16, -1), tcemu.quantize_nvfp4(b.numpy(), 16, 0)
        alpha = float(qa[2]) * float(qb[2])
    d = tt.matmul(a, b, dp)
    expected = tcemu.matmul(qa[0], qb[0], datapath=dp, scale_a=qa[1], scale_b=qb[1], alpha=alpha)
    assert_bits(d, torch.from_numpy(np.asarray(expected)), recipe)


def test_bad_routes_are_refused():
    with pytest.raises(ValueError, match="block-scaled"):
        tt.Route(SM90, scaling="block")
    with pytest.raises(ValueError, match="scaling must be one of"):
        tt.Route(SM90, scaling="stochastic")
    with pytest.raises(TypeError, match="backward must be"):
        tt.Route(SM90, backward="fp32")
    with pytest.raises(ValueError, match="k = 3 differs"):
        tt.matmul(torch.ones(2, 3), torch.ones(4, 2), SM90)
    with pytest.raises(ValueError, match="no such operator"):
        tt.Policy(SM90, operators={"conv3d": None})
