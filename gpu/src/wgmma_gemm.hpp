// The wgmma GEMM (wgmma_gemm.cu): sm_90a, fp16 or bf16 inputs, fp32 accumulator, operands as
// KRows, C as the initial accumulator or through the epilogue; no take-out (the tiled mma.sync
// kernel has it).
#pragma once

#include <cuda_runtime.h>

#include "tiled_mma_gemm.hpp"

namespace tcemu::gpu::detail {

// instruction is f16_f32 or bf16_f32; the caller has checked the device (compute capability 9.0)
// and the arguments (takeout_instructions == 0).
void launch_wgmma_gemm(Instruction instruction, const TiledGemmArguments& args,
                       cudaStream_t stream);

}  // namespace tcemu::gpu::detail
