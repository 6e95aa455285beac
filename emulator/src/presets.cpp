#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <string>

#include <tcemu/emulator/block_fma.hpp>
#include <tcemu/emulator/presets.hpp>

namespace tcemu {
namespace {

// The NaN an MMA produces: 0x7FFFFFFF for fp32 and 0x7FFF for fp16 (MMA-Sim; measured on the
// H100 for every input format, docs/presets.md; not measured on other generations).
constexpr std::uint32_t kFp32Nan = 0x7FFFFFFF;
constexpr std::uint32_t kFp16Nan = 0x7FFF;

bool is(const FloatFormat& f, const FloatFormat& g) {
  return f == g;
}
bool is_fp8(const FloatFormat& f) {
  return is(f, formats::e4m3) || is(f, formats::e5m2);
}

[[noreturn]] void unsupported(std::string_view arch, std::string_view instruction,
                              const FloatFormat& input, const FloatFormat& accumulator) {
  throw std::invalid_argument("no preset: " + std::string(arch) + " " + std::string(instruction) +
                              " has no " + std::string(input.name) + " MMA with an " +
                              std::string(accumulator.name) + " accumulator");
}

}  // namespace

Datapath block_datapath(const FloatFormat& input, const FloatFormat& accumulator, int instruction_k,
                        int block_terms, int fraction_bits) {
  const bool fp32_acc = is(accumulator, formats::fp32);
  return Datapath{
      .input = input,
      .accumulator = accumulator,
      .instruction_k = instruction_k,
      .block_terms = block_terms,
      .k_group = block_terms,
      .alignment_fraction_bits = fraction_bits,
      .alignment_floor = -126,
      .block_rounding = fp32_acc ? Rounding::toward_zero : Rounding::nearest_even,
      .block_result_precision = accumulator.fraction_bits + 1,
      .c_entry = AccumulatorEntry::aligned_in_first_block,
      .overflow = Overflow::infinity,
      .zero_sign = ZeroSign::ieee,
      .nan_bits = fp32_acc ? kFp32Nan : kFp16Nan,
  };
}

namespace {

// The narrow fp8 block of Ada and Hopper: 13 alignment bits, results kept to 13 fraction bits.
Datapath narrow_fp8_block(const FloatFormat& input, const FloatFormat& accumulator,
                          int block_terms = 32) {
  Datapath dp = block_datapath(input, accumulator, 32, block_terms, 13);
  dp.block_result_precision = std::min(dp.block_result_precision, 14);
  return dp;
}

// Ootomo and Yokota's idealised Tensor Core: each block's exact sum, rounded once. The block is
// one instruction of the sm90 shape (16 terms for fp16/bf16, 8 for tf32, 32 for fp8).
Datapath idealised(const FloatFormat& input, const FloatFormat& accumulator, Rounding rounding) {
  const int k = is(input, formats::tf32) ? 8 : is_fp8(input) ? 32 : 16;
  Datapath dp = block_datapath(input, accumulator, k, k, 0);
  dp.alignment_fraction_bits = std::nullopt;
  dp.alignment_floor = kNoAlignmentFloor;
  dp.block_rounding = rounding;
  dp.overflow = Overflow::ieee;
  return dp;
}

}  // namespace

std::vector<std::string_view> preset_names() {
  return {"sm70", "sm75", "sm80", "sm89", "sm90", "sm100", "exact-rn", "exact-rz"};
}

std::vector<std::string_view> instruction_names(std::string_view arch) {
  if (arch == "sm90") return {"mma.sync", "wgmma"};
  if (arch == "sm100") return {"mma.sync", "tcgen05"};
  return {"mma.sync"};
}

Datapath preset(std::string_view arch, const FloatFormat& input, const FloatFormat& accumulator,
                std::string_view instruction) {
  const bool fp16_in = is(input, formats::fp16);
  const bool bf16_in = is(input, formats::bf16);
  const bool tf32_in = is(input, formats::tf32);
  const bool fp8_in = is_fp8(input);
  const bool fp32_acc = is(accumulator, formats::fp32);
  if (!fp32_acc && !is(accumulator, formats::fp16))
    unsupported(arch, instruction, input, accumulator);
  // Only fp16 and fp8 inputs have an fp16-accumulator MMA.
  if (!fp32_acc && !fp16_in && !fp8_in) unsupported(arch, instruction, input, accumulator);

  const auto instructions = instruction_names(arch);
  bool known_instruction = false;
  for (std::string_view i : instructions) known_instruction = known_instruction || i == instruction;
  if (!known_instruction) unsupported(arch, instruction, input, accumulator);

  if (arch == "exact-rn" || arch == "exact-rz") {
    if (!fp16_in && !bf16_in && !tf32_in && !fp8_in)
      unsupported(arch, instruction, input, accumulator);
    return idealised(input, accumulator,
                     arch == "exact-rn" ? Rounding::nearest_even : Rounding::toward_zero);
  }
  if (arch == "sm70") {
    // V100 mma.sync m8n8k4: 4-term blocks, no extra alignment bit (Fasi et al. 2021).
    if (!fp16_in) unsupported(arch, instruction, input, accumulator);
    return block_datapath(input, accumulator, 4, 4, 23);
  }
  if (arch == "sm75") {
    // T4 m16n8k8: 8-term blocks, one extra bit (literature; no published T4 data).
    if (!fp16_in) unsupported(arch, instruction, input, accumulator);
    return block_datapath(input, accumulator, 8, 8, 24);
  }
  if (arch == "sm80" || arch == "sm89") {
    // m16n8k16 runs as two 8-term halves, m16n8k8 tf32 as two 4-term halves; one extra bit.
    if (fp16_in || bf16_in) return block_datapath(input, accumulator, 16, 8, 24);
    if (tf32_in) return block_datapath(input, accumulator, 8, 4, 24);
    if (fp8_in && arch == "sm89") {
      // Ada m16n8k32 fp8: two 16-term blocks of the narrow fp8 datapath.
      return narrow_fp8_block(input, accumulator, 16);
    }
    unsupported(arch, instruction, input, accumulator);
  }
  if (arch == "sm90" || arch == "sm100") {
    Datapath dp = [&] {
      if (fp16_in || bf16_in) return block_datapath(input, accumulator, 16, 16, 25);
      if (tf32_in) return block_datapath(input, accumulator, 8, 8, 25);
      if (fp8_in && instruction == "mma.sync") {
        // fp8 through the fp16 datapath: two interleaved 16-term halves (k = 0,1,4,5,... then
        // 2,3,6,7,...) from 0, c added at the end with a round-to-nearest addition. Measured on
        // the H100 for both accumulators (docs/presets.md); fits the B200 captures.
        Datapath halves = block_datapath(input, accumulator, 32, 16, 25);
        halves.k_group = 2;
        halves.c_entry = AccumulatorEntry::added_after_blocks;
        return halves;
      }
      // wgmma fp8: one 32-term block, 13 alignment bits, results kept to 13 fraction bits (the
      // literature; fits the H100/H200 fp8 captures with an fp32 accumulator, which our
      // mma.sync measurements show cannot come from mma.sync).
      if (fp8_in && instruction == "wgmma") return narrow_fp8_block(input, accumulator);
      if (fp8_in && instruction == "tcgen05") return block_datapath(input, accumulator, 32, 32, 25);
      unsupported(arch, instruction, input, accumulator);
    }();
    if (arch == "sm90") {
      // Measured on the H100 with mma.sync (docs/presets.md): the alignment floor is -133 (as
      // Khattak and Mikaitis report, not MMA-Sim's -126), and every zero result is +0. wgmma is
      // assumed to share them (not measured).
      dp.alignment_floor = -133;
      dp.zero_sign = ZeroSign::positive;
    }
    return dp;
  }
  throw std::invalid_argument("unknown architecture preset '" + std::string(arch) + "'");
}

std::vector<PresetEntry> all_presets() {
  std::vector<PresetEntry> out;
  for (std::string_view arch : preset_names()) {
    for (std::string_view instruction : instruction_names(arch)) {
      for (const FloatFormat& input :
           {formats::fp16, formats::bf16, formats::tf32, formats::e4m3, formats::e5m2}) {
        for (const FloatFormat& accumulator : {formats::fp32, formats::fp16}) {
          try {
            out.push_back({arch, instruction, preset(arch, input, accumulator, instruction)});
          } catch (const std::invalid_argument&) {
            // the hardware has no such MMA
          }
        }
      }
    }
  }
  return out;
}

std::string describe(const Datapath& dp) {
  std::ostringstream out;
  out << "input=" << dp.input.name << " accumulator=" << dp.accumulator.name
      << " instruction_k=" << dp.instruction_k << " block_terms=" << dp.block_terms
      << " k_group=" << dp.k_group << " alignment_fraction_bits="
      << (dp.alignment_fraction_bits ? std::to_string(*dp.alignment_fraction_bits) : "exact")
      << " alignment_floor=" << dp.alignment_floor
      << " block_rounding=" << name_of(dp.block_rounding)
      << " block_result_precision=" << dp.block_result_precision
      << " c_entry=" << name_of(dp.c_entry) << " overflow=" << name_of(dp.overflow)
      << " zero_sign=" << name_of(dp.zero_sign) << std::hex << " nan_bits=0x" << dp.nan_bits;
  return out.str();
}

}  // namespace tcemu
