// Runs sparse MMA cases (sparse_case.hpp) through one warp-level mma.sp::ordered_metadata
// instruction of the present GPU, one case per instruction: every row of A holds the case's kept
// a with its metadata, every column of B the case's b, every element of C its c; D(0, 0) is the
// result. This is how `tcemu probe --instr mma.sp.*` captures the GPU's bits.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include <tcemu/cases/sparse_case.hpp>
#include <tcemu/emulator/format.hpp>

namespace tcemu::gpu {

// The mma.sp shapes the runner issues on a GPU of this compute capability (x10): mma.sp.m16n8k8
// (tf32), mma.sp.m16n8k16 and mma.sp.m16n8k32 from sm_80; none below.
std::vector<std::string_view> sparse_probe_instructions(int compute_capability);

// The (input, accumulator) pairs the runner takes for a shape: k16 and k32 fp16 -> fp32,
// fp16 -> fp16, bf16 -> fp32; k8 and k16 tf32 -> fp32 (empty for any other name).
std::vector<std::pair<FloatFormat, FloatFormat>> sparse_pairs(std::string_view instruction);

// D(0, 0) of one instruction per case, in the accumulator format. Every case must have the
// shape's K and valid metadata (check_sparse_case). Throws std::invalid_argument for a shape,
// format pair or case the runner does not take, std::runtime_error without a device (or below
// sm_80) or when a CUDA call fails.
std::vector<std::uint32_t> run_sparse(std::string_view instruction, const FloatFormat& input,
                                      const FloatFormat& accumulator,
                                      std::span<const SparseMmaCase> cases);

}  // namespace tcemu::gpu
