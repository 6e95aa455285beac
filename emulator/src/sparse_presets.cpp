#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <string>

#include <tcemu/emulator/sparse_presets.hpp>

namespace tcemu {
namespace {

constexpr std::string_view kPrefix = "mma.sp.m16n8k";

// The sm90 rows: the datapath of the dense sm90 mma.sync shape whose K is the sparse shape's K/2
// (one block of the K/2 kept products, 25 alignment bits, floor -133, +0 zeros; for fp8 k64 the
// dense k32's two interleaved 16-term halves from 0, c added by an RN add), measured on the H100
// (docs/presets.md).
std::vector<PresetEntry> rows() {
  std::vector<PresetEntry> out;
  const auto add = [&](std::string_view sparse, std::string_view dense, const FloatFormat& input,
                       const FloatFormat& accumulator) {
    out.push_back({"sm90", sparse, preset("sm90", input, accumulator, dense), "ours"});
  };
  add("mma.sp.m16n8k8", "mma.sync.m16n8k4", formats::tf32, formats::fp32);
  add("mma.sp.m16n8k16", "mma.sync.m16n8k8", formats::fp16, formats::fp32);
  add("mma.sp.m16n8k16", "mma.sync.m16n8k8", formats::fp16, formats::fp16);
  add("mma.sp.m16n8k16", "mma.sync.m16n8k8", formats::bf16, formats::fp32);
  add("mma.sp.m16n8k16", "mma.sync.m16n8k8", formats::tf32, formats::fp32);
  add("mma.sp.m16n8k32", "mma.sync.m16n8k16", formats::fp16, formats::fp32);
  add("mma.sp.m16n8k32", "mma.sync.m16n8k16", formats::fp16, formats::fp16);
  add("mma.sp.m16n8k32", "mma.sync.m16n8k16", formats::bf16, formats::fp32);
  add("mma.sp.m16n8k64", "mma.sync.m16n8k32", formats::e4m3, formats::fp32);
  add("mma.sp.m16n8k64", "mma.sync.m16n8k32", formats::e5m2, formats::fp32);
  return out;
}

}  // namespace

std::vector<PresetEntry> all_sparse_presets() {
  static const std::vector<PresetEntry> table = rows();
  return table;
}

std::vector<std::string_view> sparse_instruction_names(std::string_view arch) {
  std::vector<std::string_view> out;
  for (const PresetEntry& row : all_sparse_presets()) {
    if (row.arch == arch && std::find(out.begin(), out.end(), row.instruction) == out.end())
      out.push_back(row.instruction);
  }
  return out;
}

int sparse_instruction_k(std::string_view instruction) {
  if (instruction.starts_with(kPrefix)) {
    const std::string_view digits = instruction.substr(kPrefix.size());
    if (digits == "8") return 8;
    if (digits == "16") return 16;
    if (digits == "32") return 32;
    if (digits == "64") return 64;
  }
  throw std::invalid_argument(
      "'" + std::string(instruction) +
      "' is no sparse shape (mma.sp.m16n8k8, mma.sp.m16n8k16, mma.sp.m16n8k32, "
      "mma.sp.m16n8k64)");
}

Datapath sparse_preset(std::string_view arch, const FloatFormat& input,
                       const FloatFormat& accumulator, std::string_view instruction) {
  for (const PresetEntry& row : all_sparse_presets()) {
    if (row.arch == arch && row.instruction == instruction && row.datapath.input == input &&
        row.datapath.accumulator == accumulator) {
      Datapath dp = row.datapath;
      dp.input = input;
      dp.accumulator = accumulator;
      return dp;
    }
  }
  std::string have;
  for (const PresetEntry& row : all_sparse_presets()) {
    if (row.arch != arch) continue;
    have += (have.empty() ? "" : ", ") + std::string(row.instruction) + " " +
            std::string(row.datapath.input.name) + " -> " +
            std::string(row.datapath.accumulator.name);
  }
  throw std::invalid_argument("no sparse preset: " + std::string(arch) + " " +
                              std::string(instruction) + " " + std::string(input.name) + " -> " +
                              std::string(accumulator.name) + "; " + std::string(arch) +
                              (have.empty() ? " has no mma.sp preset" : " has: " + have));
}

}  // namespace tcemu
