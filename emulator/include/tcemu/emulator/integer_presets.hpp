// The integer Tensor Core instructions (IMMA) of each architecture, named by PTX instruction and
// shape, and their datapaths. Where each row comes from (the PTX ISA, or our measurement on the
// H100) is written next to it in integer_presets.cpp and in docs/presets.md.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <tcemu/emulator/integer_mma.hpp>

namespace tcemu {

struct IntegerInstruction {
  std::string_view arch;  // sm75, sm80, sm89, sm90, sm100
  // PTX name with shape: "mma.sync.m16n8k32", "wgmma.m64nNk32" (N = 8..256),
  // "tcgen05.mma.kind::i8" (M = 64/128, N = 8..256, K = 32).
  std::string_view name;
  int m, n, k;            // n = 0: every N the instruction allows (wgmma, tcgen05)
  int operand_bits;       // 8: s8/u8 operands; 4: s4/u4
  bool satfinite;         // PTX offers .satfinite
  std::string_view sass;  // the SASS instruction seen on the H100 (sm_90a), empty elsewhere
};

// Every row of the table, by architecture, then operand width, then K.
const std::vector<IntegerInstruction>& integer_instructions();

// The rows of `arch` for operands of `operand_bits` bits.
std::vector<IntegerInstruction> integer_instructions(std::string_view arch, int operand_bits);

// The datapath of `arch` running `instruction` ("mma.sync": the largest-K mma.sync shape of the
// operand width; or a name of the table) on a x b operands, with .satfinite or without.
// Throws std::invalid_argument naming what the hardware lacks (an architecture without integer
// MMA, a shape the architecture does not have: the message lists those it has; .satfinite on an
// instruction without it; operands of different widths or not s8/u8/s4/u4).
IntegerDatapath integer_preset(std::string_view arch, const IntegerFormat& a,
                               const IntegerFormat& b, std::string_view instruction = "mma.sync",
                               bool satfinite = false);

// The table row integer_preset resolves (arch, instruction) to, for the same arguments.
IntegerInstruction integer_instruction(std::string_view arch, int operand_bits,
                                       std::string_view instruction);

// Throws std::invalid_argument unless k is a multiple of the K of a named shape (every name but
// the plain mma.sync and tcgen05.mma.kind::i8, which accept any K as a chain with a shorter last
// instruction). The message names the instruction, its K and the shapes the architecture has.
void check_integer_shape_k(std::string_view arch, int operand_bits, std::string_view instruction,
                           std::size_t k);

// One line describing the datapath ("s8 x u8 -> s32, K = 32 per instruction, wrap").
std::string describe(const IntegerDatapath& datapath);

}  // namespace tcemu
