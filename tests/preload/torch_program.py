"""PyTorch's float64 and complex128 products on a CUDA device under libtcemu_cublas_preload.so (docs/preload.md),
run by CTest.

usage: python3 torch_program.py

With TCEMU_PRELOAD_SCHEME=dgemm-crt and TCEMU_PRELOAD_MODE=cr set by CTest, `a @ b` of 2-D
tensors and `torch.bmm` / `a @ b` of 3-D ones (which PyTorch computes with cublasDgemm and the
strided batched form) must be routed (the log names each entry point, the batch with its count)
and hold, in every element, the exact product rounded once to nearest (Python's Fractions); the
same for complex128 `a @ b` and `torch.bmm` (cublasZgemm and its strided batched form), each real
and imaginary part the exact part rounded once. The
inputs spread over many binades, so that cuBLAS's own sum differs from that in most elements: a
call that fell through fails. Exit 0 when every check holds, 1 otherwise, 77 (skipped) where
PyTorch is missing or sees no CUDA device.
"""

import os
import sys
from fractions import Fraction

try:
    import torch
except ImportError:
    print("SKIPPED: no PyTorch; the LD_PRELOAD library was not exercised")
    sys.exit(77)
if not torch.cuda.is_available():
    print("SKIPPED: PyTorch sees no CUDA device; the LD_PRELOAD library was not exercised")
    sys.exit(77)

log_path = os.environ["TCEMU_PRELOAD_LOG"]
failures = 0


def fail(what):
    global failures
    failures += 1
    print(f"FAIL: {what}")


def correctly_rounded(a, b):
    """a @ b (2-D, float64 host tensors) with each element the exact sum rounded once."""
    x = [[Fraction(v) for v in row] for row in a.tolist()]
    y = [[Fraction(v) for v in row] for row in b.t().tolist()]
    return torch.tensor([[float(sum(p * q for p, q in zip(r, c))) for c in y] for r in x],
                        dtype=torch.float64)


def correctly_rounded_complex(a, b):
    """a @ b (2-D, complex128 host tensors) with each part the exact sum rounded once."""
    x = [[(Fraction(v.real), Fraction(v.imag)) for v in row] for row in a.tolist()]
    y = [[(Fraction(v.real), Fraction(v.imag)) for v in row] for row in b.t().tolist()]
    return torch.tensor(
        [[complex(float(sum(p[0] * q[0] - p[1] * q[1] for p, q in zip(r, c))),
                  float(sum(p[0] * q[1] + p[1] * q[0] for p, q in zip(r, c)))) for c in y]
         for r in x], dtype=torch.complex128)


gen = torch.Generator().manual_seed(37)


def spread(*shape):
    return (torch.rand(*shape, generator=gen, dtype=torch.float64) - 0.5) * torch.exp(
        2 * torch.randn(*shape, generator=gen, dtype=torch.float64))


open(log_path, "w").close()
a, b = spread(12, 96), spread(96, 10)
batch_a, batch_b = spread(3, 9, 80), spread(3, 80, 7)
d = (a.cuda() @ b.cuda()).cpu()
bmm = torch.bmm(batch_a.cuda(), batch_b.cuda()).cpu()
za, zb = torch.complex(spread(11, 64), spread(11, 64)), torch.complex(spread(64, 9), spread(64, 9))
zbatch_a = torch.complex(spread(2, 8, 50), spread(2, 8, 50))
zbatch_b = torch.complex(spread(2, 50, 6), spread(2, 50, 6))
z = (za.cuda() @ zb.cuda()).cpu()
zbmm = torch.bmm(zbatch_a.cuda(), zbatch_b.cuda()).cpu()
torch.cuda.synchronize()

want = correctly_rounded(a, b)
if not torch.equal(d, want):
    fail(f"a @ b: {int((d != want).sum())} of {d.numel()} elements are not the exact product "
         "rounded to nearest")
for i in range(3):
    want_i = correctly_rounded(batch_a[i], batch_b[i])
    if not torch.equal(bmm[i], want_i):
        fail(f"bmm product {i}: {int((bmm[i] != want_i).sum())} elements differ from the exact "
             "product rounded to nearest")
want = correctly_rounded_complex(za, zb)
if not torch.equal(torch.view_as_real(z), torch.view_as_real(want)):
    fail("complex128 a @ b: parts are not the exact parts rounded to nearest")
for i in range(2):
    want_i = correctly_rounded_complex(zbatch_a[i], zbatch_b[i])
    if not torch.equal(torch.view_as_real(zbmm[i]), torch.view_as_real(want_i)):
        fail(f"complex128 bmm product {i}: parts differ from the exact parts rounded to nearest")
plain = batch_a[0] @ batch_b[0]  # the host's own float64 sum: it must differ somewhere
if torch.equal(plain, correctly_rounded(batch_a[0], batch_b[0])):
    fail("the inputs should make a plain float64 sum differ from the correctly rounded one")

with open(log_path) as f:
    lines = f.read().splitlines()
routed = [line for line in lines if "routed to dgemm-crt mode cr" in line]
if not any("cublasDgemm" in line and "batch" not in line for line in routed):
    fail("no routed line for a @ b in the log:\n" + "\n".join(lines))
if not any("cublasZgemm" in line and "batch" not in line for line in routed):
    fail("no routed line for complex128 a @ b in the log:\n" + "\n".join(lines))
if not any("cublasZgemmStridedBatched batch 2" in line for line in routed):
    fail("no routed line for the complex128 batch of 2 in the log:\n" + "\n".join(lines))
if not any("Batched batch 3" in line for line in routed):
    fail("no routed line for the batch of 3 in the log:\n" + "\n".join(lines))
if any("fell through" in line for line in lines):
    fail("a call fell through:\n" + "\n".join(line for line in lines if "fell through" in line))
print("PASSED" if failures == 0 else "FAILED")
sys.exit(0 if failures == 0 else 1)
