"""tcemu.torch under DistributedDataParallel: a two-process gloo job on the CPU
(torch.multiprocessing spawn), each rank routing its own products through tcemu; the
all-reduced gradients agree across ranks and equal the mean of the ranks' own emulated ones."""

import os
import socket

import pytest

torch = pytest.importorskip(
    "torch", reason="tcemu.torch needs PyTorch (bash scripts/setup.sh installs it)"
)
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

if not dist.is_available() or not dist.is_gloo_available():
    pytest.skip("this PyTorch has no gloo backend", allow_module_level=True)

WORLD = 2


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def model_and_data(rank):
    import torch.nn as nn

    torch.manual_seed(0)  # the same initial model on every rank
    model = nn.Sequential(nn.Linear(12, 16), nn.Tanh(), nn.Linear(16, 3))
    gen = torch.Generator().manual_seed(100 + rank)  # each rank its own batch
    return model, torch.randn(8, 12, generator=gen), torch.randint(0, 3, (8,), generator=gen)


def worker(rank, port, out_dir):
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP

    import tcemu
    import tcemu.torch as tt

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    try:
        torch.set_num_threads(1)
        model, x, y = model_and_data(rank)
        ddp = DDP(tt.emulate_module(model, tcemu.preset("sm70", "fp16", "fp32")))
        F.cross_entropy(ddp(x), y).backward()
        grads = [p.grad.clone() for p in model.parameters()]
        torch.save(
            {
                "grads": grads,
                "routed": ddp.module.summary.routed(),
                "native": ddp.module.summary.native(),
            },
            os.path.join(out_dir, f"rank{rank}.pt"),
        )
    finally:
        dist.destroy_process_group()


def test_ddp_two_ranks_route_their_products_and_agree(tmp_path):
    import torch.nn.functional as F

    import tcemu
    import tcemu.torch as tt

    mp.spawn(worker, args=(free_port(), str(tmp_path)), nprocs=WORLD, join=True)
    ranks = [torch.load(tmp_path / f"rank{r}.pt") for r in range(WORLD)]
    for r in ranks:
        assert r["routed"] == 2 and r["native"] == 0  # both Linear layers, on each rank
    for g0, g1 in zip(ranks[0]["grads"], ranks[1]["grads"]):
        assert torch.equal(g0.view(torch.int32), g1.view(torch.int32))
    # the all-reduced gradient is the mean of each rank's own emulated gradient: a / 2 + b / 2,
    # halving exact (no gradient here is near the subnormals) and a two-term sum commutative
    local = []
    for rank in range(WORLD):
        model, x, y = model_and_data(rank)
        F.cross_entropy(
            tt.emulate_module(model, tcemu.preset("sm70", "fp16", "fp32"))(x), y
        ).backward()
        local.append([p.grad for p in model.parameters()])
    for got, a, b in zip(ranks[0]["grads"], *local):
        assert not torch.equal(a, b)
        assert torch.equal(got.view(torch.int32), ((a + b) / 2).view(torch.int32))
