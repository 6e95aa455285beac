"""GPU calls: on a machine without a GPU each raises RuntimeError saying so; with one, the GPU
backend gives the emulator's bits and probe() records the device's own."""

import numpy as np
import pytest
from conftest import from_float
from exact import exact_sums, round_to

import tcemu

HAS_GPU = bool(tcemu.devices())
NO_GPU = "no GPU|no CUDA device"


@pytest.mark.skipif(HAS_GPU, reason="a GPU is present")
def test_gpu_calls_say_no_gpu():
    a = np.zeros((16, 16), np.float16)
    dp = tcemu.preset("sm90", "fp16", "fp32")
    calls = [
        lambda: tcemu.probe(random=10),
        lambda: tcemu.probe(instr="mma.sp.m16n8k16", random=10),
        lambda: tcemu.detect_gpu(random=10),
        lambda: tcemu.gpu_mma(a, a, np.zeros(16, np.float32), input="fp16", accumulator="fp32"),
        lambda: tcemu.matmul(a, a, datapath=dp, backend="gpu"),
        lambda: tcemu.ozaki_gemm(a.astype(np.float64), a.astype(np.float64), backend="gpu"),
        lambda: tcemu.markidis_gemm(a.astype(np.float32), a.astype(np.float32), backend="gpu"),
        lambda: tcemu.accurate_gemm(a.astype(np.float64), a.astype(np.float64), backend="gpu"),
    ]
    for call in calls:
        with pytest.raises(RuntimeError, match=NO_GPU):
            call()


def test_blackwell_probe_names_name_the_gpu_they_need():
    # Everywhere but on an sm_100a (sm_120a) GPU: no GPU, or another GPU ("...; this is NVIDIA
    # H200 (compute capability 9.0)"), or a build without the CUDA backend; nothing is launched.
    capability = [10 * major + minor for major, minor in
                  (d["compute_capability"] for d in tcemu.devices()[:1])]
    for instr, needs, cc in [
        ("tcgen05.mxf4nvf4.block16.ue4m3", "needs an sm_100a GPU", 100),
        ("tcgen05", "needs an sm_100a GPU", 100),
        ("mma.sync.m16n8k64.mxf4.block32", "needs an sm_120a GPU", 120),
    ]:
        if capability == [cc]:
            continue
        refusal = instr.replace(".", r"\.") + " " + needs + "|built without the CUDA"
        with pytest.raises(RuntimeError, match=refusal):
            tcemu.probe(input="e2m1", instr=instr, random=10)


@pytest.mark.skipif(not HAS_GPU, reason="no GPU present")
def test_gpu_matmul_and_schemes_give_the_emulator_bits(rng):
    arch = tcemu.devices()[0]["arch_preset"]
    dp = tcemu.preset(arch, "fp16", "fp32")
    a = from_float(rng.standard_normal((70, 100)), "fp16")
    b = from_float(rng.standard_normal((100, 40)), "fp16")
    c = rng.standard_normal((70, 40)).astype(np.float32)
    for options in [{}, {"beta": 1.0}, {"beta": 1.0, "c_input": "initial_accumulator"}]:
        expected = tcemu.matmul(a, b, c, datapath=dp, **options)
        for engine in ["mma_sync", "fastest"]:
            got = tcemu.matmul(a.T.copy().T, b, c, datapath=dp, backend="gpu", engine=engine,
                               **options)
            np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32))
    x = rng.standard_normal((9, 30)) * 2.0 ** rng.integers(-20, 20, (9, 30))
    y = rng.standard_normal((30, 5))
    exact = round_to(exact_sums(x, y), np.float64)
    np.testing.assert_array_equal(tcemu.ozaki_gemm(x, y, mode="cr", backend="gpu"), exact)
    np.testing.assert_array_equal(tcemu.accurate_gemm(x, y, backend="gpu"), exact)
    x32, y32 = x.astype(np.float32), y.astype(np.float32)
    np.testing.assert_array_equal(
        tcemu.markidis_gemm(x32 * 2.0**-20, y32, backend="gpu", arch=arch),
        tcemu.markidis_gemm(x32 * 2.0**-20, y32, arch=arch),
    )


@pytest.mark.skipif(not HAS_GPU, reason="no GPU present")
def test_probe_matches_the_preset_of_the_device():
    cases = tcemu.probe("fp16", "fp32", random=2000, seed=3)
    dp = tcemu.preset(cases["arch"], "fp16", "fp32")
    d = tcemu.mma(dp, cases["a"], cases["b"], cases["c"]).view(np.uint32)
    assert np.count_nonzero(d != cases["d"]) == 0
    again = tcemu.gpu_mma(cases["a"], cases["b"], cases["c"], input="fp16", accumulator="fp32")
    np.testing.assert_array_equal(again, cases["d"])
    fits = tcemu.detect_gpu("fp16", "fp32", random=2000)
    assert len(fits) == 1 and fits[0].mismatches == 0


