// The IMMA table. Sources:
//  * PTX ISA (NVIDIA, "Parallel Thread Execution ISA", section "Warp Level Matrix Multiply-
//    Accumulate Instructions: mma", integer syntax `mma.sync.aligned.shape.row.col{.satfinite}
//    .s32.atype.btype.s32`): shapes m8n8k16, m16n8k16, m16n8k32 for .s8/.u8 and m8n8k32,
//    m16n8k32, m16n8k64 for .s4/.u4, .atype and .btype chosen independently within a width;
//    m8n8k16 and m8n8k32 need sm_75, the m16n8 shapes sm_80. PTX code for an older target runs
//    on every newer one, so sm89, sm90 and sm100 keep every shape.
//  * PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate: wgmma.mma_async":
//    integer .s8/.u8 operands, shape m64nNk32, optional .satfinite, sm_90a.
//  * PTX ISA, "tcgen05.mma": `.kind::i8` (s8/u8, K = 32, no .satfinite qualifier), sm_100a.
//  * What one instruction computes: c + the exact sum of its K products, wrapped modulo 2^32
//    (no .satfinite) or clamped to int32 once (.satfinite). Measured on the H100 for every
//    mma.sync shape and pair of operand formats, 0 mismatches in 10^6 random and every crafted
//    case each, and the same for wgmma m64n8k32 (docs/presets.md), among them, for every ordered
//    pair of positions (p, q), a sum that leaves int32 after the product at p and comes back after
//    the one at q: no partial sum is clamped, in any k order. The rows of other architectures
//    follow the PTX ISA.
#include <tcemu/emulator/integer_presets.hpp>

#include <sstream>
#include <stdexcept>

