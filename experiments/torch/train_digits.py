"""Training under datapaths (issue 36, section 2): a small network on scikit-learn's digits
(1797 8x8 images, 10 classes; the data set ships with the package), trained with every matrix
product of the forward and backward pass on each datapath of study.py, several seeds.
Writes DIR/train_digits.csv (datapath, seed, epoch, train_loss, test_accuracy) and
DIR/train_digits.png (mean and spread over the seeds).

Needs torch, scikit-learn and matplotlib. --device cuda runs the products on the GPU engine.
"""

import csv
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from study import parse_study_arguments, study_datapaths, study_parser  # noqa: E402

import tcemu.torch as tt  # noqa: E402


def data(device):
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    x = torch.tensor(x / 16.0, dtype=torch.float32).view(-1, 1, 8, 8)
    y = torch.tensor(y, dtype=torch.int64)
    split = torch.randperm(len(y), generator=torch.Generator().manual_seed(0))
    train, test = split[:1400], split[1400:]
    return x[train].to(device), y[train].to(device), x[test].to(device), y[test].to(device)


def network(width):
    return nn.Sequential(
        nn.Conv2d(1, width, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),  # 4x4
        nn.Flatten(),
        nn.Linear(width * 16, 4 * width),
        nn.ReLU(),
        nn.Linear(4 * width, 10),
    )


def train(datapath, seed, args, tensors):
    xtr, ytr, xte, yte = tensors
    torch.manual_seed(seed)
    model = network(args.width).to(args.device)
    run = model if datapath is None else tt.emulate_module(model, datapath)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    order = torch.Generator().manual_seed(seed)
    rows = []
    for epoch in range(1, args.epochs + 1):
        perm = torch.randperm(len(ytr), generator=order).to(args.device)
        total = 0.0
        for i in range(0, len(ytr), args.batch):
            idx = perm[i : i + args.batch]
            loss = F.cross_entropy(run(xtr[idx]), ytr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        with torch.no_grad():
            accuracy = float((run(xte).argmax(1) == yte).float().mean())
        rows.append((epoch, total / len(ytr), accuracy))
    if datapath is not None:
        assert run.summary.native() == 0, str(run.summary)  # every product on the datapath
    return rows


def plot(path, results):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(11, 4))
    for name, runs in results.items():
        epochs = np.array([r[0] for r in runs[0]])
        for ax, column in ((ax_loss, 1), (ax_acc, 2)):
            values = np.array([[r[column] for r in run] for run in runs])
            mean = values.mean(0)
            ax.plot(epochs, mean, label=name)
            ax.fill_between(epochs, values.min(0), values.max(0), alpha=0.2)
    ax_loss.set(
        xlabel="epoch", ylabel="training loss (mean; band: min-max over seeds)", yscale="log"
    )
    ax_acc.set(xlabel="epoch", ylabel="test accuracy")
    ax_acc.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    parser = study_parser(__doc__)
    parser.add_argument("--seeds", type=int, default=2, help="seeds per datapath (default 2)")
    parser.add_argument("--epochs", type=int, default=5, help="epochs (default 5)")
    parser.add_argument("--width", type=int, default=16, help="convolution channels (default 16)")
    parser.add_argument("--batch", type=int, default=64, help="batch size (default 64)")
    parser.add_argument("--lr", type=float, default=0.05, help="SGD learning rate (default 0.05)")
    args = parse_study_arguments(parser)
    tensors = data(args.device)
    results = {}
    path = os.path.join(args.out_dir, "train_digits.csv")
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["datapath", "seed", "epoch", "train_loss", "test_accuracy"])
        for name, datapath in study_datapaths():
            start = time.time()
            results[name] = []
            for seed in range(args.seeds):
                rows = train(datapath, seed, args, tensors)
                results[name].append(rows)
                out.writerows([name, seed, *r] for r in rows)
            final = [run[-1][2] for run in results[name]]
            print(
                f"{name}: test accuracy {np.mean(final):.4f} (min {min(final):.4f}, max {max(final):.4f}), "
                f"{time.time() - start:.1f} s",
                flush=True,
            )
    plot(os.path.join(args.out_dir, "train_digits.png"), results)
    print(f"wrote {path} and train_digits.png")


if __name__ == "__main__":
    main()
