#include <algorithm>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>

#include <tcemu/emulator/block_fma.hpp>
#include <tcemu/emulator/fp32_bits.hpp>
#include <tcemu/emulator/presets.hpp>

namespace tcemu {
namespace {

// The NaN an MMA produces: kGpuFp32Nan (0x7FFFFFFF) for fp32 and 0x7FFF for fp16 (MMA-Sim;
// measured on the H100 for every input format, docs/presets.md; not measured on other
// generations).
constexpr std::uint32_t kFp16Nan = 0x7FFF;

// The builders of the table's rows. Each takes the row's input and accumulator formats; the rest
// of its arguments are the values docs/presets.md gives for the row.

// block_datapath(), usable in a constant expression.
constexpr Datapath block(const FloatFormat& input, const FloatFormat& accumulator,
                         int instruction_k, int block_terms, int fraction_bits) {
  const bool fp32_acc = accumulator == formats::fp32;
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
      .nan_bits = fp32_acc ? kGpuFp32Nan : kFp16Nan,
  };
}

// The narrow fp8 block of Ada (mma.sync) and Hopper (wgmma): a 32-term instruction in blocks of
// `block_terms`, 13 alignment bits, results kept to 13 fraction bits (14 significant bits).
constexpr Datapath narrow_fp8(const FloatFormat& input, const FloatFormat& accumulator,
                              int block_terms) {
  Datapath dp = block(input, accumulator, 32, block_terms, 13);
  dp.block_result_precision = std::min(dp.block_result_precision, 14);
  return dp;
}

// fp8 mma.sync on Hopper and Blackwell, through the fp16 datapath: two interleaved 16-term
// halves (k = 0,1,4,5,... then 2,3,6,7,...) from 0, 25 alignment bits, c added at the end with a
// round-to-nearest addition.
constexpr Datapath fp8_halves(const FloatFormat& input, const FloatFormat& accumulator) {
  Datapath dp = block(input, accumulator, 32, 16, 25);
  dp.k_group = 2;
  dp.c_entry = AccumulatorEntry::added_after_blocks;
  return dp;
}

// What we measured on the H100 with mma.sync (docs/presets.md): the alignment floor is -133 (as
// Khattak and Mikaitis 2025 report, not MMA-Sim's -126) and every zero result is +0. wgmma
// showed the same on the H200's generated and crafted cases (docs/presets.md).
constexpr Datapath hopper(Datapath dp) {
  dp.alignment_floor = -133;
  dp.zero_sign = ZeroSign::positive;
  return dp;
}

// Ootomo and Yokota's idealised Tensor Core: each block of `k` terms (one instruction of the
// sm90 shape) summed exactly with c and rounded once; no alignment floor, IEEE overflow.
// (Built in one expression: clang 14 refuses, in a constant expression, to copy a Datapath whose
// alignment_fraction_bits is empty, as `return dp;` would.)
constexpr Datapath exact(const FloatFormat& input, const FloatFormat& accumulator, int k,
                         Rounding rounding) {
  return Datapath{
      .input = input,
      .accumulator = accumulator,
      .instruction_k = k,
      .block_terms = k,
      .k_group = k,
      .alignment_fraction_bits = std::nullopt,
      .alignment_floor = kNoAlignmentFloor,
      .block_rounding = rounding,
      .block_result_precision = accumulator.fraction_bits + 1,
      .c_entry = AccumulatorEntry::aligned_in_first_block,
      .overflow = Overflow::ieee,
      .zero_sign = ZeroSign::ieee,
      .nan_bits = accumulator == formats::fp32 ? kGpuFp32Nan : kFp16Nan,
  };
}

using formats::bf16;
using formats::e4m3;
using formats::e5m2;
using formats::fp16;
using formats::fp32;
using formats::tf32;
constexpr Rounding rn = Rounding::nearest_even;
constexpr Rounding rz = Rounding::toward_zero;

// Every preset: one row per architecture, instruction path, input and accumulator the hardware
// has. The order is that of `tcemu presets` and all_presets(): architectures as preset_names()
// lists them, then instruction paths, then inputs fp16, bf16, tf32, e4m3, e5m2, then accumulators
// fp32, fp16. Only fp16 and fp8 inputs have an fp16-accumulator MMA. Sources, as docs/presets.md
// marks them: lit (published: Fasi et al. 2021, Khattak and Mikaitis 2025, FTTN 2024, MMA-Sim
// 2025), cap (fits the GPU captures of Khattak and Mikaitis), ours (measured on the lent H100
// and H200).
constexpr PresetEntry kPresets[] = {
    // V100 mma.sync m8n8k4: 4-term blocks, no extra alignment bit (Fasi et al. 2021; lit, cap).
    {"sm70", "mma.sync", block(fp16, fp32, 4, 4, 23)},
    {"sm70", "mma.sync", block(fp16, fp16, 4, 4, 23)},
    // T4 m16n8k8: 8-term blocks, one extra bit (lit; no published T4 data).
    {"sm75", "mma.sync", block(fp16, fp32, 8, 8, 24)},
    {"sm75", "mma.sync", block(fp16, fp16, 8, 8, 24)},
    // A100/A2: m16n8k16 runs as two 8-term halves, m16n8k8 tf32 as two 4-term halves; one extra
    // bit (lit; cap A100, A2).
    {"sm80", "mma.sync", block(fp16, fp32, 16, 8, 24)},
    {"sm80", "mma.sync", block(fp16, fp16, 16, 8, 24)},
    {"sm80", "mma.sync", block(bf16, fp32, 16, 8, 24)},
    {"sm80", "mma.sync", block(tf32, fp32, 8, 4, 24)},
    // Ada/L40S: fp16, bf16 and tf32 as sm80; m16n8k32 fp8 in two 16-term blocks of the narrow
    // fp8 datapath (lit; cap Ada, L40S).
    {"sm89", "mma.sync", block(fp16, fp32, 16, 8, 24)},
    {"sm89", "mma.sync", block(fp16, fp16, 16, 8, 24)},
    {"sm89", "mma.sync", block(bf16, fp32, 16, 8, 24)},
    {"sm89", "mma.sync", block(tf32, fp32, 8, 4, 24)},
    {"sm89", "mma.sync", narrow_fp8(e4m3, fp32, 16)},
    {"sm89", "mma.sync", narrow_fp8(e4m3, fp16, 16)},
    {"sm89", "mma.sync", narrow_fp8(e5m2, fp32, 16)},
    {"sm89", "mma.sync", narrow_fp8(e5m2, fp16, 16)},
    // H100/H200 mma.sync: one block per instruction (16 terms, tf32 8), two extra bits (lit; cap
    // H100, H200; ours). fp8: the interleaved halves, measured for both accumulators (ours; cap
    // for the fp16 accumulator).
    {"sm90", "mma.sync", hopper(block(fp16, fp32, 16, 16, 25))},
    {"sm90", "mma.sync", hopper(block(fp16, fp16, 16, 16, 25))},
    {"sm90", "mma.sync", hopper(block(bf16, fp32, 16, 16, 25))},
    {"sm90", "mma.sync", hopper(block(tf32, fp32, 8, 8, 25))},
    {"sm90", "mma.sync", hopper(fp8_halves(e4m3, fp32))},
    {"sm90", "mma.sync", hopper(fp8_halves(e4m3, fp16))},
    {"sm90", "mma.sync", hopper(fp8_halves(e5m2, fp32))},
    {"sm90", "mma.sync", hopper(fp8_halves(e5m2, fp16))},
    // H100/H200 wgmma: fp16, bf16 and tf32 as mma.sync (ours, on the H200). fp8: one 32-term
    // block of the narrow fp8 datapath (lit; cap: the H100/H200 fp8 sets with an fp32
    // accumulator, which our mma.sync measurements show cannot come from mma.sync; ours, both
    // accumulators on the H200).
    {"sm90", "wgmma", hopper(block(fp16, fp32, 16, 16, 25))},
    {"sm90", "wgmma", hopper(block(fp16, fp16, 16, 16, 25))},
    {"sm90", "wgmma", hopper(block(bf16, fp32, 16, 16, 25))},
    {"sm90", "wgmma", hopper(block(tf32, fp32, 8, 8, 25))},
    {"sm90", "wgmma", hopper(narrow_fp8(e4m3, fp32, 32))},
    {"sm90", "wgmma", hopper(narrow_fp8(e4m3, fp16, 32))},
    {"sm90", "wgmma", hopper(narrow_fp8(e5m2, fp32, 32))},
    {"sm90", "wgmma", hopper(narrow_fp8(e5m2, fp16, 32))},
    // B200 mma.sync: fp16, bf16 and tf32 as sm90 but with the literature's floor and zero sign
    // (lit; cap B200). fp8: the interleaved halves (cap: fitted to the B200 sets).
    {"sm100", "mma.sync", block(fp16, fp32, 16, 16, 25)},
    {"sm100", "mma.sync", block(fp16, fp16, 16, 16, 25)},
    {"sm100", "mma.sync", block(bf16, fp32, 16, 16, 25)},
    {"sm100", "mma.sync", block(tf32, fp32, 8, 8, 25)},
    {"sm100", "mma.sync", fp8_halves(e4m3, fp32)},
    {"sm100", "mma.sync", fp8_halves(e4m3, fp16)},
    {"sm100", "mma.sync", fp8_halves(e5m2, fp32)},
    {"sm100", "mma.sync", fp8_halves(e5m2, fp16)},
    // B200 tcgen05: fp8 in one 32-term block with two extra bits (lit). fp16, bf16 and tf32 as
    // sm100 mma.sync (docs/presets.md gives no separate tcgen05 values for them).
    {"sm100", "tcgen05", block(fp16, fp32, 16, 16, 25)},
    {"sm100", "tcgen05", block(fp16, fp16, 16, 16, 25)},
    {"sm100", "tcgen05", block(bf16, fp32, 16, 16, 25)},
    {"sm100", "tcgen05", block(tf32, fp32, 8, 8, 25)},
    {"sm100", "tcgen05", block(e4m3, fp32, 32, 32, 25)},
    {"sm100", "tcgen05", block(e4m3, fp16, 32, 32, 25)},
    {"sm100", "tcgen05", block(e5m2, fp32, 32, 32, 25)},
    {"sm100", "tcgen05", block(e5m2, fp16, 32, 32, 25)},
    // Ootomo and Yokota's idealised RN and RZ Tensor Cores, one block per sm90-shaped
    // instruction: 16 terms, tf32 8, fp8 32.
    {"exact-rn", "mma.sync", exact(fp16, fp32, 16, rn)},
    {"exact-rn", "mma.sync", exact(fp16, fp16, 16, rn)},
    {"exact-rn", "mma.sync", exact(bf16, fp32, 16, rn)},
    {"exact-rn", "mma.sync", exact(tf32, fp32, 8, rn)},
    {"exact-rn", "mma.sync", exact(e4m3, fp32, 32, rn)},
    {"exact-rn", "mma.sync", exact(e4m3, fp16, 32, rn)},
    {"exact-rn", "mma.sync", exact(e5m2, fp32, 32, rn)},
    {"exact-rn", "mma.sync", exact(e5m2, fp16, 32, rn)},
    {"exact-rz", "mma.sync", exact(fp16, fp32, 16, rz)},
    {"exact-rz", "mma.sync", exact(fp16, fp16, 16, rz)},
    {"exact-rz", "mma.sync", exact(bf16, fp32, 16, rz)},
    {"exact-rz", "mma.sync", exact(tf32, fp32, 8, rz)},
    {"exact-rz", "mma.sync", exact(e4m3, fp32, 32, rz)},
    {"exact-rz", "mma.sync", exact(e4m3, fp16, 32, rz)},
    {"exact-rz", "mma.sync", exact(e5m2, fp32, 32, rz)},
    {"exact-rz", "mma.sync", exact(e5m2, fp16, 32, rz)},
};

constexpr bool same_key(const PresetEntry& row, std::string_view arch, std::string_view instruction,
                        const FloatFormat& input, const FloatFormat& accumulator) {
  return row.arch == arch && row.instruction == instruction && row.datapath.input == input &&
         row.datapath.accumulator == accumulator;
}

// No key twice; the rows of one architecture together, and those of one instruction path of it
// (preset_names() and instruction_names() list them in the order they first appear).
constexpr bool well_formed(const auto& table) {
  for (std::size_t j = 1; j < std::size(table); ++j) {
    const PresetEntry& row = table[j];
    const PresetEntry& previous = table[j - 1];
    for (std::size_t i = 0; i < j; ++i) {
      const PresetEntry& earlier = table[i];
      if (same_key(earlier, row.arch, row.instruction, row.datapath.input,
                   row.datapath.accumulator))
        return false;
      if (earlier.arch == row.arch && previous.arch != row.arch) return false;
      if (earlier.arch == row.arch && earlier.instruction == row.instruction &&
          previous.instruction != row.instruction)
        return false;
    }
  }
  return true;
}
static_assert(well_formed(kPresets));

[[noreturn]] void unsupported(std::string_view arch, std::string_view instruction,
                              const FloatFormat& input, const FloatFormat& accumulator) {
  throw std::invalid_argument("no preset: " + std::string(arch) + " " + std::string(instruction) +
                              " has no " + std::string(input.name) + " MMA with an " +
                              std::string(accumulator.name) + " accumulator");
}

}  // namespace

