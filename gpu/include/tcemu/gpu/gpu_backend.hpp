// The GPU backend: the Backend interface (tcemu/backend/backend.hpp) on device memory. Buffers
// are device allocations, every step is a kernel or a cuBLAS call on them, and nothing returns to
// the host between steps. Plain C++ header: callers never include a CUDA header.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <tcemu/backend/backend.hpp>
#include <tcemu/emulator/format.hpp>

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
  // these formats). The fastest engine for these formats (docs/performance/gpu-engines.md).
  wgmma,
  // Our kernels, each product on the fastest one that computes its datapath bit for bit: the
  // wgmma kernel where it applies (sm_90a, fp16, bf16 or tf32 -> fp32, take-out included, the
  // datapath equal to the device's wgmma preset), the mma.sync kernel where the datapath is the
  // device's mma.sync preset, the emulated engine below for every other datapath. So the bits are
  // those of the emulated GEMM with the datapath asked for, as with the engines above and below.
  fastest,
  // cuBLAS: cublasGemmEx with fp16 or bf16 inputs and an fp32 accumulator, or tf32 inputs (fp32
  // containers holding tf32 values) through CUBLAS_COMPUTE_32F_FAST_TF32. What cuBLAS has no
  // parameter for is composed around it: C as the initial accumulator enters through beta = 1
  // (alpha = 1), and take-out (takeout_every_k = kb) runs cublasGemmStridedBatchedEx over the
  // chunks of kb values of k into device workspace, then adds the chunk products to the fp32
  // register in k order with one RN add each and applies the epilogue, as GemmOptions defines.
  // cuBLAS chooses its own kernels, k order and split-k inside each call, so the bits are not
  // specified (only the composition's adds are ours): use it where the algorithm makes the order
  // irrelevant (exact products, as in the Ozaki scheme), or to run a scheme without our kernels.
  cublas,
  // Any datapath: tcemu::emulated_gemm computed on the CUDA cores, with the emulator's bits on
  // every element (every preset and every field overridden, both ways of C entering, take-out,
  // any layout). The binary64 formulation of the CPU fast path (binary64_block.hpp) where it is
  // exact and A and B are finite, the exact integer one (block_fma.hpp) otherwise; both are the
  // emulator's own functions compiled for the device (gpu/src/gemm/emulated_gemm.hpp).
  emulated,
};

// The cuBLAS engine's batches (Backend::mma_gemm_batch): products of at most this many
// multiply-adds (m n k) each run as cublasGemmBatchedEx calls, where one cublasGemmEx per
// product would leave the device idle between small GEMMs; larger ones one cublasGemmEx each.
// Measured on the H200 (docs/performance/ozaki-1.md, "Batched products").
inline constexpr std::int64_t kBatchedGemmMaxMultiplyAdds = std::int64_t{1} << 33;

// Whether the cuBLAS engine batches m x n x k products under `limit` (multiply-adds m n k, in
// double since they can pass 2^63; empty products never).
inline bool batches_gemms(std::int64_t m, std::int64_t n, std::int64_t k,
                          std::int64_t limit = kBatchedGemmMaxMultiplyAdds) {
  const double multiply_adds =
      static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  return multiply_adds > 0 && multiply_adds <= static_cast<double>(limit);
}

struct GpuBackendOptions {
  int device = 0;
  GemmEngine engine = GemmEngine::mma_sync;
  // kBatchedGemmMaxMultiplyAdds, or another limit (0: never batched).
  std::int64_t batched_gemm_max_multiply_adds = kBatchedGemmMaxMultiplyAdds;
};

// The instruction shape our kernel of `engine` (mma_sync or wgmma) issues for the formats, as the
// presets name it (presets.hpp): the mma.sync kernel issues mma.sync.m16n8k16 (fp16, bf16; SASS
// HMMA.16816), mma.sync.m16n8k8 (tf32; HMMA.1688.F32.TF32) or mma.sync.m16n8k32 (e4m3, e5m2;
// two HMMA.16816 on sm_90); the wgmma kernel wgmma.m64n256k16 (fp16, bf16; HGMMA.64x256x16) or
// wgmma.m64n256k8 (tf32), and with take-out the same with N = 128 (one datapath for every N).
// preset(arch, input, accumulator, kernel_instruction(...)) is the datapath whose bits the
// kernel gives. Throws std::invalid_argument for another engine or a pair the kernel lacks.
std::string kernel_instruction(GemmEngine engine, const FloatFormat& input,
                               const FloatFormat& accumulator);

// Throws std::runtime_error when there is no such device, when it is older than sm_80 (the
// kernels need cp.async and ldmatrix), or when the CUDA or cuBLAS context cannot be created.
std::unique_ptr<Backend> make_gpu_backend(const GpuBackendOptions& options = {});

// Whether `backend` was made by make_gpu_backend (its buffers are device memory).
bool is_gpu_backend(const Backend& backend);

}  // namespace tcemu::gpu
