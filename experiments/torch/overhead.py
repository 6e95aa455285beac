"""Speed of tcemu.torch (issue 36, section 1): what the wrapper costs over the engine's own time
on the products it routes, in one training step (forward and backward, no optimizer) of a
randomly initialised ResNet-18 (torchvision's architecture) and of a small transformer
(nn.TransformerEncoder), every product on each datapath of --archs: sm90 fp16->fp32 (on the H200
its own datapath, which the GPU engine computes with our wgmma kernel) and sm70 (the emulated
engine).

Per model, after a warm-up step and each the median of --repeats runs:
  t_native   the step without emulation;
  t_total    the step under tcemu.torch.emulate(Policy(datapath)), nothing instrumented;
  t_routed   the wall time inside the routed calls (emulate()'s rewrite of each product: im2col,
             conversions, the tcemu::gemm operator) and inside the operator's backward (the two
             gradient products), each CUDA-synchronized at both ends (tcemu.torch.recording);
  t_engine   tcemu.matmul alone on the products the operator computed in that step (their
             operands' shapes, strides, dtypes, device; random values), one call each,
             CUDA-synchronized, summed;
  wrapper_ratio = t_routed / t_engine (issue 36's goal: at most 1.2) and
  total_ratio = t_total / t_native. The autograd of the rewrite's native steps (the fold that
  undoes im2col, reshapes) is in t_total, not in t_routed.
routed and native are the emulate() summary's counts of the step; recorded_calls the routed calls
the recording hook saw (equal to routed); engine_products the tcemu.matmul calls (a batched
product is one call, a product's backward two more).

--size small (CPU): 16x16 images at batch 2, a 2-layer transformer of width 32 over 16 tokens.
--size full (for --device cuda): 224x224 images at batch 32; d_model 512, 8 heads, 6 layers,
feed-forward 2048, 256 tokens at batch 16. Writes --out (CSV) and prints a table.
"""

import argparse
import csv
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import tcemu
import tcemu.torch as tt

SIZES = {
    "small": dict(image=16, batch=2, d_model=32, heads=4, layers=2, ff=64, seq=16, tokens_batch=2),
    "full": dict(
        image=224, batch=32, d_model=512, heads=8, layers=6, ff=2048, seq=256, tokens_batch=16
    ),
}
COLUMNS = [
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


class Transformer(nn.Module):
    """A token embedding, nn.TransformerEncoder (post-norm, ReLU) and a linear head."""

    def __init__(self, s, vocab=1000):
        super().__init__()
        self.embed = nn.Embedding(vocab, s["d_model"])
        layer = nn.TransformerEncoderLayer(
            s["d_model"], s["heads"], s["ff"], dropout=0.0, batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, s["layers"], enable_nested_tensor=False)
        self.head = nn.Linear(s["d_model"], vocab)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens)))


def workloads(size, device):
    """[(name, model, inputs, targets)]: the two models on `device` with random data."""
    import torchvision

    s = SIZES[size]
    g = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    resnet = torchvision.models.resnet18().to(device)
    images = torch.randn(s["batch"], 3, s["image"], s["image"], generator=g).to(device)
    labels = torch.randint(0, 1000, (s["batch"],), generator=g).to(device)
    torch.manual_seed(0)
    transformer = Transformer(s).to(device)
    tokens = torch.randint(0, 1000, (s["tokens_batch"], s["seq"]), generator=g).to(device)
    return [
        ("resnet18", resnet, images, labels),
        ("transformer", transformer, tokens, tokens),
    ]


def synchronize(device):
    if device == "cuda":
        torch.cuda.synchronize()


def step(model, inputs, targets, policy=None):
    """One forward and backward; returns the emulate() summary (None without a policy)."""
    model.zero_grad(set_to_none=True)
    if policy is None:
        logits = model(inputs)
        summary = None
    else:
        with tt.emulate(policy, model) as mode:
            logits = model(inputs)
        summary = mode.summary
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), targets.reshape(-1))
    loss.backward()
    return summary


def timed_step(device, *args):
    synchronize(device)
    start = time.perf_counter()
    summary = step(*args)
    synchronize(device)
    return time.perf_counter() - start, summary


