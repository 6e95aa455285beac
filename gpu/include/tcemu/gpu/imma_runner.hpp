// Runs integer MMA cases through one warp-level mma.sync instruction of the present GPU (IMMA),
// one case per instruction: a is row 0 of A, b column 0 of B, c element (0, 0) of C, everything
// else zero, and the result is D(0, 0). `tcemu probe --instr imma` captures the GPU's bits with it.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <tcemu/cases/integer_case_file.hpp>
#include <tcemu/emulator/integer_mma.hpp>

namespace tcemu::gpu {

// The integer mma.sync shapes ("mma.sync.m16n8k32", ...) for operands of `operand_bits` (8 or 4)
// on a GPU of this compute capability (x10): m8n8k16 / m8n8k32 from sm_75, the m16n8 shapes from
// sm_80 (the PTX ISA's targets).
std::vector<std::string_view> imma_sync_shapes(int compute_capability, int operand_bits);

// D(0, 0) of one `shape` instruction per case with .s32 a_format b_format operands, with
// .satfinite or without. Throws std::invalid_argument for a shape this runner does not issue, a
// format pair of different widths, or a case whose K differs from the shape's or whose values
// lie outside their formats; std::runtime_error without a device, on a device that lacks the
// shape, or when a CUDA call fails.
std::vector<std::int32_t> run_imma_sync(std::string_view shape, const IntegerFormat& a_format,
                                        const IntegerFormat& b_format, bool satfinite,
                                        std::span<const IntegerMmaCase> cases);

// The same through one warpgroup-level wgmma.mma_async.m64n8k32 (.s32 with s8/u8 operands, A
// and B K-major in shared memory), which only sm_90a devices have: K = 32 per case. Throws as
// run_imma_sync does, and std::runtime_error on any device other than compute capability 9.0.
std::vector<std::int32_t> run_imma_wgmma(const IntegerFormat& a_format,
                                         const IntegerFormat& b_format, bool satfinite,
                                         std::span<const IntegerMmaCase> cases);

}  // namespace tcemu::gpu