@pytest.mark.skipif(not HAS_GPU, reason="no GPU present")
def test_probe_and_detect_take_every_dense_shape():
    arch = tcemu.devices()[0]["arch_preset"]
    shapes = [("mma.sync.m16n8k8", "fp16", 8), ("wmma.m16n16k16", "bf16", 16)]
    if arch == "sm90":
        shapes += [("wgmma.m64n64k16", "fp16", 16), ("wgmma.m64n256k32", "e4m3", 32)]
    for instr, fmt, k in shapes:
        cases = tcemu.probe(fmt, "fp32", instr=instr, random=500, seed=5)
        assert cases["a"].shape[1] == k, instr
        dp = tcemu.preset(arch, fmt, "fp32", instr)
        d = tcemu.mma(dp, cases["a"], cases["b"], cases["c"]).view(np.uint32)
        assert np.count_nonzero(d != cases["d"]) == 0, instr
        again = tcemu.gpu_mma(
            cases["a"], cases["b"], cases["c"], input=fmt, accumulator="fp32", instr=instr
        )
        np.testing.assert_array_equal(again, cases["d"])
        fits = tcemu.detect_gpu(fmt, "fp32", random=500, instr=instr)
        assert len(fits) == 1 and fits[0].mismatches == 0, instr
    with pytest.raises(ValueError, match="has no probe runner for 'mma.m99'"):
        tcemu.probe("fp16", "fp32", instr="mma.m99", random=10)


@pytest.mark.skipif(not HAS_GPU, reason="no GPU present: the sparse probe runs mma.sp on one")
def test_probe_and_detect_take_the_sparse_shapes():
    # The sparse shapes of `tcemu probe` and `tcemu detect` (2:4 sparse A; tf32 1:2): K/2 kept
    # values of A with their positions, all K of B; the datapath fitted over the kept products.
    shapes = [("mma.sp.m16n8k16", "fp16", 16), ("mma.sp.m16n8k32", "bf16", 32),
              ("mma.sp.m16n8k8", "tf32", 8)]
    for instr, fmt, k in shapes:
        cases = tcemu.probe(fmt, "fp32", instr=instr, random=300, seed=7)
        n = cases["c"].shape[0]
        assert n > 300, instr
        assert cases["a"].shape == (n, k // 2), instr
        assert cases["index"].shape == (n, k // 2) and cases["index"].max() <= 3, instr
        assert cases["b"].shape == (n, k), instr
        assert cases["d"].shape == (n,), instr
        fits = tcemu.detect_gpu(fmt, "fp32", random=300, instr=instr)
        assert len(fits) == 1 and fits[0].mismatches == 0, (instr, fits)
        assert fits[0].datapath.instruction_k == k // 2, instr
    with pytest.raises(ValueError, match="one dense instruction shape"):
        a = np.zeros((4, 8), np.uint16)
        tcemu.gpu_mma(a, a, np.zeros(4, np.uint32), input="fp16", accumulator="fp32",
                      instr="mma.sp.m16n8k16")


@pytest.mark.skipif(not HAS_GPU, reason="no GPU present")
def test_cuda_tensors_stay_on_the_device(rng):
    torch = pytest.importorskip("torch")
    arch = tcemu.devices()[0]["arch_preset"]
    for fmt, dtype in [("fp16", torch.float16), ("bf16", torch.bfloat16)]:
        dp = tcemu.preset(arch, fmt, "fp32")
        a = from_float(rng.standard_normal((48, 80)), fmt)
        b = from_float(rng.standard_normal((80, 24)), fmt)
        expected = tcemu.matmul(a, b, datapath=dp)
        ta = torch.from_numpy(a.view(np.int16).copy()).view(dtype).cuda()
        tb = torch.from_numpy(b.view(np.int16).T.copy()).view(dtype).cuda().t()  # column-major
        d = tcemu.matmul(ta, tb, datapath=dp)
        assert d.__dlpack_device__()[0] == 2  # kDLCUDA
        got = torch.from_dlpack(d).cpu().numpy()
        np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32))
    x = rng.standard_normal((9, 30)) * 2.0 ** rng.integers(-20, 20, (9, 30))
    y = rng.standard_normal((30, 5))
    exact = round_to(exact_sums(x, y), np.float64)
    tx, ty = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
    for result in [tcemu.ozaki_gemm(tx, ty, mode="cr"), tcemu.accurate_gemm(tx, ty)]:
        np.testing.assert_array_equal(torch.from_dlpack(result).cpu().numpy(), exact)
    x32, y32 = (x * 2.0**-20).astype(np.float32), y.astype(np.float32)
    on_host = tcemu.markidis_gemm(x32, y32, arch=arch)
    on_gpu = tcemu.markidis_gemm(torch.from_numpy(x32).cuda(), torch.from_numpy(y32).cuda(),
                                 arch=arch)
    np.testing.assert_array_equal(torch.from_dlpack(on_gpu).cpu().numpy(), on_host)
    with pytest.raises(ValueError, match="mix of host and CUDA"):
        tcemu.matmul(ta, b, datapath=tcemu.preset(arch, "bf16", "fp32"))


