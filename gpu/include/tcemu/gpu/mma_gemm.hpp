// D = A B + C on the GPU as a chain of warp-level mma.sync instructions along k, C being the
// initial accumulator: the hardware counterpart of tcemu::emulated_gemm with
// CInput::initial_accumulator. Each warp owns a 16 x 8 tile of D and runs the instructions for
// k = 0, K, 2K, ... in order, the last one padded with zeros. This kernel reads its operands
// straight from global memory: it exists to compare bits with the emulator, not for speed.
#pragma once

#include <tcemu/emulator/matrix.hpp>

namespace tcemu::gpu {

// a: m x k and b: k x n of `input` (fp16, bf16, tf32, e4m3, e5m2), c and d: m x n of
// `accumulator` (fp32, or fp16 for fp16/fp8 inputs), any layout and leading dimension (host
// memory). Throws std::invalid_argument for mismatched shapes or formats and
// std::runtime_error for CUDA failures or a device without the instruction.
void mma_sync_gemm(ConstMatrixView a, ConstMatrixView b, ConstMatrixView c, MatrixView d);

}  // namespace tcemu::gpu
