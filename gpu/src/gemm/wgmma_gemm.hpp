// The wgmma GEMM (wgmma_gemm.cu): sm_90a, fp16, bf16 or tf32 inputs, fp32 accumulator, operands
// as KRows, C as the initial accumulator or through the epilogue, take-out every t instructions.
#pragma once

#include <cuda_runtime.h>

#include "gemm/tiled_mma_gemm.hpp"

namespace tcemu::gpu::detail {

// Whether the kernel computes `instruction` (f16_f32, bf16_f32 or tf32_f32).
bool wgmma_computes(Instruction instruction);

// instruction is one wgmma_computes; the caller has checked the device (compute capability 9.0)
// and the arguments.
void launch_wgmma_gemm(Instruction instruction, const TiledGemmArguments& args,
                       cudaStream_t stream);

}  // namespace tcemu::gpu::detail
