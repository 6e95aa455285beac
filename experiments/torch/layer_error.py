"""Layer by layer (issue 36, section 2): a randomly initialised ResNet-18 and a ViT (torchvision's
architectures, no downloaded weights) run forward on each datapath of study.py; the
relative error ||y - y64||_F / ||y64||_F of every layer's output (0 where both are 0) (every module without children,
and each attention module) against the same model in float64. Writes DIR/layer_error.csv
(model, datapath, index, layer, type, rel_error) and DIR/layer_error.png.

--size small (the default, for the CPU): 32x32 images, batch 2, a 2-layer ViT of width 48.
--size full (for --device cuda): 224x224 images, batch 8, ViT-tiny (12 layers, 3 heads, width
192). The ViT's head, which torchvision initialises to zero, is drawn from N(0, 0.02^2). The
float64 reference runs on the same device. Needs torch, torchvision, matplotlib.
"""

import copy
import csv
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from study import parse_study_arguments, study_datapaths, study_parser  # noqa: E402

import tcemu.torch as tt  # noqa: E402

SIZES = {
    "small": dict(
        image=32,
        batch=2,
        vit=dict(patch_size=8, num_layers=2, num_heads=3, hidden_dim=48, mlp_dim=96),
    ),
    "full": dict(
        image=224,
        batch=8,
        vit=dict(patch_size=16, num_layers=12, num_heads=3, hidden_dim=192, mlp_dim=768),
    ),
}


def models(size):
    import torchvision

    s = SIZES[size]
    torch.manual_seed(0)
    resnet = torchvision.models.resnet18(num_classes=10)
    torch.manual_seed(0)
    vit = torchvision.models.VisionTransformer(image_size=s["image"], num_classes=10, **s["vit"])
    nn.init.normal_(vit.heads.head.weight, std=0.02)  # torchvision zeroes the head: an output of 0
    return {"resnet18": resnet, "vit": vit}


def observed(model):
    """[(name, module)]: the modules whose outputs are recorded, in registration order."""
    return [
        (n, m)
        for n, m in model.named_modules()
        if n and (not list(m.children()) or isinstance(m, nn.MultiheadAttention))
    ]


def outputs(model, x, policy=None):
    """{layer name: its output} of one forward (the last call of a module used twice)."""
    got = {}
    hooks = []
    for name, module in observed(model):

        def hook(mod, args, out, name=name):  # a copy: ReLU(inplace=True) overwrites outputs
            got[name] = (out[0] if isinstance(out, tuple) else out).detach().to(torch.float64, copy=True)

        hooks.append(module.register_forward_hook(hook))
    try:
        with torch.no_grad():
            if policy is None:
                model(x)
            else:
                with tt.emulate(policy, model) as mode:
                    model(x)
                assert mode.summary.native() == 0, str(mode.summary)
    finally:
        for h in hooks:
            h.remove()
    return got


def plot(path, rows):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = sorted({r[0] for r in rows})
    fig, axes = plt.subplots(1, len(names), figsize=(7 * len(names), 4.5))
    for ax, model in zip(np.atleast_1d(axes), names):
        for dp in dict.fromkeys(r[1] for r in rows if r[0] == model):
            sel = [r for r in rows if r[0] == model and r[1] == dp]
            ax.plot([r[2] for r in sel], [max(r[5], 1e-17) for r in sel], label=dp, lw=1)
        ax.set(
            title=model,
            xlabel="layer (registration order)",
            ylabel="relative error against float64",
            yscale="log",
        )
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    parser = study_parser(__doc__)
    parser.add_argument(
        "--size", choices=sorted(SIZES), default="small", help="small (default) or full"
    )
    args = parse_study_arguments(parser)
    s = SIZES[args.size]
    x = torch.randn(
        s["batch"], 3, s["image"], s["image"], generator=torch.Generator().manual_seed(1)
    )
    rows = []
    for model_name, model in models(args.size).items():
        model = model.eval().to(args.device)
        reference = outputs(copy.deepcopy(model).double(), x.double().to(args.device))
        layers = observed(model)
        types = dict(layers)
        for dp_name, datapath in study_datapaths():
            start = time.time()
            got = outputs(model, x.to(args.device), datapath)
            for index, (name, _) in enumerate(layers):
                if name not in reference:
                    continue  # a module this forward does not call
                ref = reference[name]
                diff, norm = (float(torch.linalg.vector_norm(t)) for t in (got[name] - ref, ref))
                err = diff / norm if norm else (0.0 if diff == 0 else float("inf"))
                rows.append((model_name, dp_name, index, name, type(types[name]).__name__, err))
            last = rows[-1]
            print(
                f"{model_name} {dp_name}: output relative error {last[5]:.3e}, {time.time() - start:.1f} s",
                flush=True,
            )
    path = os.path.join(args.out_dir, "layer_error.csv")
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["model", "datapath", "index", "layer", "type", "rel_error"])
        out.writerows(rows)
    plot(os.path.join(args.out_dir, "layer_error.png"), rows)
    print(f"wrote {path} and layer_error.png")


if __name__ == "__main__":
    main()
