// The probe-and-fit pipeline (probe.hpp): the GPU's runners where this build has them.
#include <tcemu/session/probe.hpp>

#include <algorithm>

#include <tcemu/cases/mmasim_evidence.hpp>
#include <tcemu/cases/sparse_case.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/pair_fma_emulation.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/emulator/sparse_presets.hpp>
#include <tcemu/session/arguments.hpp>
#include <tcemu/session/backends.hpp>
#if TCEMU_WITH_GPU
#include <tcemu/gpu/blackwell_runner.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/mma_runner.hpp>
#include <tcemu/gpu/sparse_runner.hpp>
#endif

namespace tcemu::session {
namespace {

#if !TCEMU_WITH_GPU
[[noreturn]] void not_built(const std::string& what) {
  throw NotBuilt(what +
                 ": this tcemu was built without the CUDA backend (no CUDA toolkit was found when "
                 "it was configured)");
}
#endif

// The rows of the preset table for (arch, instruction).
std::vector<PresetEntry> preset_rows(const std::string& arch, const std::string& instruction) {
  std::vector<PresetEntry> rows;
  for (const PresetEntry& e : all_presets()) {
    if (e.arch == arch && e.instruction == instruction) rows.push_back(e);
  }
  return rows;
}

// The architecture whose presets a Blackwell name (is_blackwell_instruction) compares with.
std::string blackwell_arch(const std::string& instruction) {
  return instruction.starts_with("tcgen05") ? "sm100" : "sm120";
}

}  // namespace

ProbeDevice probe_device(const std::string& instruction) {
#if TCEMU_WITH_GPU
  try {
    return probe_device();
  } catch (const std::runtime_error& e) {
    const std::string_view needs = gpu::blackwell_requirement(instruction);
    if (needs.empty()) throw;
    throw std::runtime_error(std::string(e.what()) + "; " + instruction + " needs " +
                             std::string(needs));
  }
#else
  not_built("the probe (" + instruction + ")");
#endif
}

bool is_blackwell_instruction(const ProbeDevice& device, const std::string& instruction) {
#if TCEMU_WITH_GPU
  return !gpu::blackwell_requirement(instruction).empty() ||
         (device.arch == "sm120" && instruction == "mma.sync.m16n8k32");
#else
  (void)device;
  (void)instruction;
  return false;
#endif
}

ProbeDevice probe_device() {
#if TCEMU_WITH_GPU
  const gpu::DeviceInfo d = gpu::require_device();
  const std::string arch = d.arch_preset();
  return {d.name, d.compute_major, d.compute_minor, arch.empty() ? "sm90" : arch};
#else
  not_built("probing the present GPU");
#endif
}

bool is_sparse_instruction(const std::string& instruction) {
  return instruction.starts_with("mma.sp.");
}

std::vector<std::string> probe_instructions(const ProbeDevice& device, const std::string& name) {
#if TCEMU_WITH_GPU
  if (name == "mma.sync") return {name};
  if (!gpu::blackwell_requirement(name).empty()) gpu::check_blackwell_device(name);
  const int cc = device.compute_capability();
  std::vector<std::string> all, known;
  for (std::string_view n : gpu::probe_instructions(cc)) all.emplace_back(n);
  for (std::string_view n : gpu::sparse_probe_instructions(cc)) all.emplace_back(n);
  for (std::string_view n : gpu::blackwell_instructions(cc)) {
    if (std::ranges::find(all, n) == all.end()) all.emplace_back(n);
  }
  known = all;
  for (std::string_view n : gpu::wide_wgmma_instructions(cc)) known.emplace_back(n);
  if (name == "all") return all;
  if (std::ranges::find(known, name) != known.end()) return {name};
  std::string names;
  for (const std::string& n : known) names += " " + n;
  throw UsageError("--instr: " + device.name + " has no probe runner for '" + name +
                   "'; it has: mma.sync all" + names);
#else
  (void)device;
  not_built("the probe (" + name + ")");
#endif
}

std::vector<FormatPair> instruction_pairs(const ProbeDevice& device,
                                          const std::string& instruction) {
#if TCEMU_WITH_GPU
  const int cc = device.compute_capability();
  if (is_sparse_instruction(instruction)) return gpu::sparse_pairs(instruction);
  if (is_blackwell_instruction(device, instruction)) {
    std::vector<FormatPair> pairs;
    for (const PresetEntry& e : preset_rows(blackwell_arch(instruction), instruction)) {
      const FormatPair p{e.datapath.input, e.datapath.accumulator};
      if (std::ranges::count_if(pairs, [&](const FormatPair& q) {
            return q.first == p.first && q.second == p.second;
          }) == 0) {
        pairs.push_back(p);
      }
    }
    return pairs;
  }
  if (instruction == "mma.sync") return gpu::mma_sync_pairs(cc);
  return gpu::instruction_pairs(instruction, cc);
#else
  (void)device;
  not_built("the probe (" + instruction + ")");
#endif
}

std::vector<FloatFormat> instruction_b_formats(const ProbeDevice& device,
                                               const std::string& instruction,
                                               const FormatPair& pair) {
  if (!is_blackwell_instruction(device, instruction)) return {pair.first};
  std::vector<FloatFormat> formats_b;
  for (const PresetEntry& e : preset_rows(blackwell_arch(instruction), instruction)) {
    if (e.datapath.input == pair.first && e.datapath.accumulator == pair.second) {
      formats_b.push_back(e.datapath.b_format());
    }
  }
  return formats_b;
}

std::vector<std::uint32_t> run_cases(const std::string& instruction, const FormatPair& pair,
                                     std::span<const MmaCase> cases) {
#if TCEMU_WITH_GPU
  if (!gpu::blackwell_requirement(instruction).empty()) {
    return gpu::run_blackwell(
        instruction, preset(blackwell_arch(instruction), pair.first, pair.second, instruction),
        cases);
  }
  return gpu::run_instruction(instruction, pair.first, pair.second, cases);
#else
  (void)pair;
  (void)cases;
  not_built("the probe (" + instruction + ")");
#endif
}

namespace {

// A Blackwell instruction's probe (probe.hpp): the evidence generator's cases, then the crafted
// ones with scales of 1 where B's format is A's.
DenseProbe probe_blackwell(const ProbeDevice& device, const std::string& instruction,
                           const FormatPair& pair, std::size_t random, std::uint64_t seed,
                           const FloatFormat& input_b) {
  const auto& [input, accumulator] = pair;
  DenseProbe p;
  p.datapath = preset(device.arch, input, input_b, accumulator, instruction);
  p.k = p.datapath.instruction_k;
  const std::size_t scales =
      p.datapath.block_scaled() ? scale_count(p.datapath, static_cast<std::size_t>(p.k)) : 0;
  for (std::size_t i = 0; i < random; ++i) {
    p.probe.cases.push_back(evidence_case(p.datapath, seed, 0, i));
    p.probe.names.emplace_back();
  }
  if (input_b == input) {
    // 1.0: ue8m0 2^(127 - 127), ue4m3 1.000 * 2^(7 - 7).
    const std::uint32_t one = p.datapath.block_scaling.scale_a == formats::ue4m3 ? 0x38 : 0x7F;
    for (NamedCase& nc : crafted_cases(input, accumulator, p.k)) {
      nc.values.scale_a.assign(scales, one);
      nc.values.scale_b.assign(scales, one);
      p.probe.cases.push_back(std::move(nc.values));
      p.probe.names.push_back(std::move(nc.name));
    }
  }
#if TCEMU_WITH_GPU
  const std::vector<std::uint32_t> d = gpu::run_blackwell(instruction, p.datapath, p.probe.cases);
  for (std::size_t i = 0; i < p.probe.cases.size(); ++i) p.probe.cases[i].d = d[i];
  return p;
#else
  not_built("the probe (" + instruction + ")");
#endif
}

}  // namespace

DenseProbe probe_dense(const ProbeDevice& device, const std::string& instruction,
                       const FormatPair& pair, std::size_t random, std::uint64_t seed,
                       const std::optional<FloatFormat>& input_b) {
  const auto& [input, accumulator] = pair;
  if (is_blackwell_instruction(device, instruction)) {
    return probe_blackwell(device, instruction, pair, random, seed, input_b.value_or(input));
  }
  if (input_b && !(*input_b == input)) {
    throw std::invalid_argument(instruction + " takes B in A's format (" + std::string(input.name) +
                                ")");
  }
  DenseProbe p;
  // sm90 m8n8k4 fp16 -> fp16 has no preset but an exact model outside the block model
  // (pair_fma_emulation.hpp); its cases are generated as for the fp32 accumulator's row.
  p.pair_fma = is_sm90_m8n8k4_fp16(device.arch, instruction, input, accumulator);
  if (p.pair_fma) {
    p.datapath = preset(device.arch, input, formats::fp32, instruction);
    p.datapath.accumulator = formats::fp16;
    p.datapath.block_result_precision = formats::fp16.fraction_bits + 1;
    p.datapath.nan_bits = 0x7FFF;
  } else {
    p.datapath = preset(device.arch, input, accumulator, instruction);
  }
  p.k = instruction_shape_k(device.arch, input, p.pair_fma ? formats::fp32 : accumulator,
                            instruction);
  p.probe = probe_cases(p.datapath, p.k, random, seed);
  const std::vector<std::uint32_t> d = run_cases(instruction, pair, p.probe.cases);
  for (std::size_t i = 0; i < p.probe.cases.size(); ++i) p.probe.cases[i].d = d[i];
  return p;
}

SparseProbe probe_sparse(const ProbeDevice& device, const std::string& instruction,
                         const FormatPair& pair, std::size_t random, std::uint64_t seed) {
  const auto& [input, accumulator] = pair;
  SparseProbe p;
  p.datapath = sparse_preset(device.arch, input, accumulator, instruction);
  p.k = sparse_instruction_k(instruction);
  p.probe = sparse_probe_cases(p.datapath, p.k, random, seed);
#if TCEMU_WITH_GPU
  const std::vector<std::uint32_t> d =
      gpu::run_sparse(instruction, input, accumulator, p.probe.cases);
  for (std::size_t i = 0; i < p.probe.cases.size(); ++i) p.probe.cases[i].d = d[i];
  return p;
#else
  not_built("the probe (" + instruction + ")");
#endif
}

DatapathFit fit_probe(const DenseProbe& p) {
  // The instruction fixes the inputs' layout (B's format, the scales); the rest is searched.
  return fit_datapath(baseline_datapath(p.datapath, p.k), p.probe.cases);
}

DatapathFit fit_probe(const SparseProbe& p) {
  std::vector<MmaCase> kept;
  kept.reserve(p.probe.cases.size());
  for (const SparseMmaCase& c : p.probe.cases) {
    kept.push_back(dense_case(c));
    kept.back().d = c.d;
  }
  return fit_datapath(baseline_datapath(p.datapath.input, p.datapath.accumulator, p.k / 2), kept);
}

}  // namespace tcemu::session