namespace tcemu {
namespace {

// The SASS of each mma.sync shape on sm_90a for .s8.s8 (cuobjdump -sass on the H100,
// docs/presets.md; .u8 operands read U8, .satfinite adds .SAT). Hopper has no 4-bit IMMA: an s4/u4
// shape runs as two 8-bit IMMAs of half its K from a zero accumulator, on operands widened to 8
// bits, whose results are added to c by ordinary integer instructions.
constexpr std::string_view kSm90Sass8M8 = "IMMA.8816.S8.S8";
constexpr std::string_view kSm90Sass8K16 = "IMMA.16816.S8.S8";
constexpr std::string_view kSm90Sass8K32 = "IMMA.16832.S8.S8";
constexpr std::string_view kSm90Sass4M8 = "2 x IMMA.8816.S8.S8 + integer adds";
constexpr std::string_view kSm90Sass4K32 = "2 x IMMA.16816.S8.S8 + integer adds";
constexpr std::string_view kSm90Sass4K64 = "2 x IMMA.16832.S8.S8 + integer adds";

std::vector<IntegerInstruction> table() {
  std::vector<IntegerInstruction> rows;
  const auto mma_sync = [&](std::string_view arch, bool sm80_shapes, std::string_view sass8_k16,
                            std::string_view sass8_k32, std::string_view sass4_k32,
                            std::string_view sass4_k64, std::string_view sass8_m8,
                            std::string_view sass4_m8) {
    rows.push_back({arch, "mma.sync.m8n8k16", 8, 8, 16, 8, true, sass8_m8});
    if (sm80_shapes) {
      rows.push_back({arch, "mma.sync.m16n8k16", 16, 8, 16, 8, true, sass8_k16});
      rows.push_back({arch, "mma.sync.m16n8k32", 16, 8, 32, 8, true, sass8_k32});
    }
    rows.push_back({arch, "mma.sync.m8n8k32", 8, 8, 32, 4, true, sass4_m8});
    if (sm80_shapes) {
      rows.push_back({arch, "mma.sync.m16n8k32", 16, 8, 32, 4, true, sass4_k32});
      rows.push_back({arch, "mma.sync.m16n8k64", 16, 8, 64, 4, true, sass4_k64});
    }
  };
  mma_sync("sm75", false, "", "", "", "", "", "");
  mma_sync("sm80", true, "", "", "", "", "", "");
  mma_sync("sm89", true, "", "", "", "", "", "");
  mma_sync("sm90", true, kSm90Sass8K16, kSm90Sass8K32, kSm90Sass4K32, kSm90Sass4K64, kSm90Sass8M8,
           kSm90Sass4M8);
  rows.push_back({"sm90", "wgmma.m64nNk32", 64, 0, 32, 8, true, "IGMMA.64xNx32.S8.S8"});
  mma_sync("sm100", true, "", "", "", "", "", "");
  rows.push_back({"sm100", "tcgen05.mma.kind::i8", 128, 0, 32, 8, false, ""});
  return rows;
}

bool known_arch(std::string_view arch) {
  for (std::string_view a : {"sm70", "sm75", "sm80", "sm89", "sm90", "sm100"}) {
    if (a == arch) return true;
  }
  return false;
}

std::string names_of(const std::vector<IntegerInstruction>& rows) {
  std::string names;
  for (const IntegerInstruction& r : rows)
    names += (names.empty() ? "" : ", ") + std::string(r.name);
  return names;
}

}  // namespace

const std::vector<IntegerInstruction>& integer_instructions() {
  static const std::vector<IntegerInstruction> rows = table();
  return rows;
}

std::vector<IntegerInstruction> integer_instructions(std::string_view arch, int operand_bits) {
  std::vector<IntegerInstruction> rows;
  for (const IntegerInstruction& r : integer_instructions()) {
    if (r.arch == arch && r.operand_bits == operand_bits) rows.push_back(r);
  }
  return rows;
}

IntegerInstruction integer_instruction(std::string_view arch, int operand_bits,
                                       std::string_view instruction) {
  if (!known_arch(arch)) {
    throw std::invalid_argument("unknown architecture '" + std::string(arch) +
                                "' (integer MMA: sm75 sm80 sm89 sm90 sm100)");
  }
  const std::string width = operand_bits == 8 ? "s8/u8" : "s4/u4";
  const std::vector<IntegerInstruction> rows = integer_instructions(arch, operand_bits);
  if (rows.empty()) {
    throw std::invalid_argument(std::string(arch) + " has no integer MMA instruction for " + width +
                                " operands" +
                                (arch == "sm70" ? " (integer tensor cores start with sm75)" : ""));
  }
  if (instruction == "mma.sync") {
    const IntegerInstruction* largest = nullptr;
    for (const IntegerInstruction& r : rows) {
      if (r.name.starts_with("mma.sync.") && (!largest || r.k > largest->k)) largest = &r;
    }
    if (largest) return *largest;
  }
  for (const IntegerInstruction& r : rows) {
    if (r.name == instruction) return r;
  }
  throw std::invalid_argument(std::string(arch) + " has no integer instruction '" +
                              std::string(instruction) + "' for " + width + " operands; it has " +
                              names_of(rows) + " (and mma.sync: the largest-K mma.sync shape)");
}

IntegerDatapath integer_preset(std::string_view arch, const IntegerFormat& a,
                               const IntegerFormat& b, std::string_view instruction,
                               bool satfinite) {
  IntegerDatapath dp{a, b, 1, satfinite ? IntegerOverflow::saturate : IntegerOverflow::wrap};
  validate(dp);  // operand formats and widths
  const IntegerInstruction row = integer_instruction(arch, a.bits, instruction);
  if (satfinite && !row.satfinite) {
    throw std::invalid_argument(std::string(row.name) + " on " + std::string(arch) +
                                " has no .satfinite: it wraps modulo 2^32");
  }
  dp.instruction_k = row.k;
  return dp;
}

void check_integer_shape_k(std::string_view arch, int operand_bits, std::string_view instruction,
                           std::size_t k) {
  const IntegerInstruction row = integer_instruction(arch, operand_bits, instruction);
  const bool plain = instruction == "mma.sync" || row.name == "tcgen05.mma.kind::i8";
  if (plain || k % static_cast<std::size_t>(row.k) == 0) return;
  std::string shapes;
  for (const IntegerInstruction& r : integer_instructions(arch, operand_bits)) {
    shapes +=
        (shapes.empty() ? "" : ", ") + std::string(r.name) + " (K " + std::to_string(r.k) + ")";
  }
  throw std::invalid_argument("K = " + std::to_string(k) + " is not a multiple of " +
                              std::string(row.name) + "'s K = " + std::to_string(row.k) + "; " +
                              std::string(arch) + " has " + shapes + ", and mma.sync takes any K");
}

std::string describe(const IntegerDatapath& dp) {
  std::ostringstream out;
  out << dp.a_format.name << " x " << dp.b_format.name << " -> s32, K = " << dp.instruction_k
      << " per instruction, "
      << (dp.overflow == IntegerOverflow::wrap ? "wrap modulo 2^32"
                                               : "saturate (.satfinite: clamp to int32 once per "
                                                 "instruction)");
  return out.str();
}

}  // namespace tcemu
