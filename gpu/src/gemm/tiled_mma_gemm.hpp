// Our fast mma.sync GEMM: D = A B (+ C) as chains of warp-level mma.sync instructions, the
// hardware counterpart of tcemu::emulated_gemm with the GPU's mma.sync preset, bit for bit.
//
// Instruction shape (gpu::kernel_instruction, presets.hpp names): mma.sync.m16n8k16 for fp16 and
// bf16 (SASS HMMA.16816.F32 / .F16 / .F32.BF16), mma.sync.m16n8k8 for tf32 (HMMA.1688.F32.TF32),
// mma.sync.m16n8k32 for e4m3/e5m2 (on sm_90 two HMMA.16816 each): the largest-K shapes, which
// the plain "mma.sync" preset also names.
//
// The k order is fixed and documented, because the bits depend on it: every output element is the
// chain of instructions over k = 0, K, 2K, ... in increasing order (K = 16 for fp16/bf16, 8 for
// tf32, 32 for fp8), each instruction taking the previous result as its C, exactly as
// emulated_gemm orders it. No split-k, no reordering across thread blocks: one warp computes all
// of k for its outputs. With `takeout_instructions` = t > 0, the chain restarts from +0 after every
// t instructions and its result is added to an fp32 register with one add.rn.f32
// (GemmOptions::takeout_every_k = t K).
//
// Operands are "k-contiguous rows": A's rows and B's columns, each a run of k elements in memory
// (A row major, B column major, as cuBLAS's TN case). The launcher's caller (the GPU backend)
// packs other layouts into this form.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gemm/mma_fragments.cuh"

namespace tcemu::gpu::detail {

// Bytes of k that one thread block stages at a time: every operand row is read in 128-byte
// pieces, so a row's storage must be readable up to k rounded up to 128 bytes.
inline constexpr int kTileBytes = 128;

struct KRows {
  // Row r starts at data + r * ld_bytes; 16-byte aligned, ld_bytes a multiple of 16. Elements
  // from k up to the end of k's last instruction must be zero (the zero padding of a partial
  // instruction); bytes after that up to the next multiple of kTileBytes must be readable.
  const void* data;
  std::int64_t ld_bytes;
};

// A matrix of accumulator elements (fp32 or fp16) anywhere in device memory.
struct AccumulatorMatrix {
  void* data;
  std::int64_t ld;
  bool row_major;
};

struct TiledGemmArguments {
  int m, n, k;
  KRows a;  // m rows
  KRows b;  // n rows (the columns of B)
  // C, or data == nullptr when it is not read. With c_is_initial_accumulator, C is the first
  // instruction's C (alpha = 1, beta = 1); otherwise D = fma(alpha, acc, beta * C) in fp32 RN,
  // or alpha * acc when C is not read, then rounded to nearest into the accumulator format.
  AccumulatorMatrix c;
  AccumulatorMatrix d;
  bool c_is_initial_accumulator;
  float alpha, beta;
  int takeout_instructions;  // 0: the whole of k in the tensor core
};

// Runs the GEMM on `stream`. The caller has checked the arguments and that the device has the
// instruction; throws std::runtime_error on a CUDA failure.
void launch_tiled_mma_gemm(Instruction instruction, const TiledGemmArguments& arguments,
                           cudaStream_t stream);

}  // namespace tcemu::gpu::detail
