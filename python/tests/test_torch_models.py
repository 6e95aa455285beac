"""tcemu.torch on whole models: gradients against native float64 autograd on an exact datapath,
the policy (layers, types, operators, native), the summary of what ran natively, results
independent of the caller's state, torch.compile, and the import without PyTorch."""

import math
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip(
    "torch", reason="tcemu.torch needs PyTorch (bash scripts/setup.sh installs it)"
)
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch_support import assert_bits  # noqa: E402

import tcemu  # noqa: E402
import tcemu.torch as tt  # noqa: E402

# Every product of small integers is exact in fp16 and every sum below 2^24 exact in fp32, and
# this datapath adds them exactly: its results are the float64 results.
EXACT = tcemu.preset("exact-rn", "fp16", "fp32")
SM90 = tcemu.preset("sm90", "fp16", "fp32")


def ints(gen, *shape):
    return torch.randint(-3, 4, shape, generator=gen).to(torch.float32)


CASES = {  # name: (operand shapes, the call)
    "linear": ([(5, 3, 8), (4, 8), (4,)], lambda x, w, b: F.linear(x, w, b)),
    "matmul": ([(2, 1, 3, 8), (3, 8, 4)], lambda a, b: a @ b),
    "mm": ([(3, 8), (8, 5)], torch.mm),
    "bmm": ([(2, 3, 8), (2, 8, 5)], torch.bmm),
    "addmm": ([(5,), (3, 8), (8, 5)], lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2.0)),
    "baddbmm": (
        [(2, 3, 5), (2, 3, 8), (2, 8, 5)],
        lambda c, a, b: torch.baddbmm(c, a, b, beta=2.0),
    ),
    "einsum": ([(3, 2, 8), (8, 5, 2)], lambda a, b: torch.einsum("ibk,kjb->jbi", a, b)),
    "conv2d": (
        [(2, 4, 7, 6), (6, 2, 3, 2), (6,)],
        lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2),
    ),
    "conv2d-same": (
        [(1, 2, 5, 5), (3, 2, 2, 3)],
        lambda x, w: F.conv2d(x, w, padding="same", dilation=2),
    ),
    "conv1d": (
        [(2, 3, 9), (4, 3, 3), (4,)],
        lambda x, w, b: F.conv1d(x, w, b, padding="same", dilation=2),
    ),
    "conv1d-unbatched": ([(3, 9), (4, 3, 2)], lambda x, w: F.conv1d(x, w, stride=2)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_gradients_equal_native_float64_on_an_exact_datapath(case):
    shapes, call = CASES[case]
    gen = torch.Generator().manual_seed(7)
    leaves = [ints(gen, *s).requires_grad_() for s in shapes]
    with tt.emulate(EXACT) as mode:
        y = call(*leaves)
    g = ints(gen, *y.shape)
    y.backward(g)
    assert mode.summary.routed() == 1 and mode.summary.native() == 0
    leaves64 = [t.detach().double().requires_grad_() for t in leaves]
    y64 = call(*leaves64)
    y64.backward(g.double())
    assert_bits(y.double(), y64, "forward")
    for i, (t, t64) in enumerate(zip(leaves, leaves64)):
        assert_bits(t.grad.double(), t64.grad, f"grad of operand {i}")


def test_a_model_trains_on_an_exact_datapath_as_in_float64():
    gen = torch.Generator().manual_seed(9)
    torch.manual_seed(9)
    model = nn.Sequential(nn.Conv2d(2, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 3))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randint(-1, 2, p.shape, generator=gen))
    x = torch.randint(-1, 2, (2, 2, 6, 6), generator=gen).float()
    with tt.emulate(EXACT, model) as mode:
        y = model(x)
    y.sum().backward()
    assert {(r["layer"], r["operator"], r["count"]) for r in mode.summary.rows()} == {
        ("0", "conv2d", 1),
        ("3", "linear", 1),
    }
    grads = [p.grad for p in model.parameters()]
    model64 = model.double()
    model64.zero_grad()
    y64 = model64(x.double())
    y64.sum().backward()
    assert_bits(y.double(), y64, "forward")
    for (name, p), g in zip(model64.named_parameters(), grads):
        assert_bits(g.double(), p.grad, f"grad {name}")