@pytest.mark.skipif(not HAS_GPU, reason="no GPU present")
def test_complex_cuda_tensors_give_the_emulators_bits(rng):
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((9, 30)) * 2.0 ** rng.integers(-20, 20, (9, 30)) \
        + 1j * rng.standard_normal((9, 30))
    y = rng.standard_normal((30, 5)) + 1j * rng.standard_normal((30, 5)) * 2.0 ** 10
    c = rng.standard_normal((9, 5)) + 1j * rng.standard_normal((9, 5))
    for dtype, kwargs in [(np.complex128, {"mode": "cr", "crt": True}),
                          (np.complex128, {"alpha": 0.5 - 2j, "beta": 1j, "int8": True}),
                          (np.complex64, {"alpha": 1.5, "beta": -0.25})]:
        a, b, c0 = x.astype(dtype), y.astype(dtype), c.astype(dtype)
        on_host = tcemu.ozaki_gemm(a, b, c0 if "beta" in kwargs else None, **kwargs)
        tc = torch.from_numpy(c0).cuda() if "beta" in kwargs else None
        d = tcemu.ozaki_gemm(torch.from_numpy(a).cuda(), torch.from_numpy(b.T.copy()).cuda().t(),
                             tc, **kwargs)
        assert d.__dlpack_device__()[0] == 2  # kDLCUDA
        got = torch.from_dlpack(d).cpu().numpy()
        assert got.dtype == dtype
        bits = np.uint64 if dtype == np.complex128 else np.uint32
        np.testing.assert_array_equal(np.ascontiguousarray(got).view(bits),
                                      np.ascontiguousarray(on_host).view(bits))


@pytest.mark.skipif(not HAS_GPU, reason="no GPU present")
def test_any_datapath_runs_on_cuda_tensors_with_the_emulator_bits(rng):
    torch = pytest.importorskip("torch")
    v100 = tcemu.preset("sm70", "fp16", "fp32")
    exact = tcemu.preset("sm80", "bf16", "fp32")
    exact.alignment_fraction_bits = None
    after = tcemu.preset("sm90", "fp16", "fp32")
    after.c_entry = "after-blocks"
    for dp, fmt, dtype in [(v100, "fp16", torch.float16), (exact, "bf16", torch.bfloat16),
                           (after, "fp16", torch.float16)]:
        a = from_float(rng.standard_normal((37, 70)) * 2.0 ** rng.integers(-8, 8, (37, 70)), fmt)
        b = from_float(rng.standard_normal((70, 29)), fmt)
        c = rng.standard_normal((37, 29)).astype(np.float32)
        expected = tcemu.matmul(a, b, c, datapath=dp, beta=0.5)
        ta = torch.from_numpy(a.view(np.int16).copy()).view(dtype).cuda()
        tb = torch.from_numpy(b.view(np.int16).copy()).view(dtype).cuda()
        for engine in ["fastest", "emulated"]:
            d = tcemu.matmul(ta, tb, torch.from_numpy(c).cuda(), datapath=dp, beta=0.5,
                             engine=engine)
            got = torch.from_dlpack(d).cpu().numpy()
            np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32))


@pytest.mark.skipif(not HAS_GPU, reason="no GPU present")
def test_a_batch_of_cuda_tensors_gives_the_emulator_bits_in_place(rng):
    torch = pytest.importorskip("torch")
    arch = tcemu.devices()[0]["arch_preset"]
    hardware = tcemu.preset(arch, "fp16", "fp32")
    v100 = tcemu.preset("sm70", "fp16", "fp32")
    a = from_float(rng.standard_normal((5, 64, 96)), "fp16")
    b = from_float(rng.standard_normal((5, 48, 96)), "fp16").transpose(0, 2, 1)
    c = rng.standard_normal((5, 64, 48)).astype(np.float32)
    ta = torch.from_numpy(a.view(np.int16).copy()).view(torch.float16).cuda()
    tb = torch.from_numpy(b.view(np.int16).copy()).view(torch.float16).cuda()  # column-major
    tc = torch.from_numpy(c).cuda()
    torch.cuda.set_device(0)
    for dp in [hardware, v100]:
        expected = tcemu.matmul(a, b, c, datapath=dp, beta=0.5)
        for engine in ["fastest", "emulated"]:
            d = tcemu.matmul(ta, tb, tc, datapath=dp, beta=0.5, engine=engine)
            got = torch.from_dlpack(d)
            assert got.shape == (5, 64, 48) and got.is_contiguous() and got.is_cuda
            np.testing.assert_array_equal(got.cpu().numpy().view(np.uint32),
                                          expected.view(np.uint32))
    # Host arrays on backend "gpu" come back as NumPy with the same bits.
    np.testing.assert_array_equal(tcemu.matmul(a, b, datapath=v100, backend="gpu"),
                                  tcemu.matmul(a, b, datapath=v100))
    assert torch.cuda.current_device() == 0
