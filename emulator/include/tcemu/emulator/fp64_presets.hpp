// The double-precision Tensor Core instructions (DMMA) of each architecture, named by PTX
// instruction and shape, and their datapaths. Where each row comes from (the PTX ISA, MMA-Sim
// 2.1.1) is written next to it in fp64_presets.cpp and in docs/presets.md.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include <tcemu/emulator/fp64_mma.hpp>

namespace tcemu {

struct Fp64Instruction {
  std::string_view arch;  // sm80, sm89, sm90, sm100, sm120
  std::string_view name;  // PTX name with shape: "mma.sync.m8n8k4", "mma.sync.m16n8k16"
  int m, n, k;
};

// Every row of the table, by architecture, then K (m8n8k4 first).
const std::vector<Fp64Instruction>& fp64_instructions();

// The instruction names `arch` accepts for fp64 MMA: "mma.sync" (the largest-K shape) and its
// shapes in the order of the table; empty for an architecture without FP64 MMA (sm70, sm75) or an
// unknown one.
std::vector<std::string_view> fp64_instruction_names(std::string_view arch);

// The table row `instruction` ("mma.sync": the largest-K shape; or a name of the table) names on
// `arch`. Throws std::invalid_argument naming what the hardware lacks: an unknown architecture,
// one without FP64 MMA (before sm_80), a shape the architecture does not have (the message lists
// those it has).
Fp64Instruction fp64_instruction(std::string_view arch, std::string_view instruction = "mma.sync");

// The datapath of `arch` running `instruction`: MMA-Sim 2.1.1's chain of fused multiply-adds in
// ascending k order from c, K of the shape, NaN operands propagated and invalid operations
// kFp64PresetNan, as measured on the H200 (sm90; the other architectures take sm90's until
// measured). Throws as fp64_instruction.
Fp64Datapath fp64_preset(std::string_view arch, std::string_view instruction = "mma.sync");

// The NaN of an invalid operation (0 x Inf, Inf - Inf) in the presets: the negative quiet NaN
// with a zero payload, measured on the H200 (2026-11-29, 13 of 13 such cases of
// `tcemu probe --instr dmma`).
inline constexpr std::uint64_t kFp64PresetNan = 0xFFF8000000000000ULL;

// Throws std::invalid_argument unless k is a multiple of the named shape's K (the plain mma.sync
// accepts any K as a chain with a shorter last instruction). The message names the instruction,
// its K and the shapes the architecture has.
void check_fp64_shape_k(std::string_view arch, std::string_view instruction, std::size_t k);

}  // namespace tcemu