def test_attention_on_an_exact_datapath_equals_float32_math():
    gen = torch.Generator().manual_seed(8)
    q, k, v = ints(gen, 2, 3, 4, 4), ints(gen, 2, 3, 5, 4), ints(gen, 2, 3, 5, 2)
    with tt.emulate(EXACT):
        o = F.scaled_dot_product_attention(q, k, v, scale=0.5)
    s = (q.double() @ k.double().transpose(-1, -2) * 0.5).float()  # exact
    assert_bits(
        o, (torch.softmax(s, -1).to(torch.float16).double() @ v.double()).float(), "attention"
    )


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


def test_policy_routes_by_layer_then_type_then_operator():
    torch.manual_seed(0)
    model = nn.Sequential(Block(), Block(), nn.Linear(8, 3))
    policy = tt.Policy(
        SM90,
        layers={"1": tt.Route(EXACT, name="exact"), "1.b": None},
        types={nn.Linear: tt.Route(tcemu.preset("sm70", "fp16", "fp32"), name="sm70")},
        operators={"mm": None},
    )
    with tt.emulate(policy, model) as mode:
        model(torch.randn(4, 8))
    ran = {r["layer"]: r["ran"] for r in mode.summary.rows()}
    assert ran == {
        "0.a": "tcemu sm70",  # its type
        "0.b": "tcemu sm70",
        "1.a": "tcemu exact",  # its parent's name comes first
        "1.b": "native: policy (layer '1.b')",
        "2": "tcemu sm70",
    }


def test_native_products_are_counted_with_their_reason():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.Conv1d(1, 1, 1))

    with tt.emulate(SM90, model) as mode:
        torch.ones(2, 2, dtype=torch.int64) @ torch.ones(2, 2, dtype=torch.int64)
        F.conv3d(torch.randn(1, 1, 2, 2, 2), torch.randn(1, 1, 1, 1, 1))
        torch.mv(torch.randn(3, 3), torch.randn(3))
        torch.einsum("ii->i", torch.randn(3, 3))
        torch.einsum("ij,jk,kl->il", torch.randn(2, 2), torch.randn(2, 2), torch.randn(2, 2))
        with pytest.raises(RuntimeError):  # natively: PyTorch's own error, counted
            torch.randn(2, 3) @ torch.randn(3, 2, dtype=torch.float64)
        model[0](torch.randn(2, 4))
    assert mode.summary.routed() == 1
    rows = mode.summary.rows()
    for operator, reason in [
        ("matmul", "dtype int64"),
        ("conv3d", "no GEMM form for conv3d in tcemu.torch"),
        ("mv", "no GEMM form for mv in tcemu.torch"),
        ("einsum", "einsum of 1 operands"),
        ("einsum", "einsum of 3 operands"),
        ("matmul", "operands of dtypes float32 and float64"),
    ]:
        assert {"layer": "", "operator": operator, "ran": "native: " + reason, "count": 1} in rows
    assert mode.summary.native() == 6
    assert "native: dtype int64" in str(mode.summary)


def test_results_do_not_depend_on_the_callers_state():
    torch.manual_seed(3)
    model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4))
    x = torch.randn(8, 16)

    def forward():
        with tt.emulate(SM90, model):
            return model(x)

    expected = forward()
    threads, default = torch.get_num_threads(), torch.get_default_dtype()
    try:
        torch.set_num_threads(1)
        assert_bits(forward(), expected, "one thread")
        torch.set_num_threads(max(threads, 2))
        torch.set_default_dtype(torch.float64)
        assert_bits(forward(), expected, "default dtype float64")
    finally:
        torch.set_num_threads(threads)
        torch.set_default_dtype(default)
    with torch.no_grad():
        assert_bits(forward(), expected, "no_grad")
    with torch.inference_mode():
        assert_bits(forward(), expected, "inference_mode")


def test_torch_compile_gives_the_same_bits():
    torch.manual_seed(4)
    model = nn.Sequential(nn.Conv2d(2, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 3))
    x = torch.randn(2, 2, 6, 6)
    wrapped = tt.emulate_module(model, SM90)
    y = wrapped(x)
    y.sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    compiled = torch.compile(wrapped, backend="aot_eager")
    yc = compiled(x)
    yc.sum().backward()
    assert_bits(yc, y, "compiled forward")
    for g, p in zip(grads, model.parameters()):
        assert_bits(p.grad, g, "compiled gradient")
    assert wrapped.summary.routed() == 4 and wrapped.summary.native() == 0