def random_operand(spec, device):
    """A tensor of the recorded (shape, stride, dtype), over a storage of the same extent (an
    expanded operand keeps its zero strides), with random finite values: N(0, 1) rounded for the
    float dtypes, codes 0..0x6f (finite, positive, below the top binade) for the byte formats."""
    shape, stride, dtype = spec
    extent = 1 + sum((n - 1) * s for n, s in zip(shape, stride)) if all(shape) else 0
    if dtype == torch.uint8:
        base = torch.randint(0, 0x70, (extent,), dtype=torch.uint8, device=device)
    else:
        base = torch.randn(extent, device=device).to(dtype)
    return base.as_strided(shape, stride)


def engine_seconds(products, device):
    """The sum over `products` (EngineProduct) of tcemu.matmul's synchronized wall time on random
    operands of the same shapes, strides, dtypes and device."""
    total = 0.0
    for p in products:
        a, b = random_operand(p.a, p.device), random_operand(p.b, p.device)
        c = None if p.c is None else random_operand(p.c, p.device)
        synchronize(device)
        start = time.perf_counter()
        tcemu.matmul(a, b, c, datapath=p.datapath, alpha=p.alpha, beta=p.beta, **p.extra)
        synchronize(device)
        total += time.perf_counter() - start
    return total


def measure(name, model, inputs, targets, policy, args, dp_name):
    median = statistics.median
    device = args.device
    step(model, inputs, targets)  # warm-up: kernels, allocator, cuDNN choices
    step(model, inputs, targets, policy)
    native = median(timed_step(device, model, inputs, targets)[0] for _ in range(args.repeats))
    total = median(
        timed_step(device, model, inputs, targets, policy)[0] for _ in range(args.repeats)
    )
    forward, backward, engine = [], [], []
    for _ in range(args.repeats):
        with tt.recording(timed=True) as r:
            summary = step(model, inputs, targets, policy)
        forward.append(r.forward_seconds)
        backward.append(r.backward_seconds)
        engine.append(engine_seconds(r.products, device))
    routed = median(f + b for f, b in zip(forward, backward))
    return {
        "model": name,
        "device": device,
        "size": args.size,
        "datapath": dp_name,
        "repeats": args.repeats,
        "t_native_s": native,
        "t_total_s": total,
        "t_routed_s": routed,
        "t_routed_forward_s": median(forward),
        "t_routed_backward_s": median(backward),
        "t_engine_s": median(engine),
        "wrapper_ratio": routed / median(engine),
        "total_ratio": total / native,
        "routed": summary.routed(),
        "native": summary.native(),
        "recorded_calls": sum(r.calls.values()),
        "engine_products": len(r.products),
        "engine_gmac": sum(p.macs for p in r.products) / 1e9,
    }


def table(rows):
    head = ["model", "datapath", "t_native_s", "t_total_s", "t_routed_s", "t_engine_s", "wrapper_ratio"]
    head += ["total_ratio", "routed", "native", "engine_products", "engine_gmac"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in rows:
        cells = [f"{r[h]:.4g}" if isinstance(r[h], float) else str(r[h]) for h in head]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--size", choices=sorted(SIZES), default="small")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each kind (median)")
    parser.add_argument("--out", default="torch-overhead.csv", help="CSV file to write")
    parser.add_argument(
        "--archs",
        default="sm90,sm70",
        help="comma-separated presets, each preset(ARCH, fp16, fp32) (default sm90,sm70: on the "
        "H200 sm90 is its own datapath, computed by our wgmma kernel; sm70 runs on the emulated "
        "engine)",
    )
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: PyTorch sees no CUDA device")
    archs = [a for a in args.archs.split(",") if a]
    try:
        datapaths = [tcemu.preset(arch, "fp16", "fp32") for arch in archs]
    except ValueError as e:
        parser.error(f"--archs: {e}")
    rows = []
    with open(args.out, "w", newline="") as f:  # a row as each model is done
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for name, model, inputs, targets in workloads(args.size, args.device):
            for dp in datapaths:
                start = time.perf_counter()
                rows.append(measure(name, model, inputs, targets, tt.Policy(dp), args,
                                    tt.Route(dp).name))
                w.writerow(rows[-1])
                f.flush()
                print(f"{name} on {rows[-1]['datapath']}: {time.perf_counter() - start:.1f} s",
                      file=sys.stderr, flush=True)
    print(table(rows))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
