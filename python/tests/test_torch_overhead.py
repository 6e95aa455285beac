"""The speed benchmark of tcemu.torch (experiments/torch/overhead.py) and the recording hook it
times the engine with: what is recorded, and the benchmark's CSV at its CPU size. No timing is
asserted (the H200 figure is in docs/performance.md)."""

import csv
import importlib.util
import pathlib

import pytest

torch = pytest.importorskip(
    "torch", reason="tcemu.torch needs PyTorch (bash scripts/setup.sh installs it)"
)

import tcemu  # noqa: E402
import tcemu.torch as tt  # noqa: E402

SM90 = tcemu.preset("sm90", "fp16", "fp32")
SCRIPT = pathlib.Path(__file__).parents[2] / "experiments" / "torch" / "overhead.py"


def overhead():
    """experiments/torch/overhead.py as a module (run in this process: no second import of
    PyTorch)."""
    spec = importlib.util.spec_from_file_location("overhead", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_recording_lists_the_one_engine_call_of_a_batched_product_and_its_gradients():
    torch.manual_seed(1)
    a = torch.randn(3, 4, 5, requires_grad=True)
    b = torch.randn(3, 5, 6, requires_grad=True)
    with tt.recording(timed=True) as r:
        with tt.emulate(SM90) as mode:
            d = torch.bmm(a, b)
        d.sum().backward()
    assert mode.summary.routed() == 1 and dict(r.calls) == {"bmm": 1}
    shapes = [(p.a[0], p.b[0]) for p in r.products]
    # one batched call each: A B, then grad B^T (A's gradient), then A^T grad (B's)
    assert shapes == [((3, 4, 5), (3, 5, 6)), ((3, 4, 6), (3, 6, 5)), ((3, 5, 4), (3, 4, 6))]
    assert all(p.a[2] == torch.float16 and p.datapath == SM90 for p in r.products)
    assert sum(p.macs for p in r.products) == 3 * 3 * 4 * 5 * 6
    assert r.forward_seconds > 0 and r.backward_seconds > 0
    with tt.emulate(SM90):
        torch.bmm(a, b)  # no recorder active: nothing is added
    assert len(r.products) == 3


def test_the_benchmark_writes_its_columns_and_counts_every_routed_product(tmp_path, capsys):
    pytest.importorskip("torchvision", reason="the benchmark's ResNet-18 is torchvision's")
    out = tmp_path / "overhead.csv"
    overhead().main(["--size", "small", "--device", "cpu", "--repeats", "1", "--out", str(out)])
    printed = capsys.readouterr().out
    with open(out, newline="") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
    assert reader.fieldnames == [
        "model",
        "device",
        "size",
        "datapath",
        "repeats",
        "t_native_s",
        "t_total_s",
        "t_routed_s",
        "t_routed_forward_s",
        "t_routed_backward_s",
        "t_engine_s",
        "wrapper_ratio",
        "total_ratio",
        "routed",
        "native",
        "recorded_calls",
        "engine_products",
        "engine_gmac",
    ]
    assert [(r["model"], r["datapath"]) for r in rows] == [
        (model, dp) for model in ("resnet18", "transformer")
        for dp in ("sm90 fp16->fp32", "sm70 fp16->fp32")
    ]
    for r in rows:
        assert (r["device"], r["size"]) == ("cpu", "small")
        routed = int(r["routed"])
        assert routed > 0 and int(r["native"]) == 0, r
        assert int(r["recorded_calls"]) == routed, r
        # each product and at least its weight's gradient (the first layer has no input gradient)
        assert int(r["engine_products"]) >= 2 * routed, r
        for column in ("t_native_s", "t_total_s", "t_routed_s", "t_engine_s", "engine_gmac"):
            assert float(r[column]) > 0, (column, r)
    assert "| resnet18 | sm70 fp16->fp32 |" in printed and f"wrote {out}" in printed


def test_the_benchmark_says_what_it_needs(capsys):
    with pytest.raises(SystemExit) as stop:
        overhead().main(["--repeats", "0"])
    assert stop.value.code == 2
    assert "--repeats must be at least 1, got 0" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        overhead().main(["--archs", "sm42"])
    assert stop.value.code == 2
    assert "--archs" in capsys.readouterr().err
