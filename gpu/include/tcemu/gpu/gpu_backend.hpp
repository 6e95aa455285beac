// The GPU backend: the Backend interface (tcemu/emulator/backend.hpp) on device memory. Buffers
// are device allocations, every step is a kernel or a cuBLAS call on them, and nothing returns to
// the host between steps. Plain C++ header: callers never include a CUDA header.
#pragma once

#include <memory>

#include <tcemu/emulator/backend.hpp>

namespace tcemu::gpu {

// Who computes the low-precision GEMM (Backend::mma_gemm).
enum class GemmEngine {
  // Our tiled mma.sync kernel (m16n8k16 fp16/bf16, m16n8k8 tf32, m16n8k32 e4m3/e5m2 from sm_89).
  // Its k order is fixed (docs/gpu.md), so it gives the bits of the emulated GEMM with the
  // device's mma.sync preset, take-out included. Any other datapath is refused.
  mma_sync,
  // Our wgmma kernel (sm_90a only; fp16, bf16 or tf32 inputs, fp32 accumulator, take-out
  // included): the same fixed k order through wgmma.m64nNk16 (k8 for tf32), so the bits of the
  // emulated GEMM with the device's wgmma preset (on the H200 that preset equals mma.sync's for
  // these formats). The fastest engine for these formats (docs/performance.md).
  wgmma,
  // cublasGemmEx: fp16 or bf16 inputs with an fp32 accumulator, and tf32 inputs (fp32 containers
  // holding tf32 values) through CUBLAS_COMPUTE_32F_FAST_TF32; epilogue mode only, no take-out.
  // cuBLAS chooses its own kernels, k order and split-k, so its bits are not specified: use it
  // where the algorithm makes the order irrelevant (exact products, as in the Ozaki scheme).
  cublas,
};

struct GpuBackendOptions {
  int device = 0;
  GemmEngine engine = GemmEngine::mma_sync;
};

// Throws std::runtime_error when there is no such device, when it is older than sm_80 (the
// kernels need cp.async and ldmatrix), or when the CUDA or cuBLAS context cannot be created.
std::unique_ptr<Backend> make_gpu_backend(const GpuBackendOptions& options = {});

}  // namespace tcemu::gpu
