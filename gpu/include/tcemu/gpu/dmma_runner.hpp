// Runs fp64 MMA cases through one warp-level mma.sync .f64 instruction of the present GPU (DMMA),
// one case per instruction: a is row 0 of A, b column 0 of B, c element (0, 0) of C, everything
// else zero, and the result is D(0, 0). `tcemu probe --instr dmma` captures the GPU's bits with it.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <tcemu/cases/fp64_case_file.hpp>

namespace tcemu::gpu {

// The fp64 mma.sync shapes ("mma.sync.m8n8k4", ...) on a GPU of this compute capability (x10):
// m8n8k4 from sm_80, m16n8k4, m16n8k8 and m16n8k16 from sm_90 (the PTX ISA's targets).
std::vector<std::string_view> dmma_sync_shapes(int compute_capability);

// D(0, 0) of one `shape` instruction (mma.sync.aligned.SHAPE.row.col.f64.f64.f64.f64) per case,
// as bit patterns. Throws std::invalid_argument for a shape this runner does not issue or a case
// whose K differs from the shape's; std::runtime_error without a device, on a device below the
// shape's compute capability (naming both), or when a CUDA call fails.
std::vector<std::uint64_t> run_dmma_sync(std::string_view shape,
                                         std::span<const Fp64MmaCase> cases);

}  // namespace tcemu::gpu