def test_the_custom_operator_compiles_in_one_graph():
    a, b = torch.randn(5, 8), torch.randn(8, 3)
    route = tt.Route(SM90)
    f = torch.compile(lambda x, y: tt.matmul(x, y, route) * 2, backend="aot_eager", fullgraph=True)
    assert_bits(f(a, b), tt.matmul(a, b, route) * 2, "fullgraph")


def test_importing_without_pytorch_says_so():
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "import tcemu\n"
        "try:\n    import tcemu.torch\nexcept ImportError as e:\n    print(e)\n"
    )
    env = dict(os.environ)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert "tcemu.torch needs PyTorch, which is not installed" in out.stdout, (
        out.stdout + out.stderr
    )


def test_the_module_wrapper_names_layers_relative_to_its_module():
    torch.manual_seed(5)
    model = Block()
    wrapped = tt.emulate_module(model, tt.Policy(None, layers={"a": SM90}))
    y = wrapped(torch.randn(3, 8))
    assert y.shape == (3, 8)
    assert {(r["layer"], r["ran"]) for r in wrapped.summary.rows()} == {
        ("a", "tcemu sm90 fp16->fp32"),
        ("b", "native: policy (default)"),
    }
    assert math.isfinite(float(y.detach().sum()))


def test_the_readme_example_prints_what_the_readme_says():
    import pathlib
    import re

    text = (pathlib.Path(__file__).parents[1] / "README.md").read_text()
    code = re.search(
        r"```python\n(import tcemu, tcemu.torch as tt, torch\n.*?)```", text, re.S
    ).group(1)
    printed = re.search(
        r"prints \(python/tests/test_torch_models.py runs this block\)\n\n```\n(.*?)```", text, re.S
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == printed.group(1)


def test_attention_modules_route_every_product():
    torch.manual_seed(6)
    layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, dropout=0.0)
    mha = nn.MultiheadAttention(16, 2, batch_first=True)
    x = torch.randn(2, 5, 16)
    for train in (True, False):
        layer.train(train)
        with tt.emulate(SM90, layer) as mode:
            layer(x)
        rows = {(r["layer"], r["operator"]): r["count"] for r in mode.summary.rows()}
        # the packed q, k, v projection, the attention, the output projection, the feed-forward
        assert rows == {
            ("self_attn", "linear"): 2,
            ("self_attn", "scaled_dot_product_attention"): 1,
            ("linear1", "linear"): 1,
            ("linear2", "linear"): 1,
        }, rows
        assert mode.summary.native() == 0
    with tt.emulate(SM90, mha) as mode:
        out, weights = mha(x, x + 1, x + 2)  # need_weights: the explicit bmm path
    assert weights.shape == (2, 5, 5)
    assert {(r["operator"], r["count"]) for r in mode.summary.rows()} == {("linear", 4), ("bmm", 2)}


def test_recurrent_kernels_run_natively_and_are_counted():
    torch.manual_seed(7)
    lstm = nn.LSTM(4, 8)
    with tt.emulate(SM90, lstm) as mode:
        lstm(torch.randn(3, 1, 4))
    assert mode.summary.rows() == [
        {
            "layer": "",
            "operator": "lstm",
            "ran": "native: no GEMM form for lstm in tcemu.torch",
            "count": 1,
        }
    ]


def test_backward_inside_the_mode_routes_nothing_twice():
    gen = torch.Generator().manual_seed(8)
    a = torch.randn(4, 8, generator=gen, requires_grad=True)
    b = torch.randn(8, 3, generator=gen, requires_grad=True)
    g = torch.randn(4, 3, generator=gen)
    with tt.emulate(tt.Route(SM90, backward="native")) as mode:
        (a @ b).backward(g)
    assert mode.summary.routed() == 1 and mode.summary.native() == 0
    assert_bits(a.grad, g @ b.detach().t(), "native grad a")
    assert_bits(b.grad, a.detach().t() @ g, "native grad b")