Datapath block_datapath(const FloatFormat& input, const FloatFormat& accumulator, int instruction_k,
                        int block_terms, int fraction_bits) {
  return block(input, accumulator, instruction_k, block_terms, fraction_bits);
}

std::vector<std::string_view> preset_names() {
  std::vector<std::string_view> out;
  for (const PresetEntry& row : kPresets) {
    if (std::find(out.begin(), out.end(), row.arch) == out.end()) out.push_back(row.arch);
  }
  return out;
}

std::vector<std::string_view> instruction_names(std::string_view arch) {
  std::vector<std::string_view> out;
  for (const PresetEntry& row : kPresets) {
    if (row.arch == arch && std::find(out.begin(), out.end(), row.instruction) == out.end())
      out.push_back(row.instruction);
  }
  if (out.empty()) out.push_back("mma.sync");  // an unknown architecture: the default path
  return out;
}

Datapath preset(std::string_view arch, const FloatFormat& input, const FloatFormat& accumulator,
                std::string_view instruction) {
  for (const PresetEntry& row : kPresets) {
    if (same_key(row, arch, instruction, input, accumulator)) {
      Datapath dp = row.datapath;
      // FloatFormat's == compares fields, not names: the caller's formats are the ones returned.
      dp.input = input;
      dp.accumulator = accumulator;
      return dp;
    }
  }
  // Not in the table. An architecture that has no row is named as unknown, except where the
  // accumulator or the instruction alone rules the combination out: an accumulator other than
  // fp32 and fp16, an fp16 accumulator with an input other than fp16 and fp8 (the only inputs
  // with an fp16-accumulator MMA), or an instruction other than mma.sync.
  const bool known_arch = std::any_of(std::begin(kPresets), std::end(kPresets),
                                      [&](const PresetEntry& row) { return row.arch == arch; });
  const bool fp16_or_fp8_in = input == fp16 || input == e4m3 || input == e5m2;
  const bool possible = accumulator == fp32 || (accumulator == fp16 && fp16_or_fp8_in);
  if (!known_arch && possible && instruction == "mma.sync") {
    throw std::invalid_argument("unknown architecture preset '" + std::string(arch) + "'");
  }
  unsupported(arch, instruction, input, accumulator);
}

std::vector<PresetEntry> all_presets() {
  return {std::begin(kPresets), std::end(kPresets)};
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
