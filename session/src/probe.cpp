// The probe-and-fit pipeline (probe.hpp): the GPU's runners where this build has them.
#include <tcemu/session/probe.hpp>

#include <algorithm>

#include <tcemu/cases/sparse_case.hpp>
#include <tcemu/emulator/pair_fma_emulation.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/emulator/sparse_presets.hpp>
#include <tcemu/session/arguments.hpp>
#include <tcemu/session/backends.hpp>
#if TCEMU_WITH_GPU
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

}  // namespace

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
  const int cc = device.compute_capability();
  std::vector<std::string> all, known;
  for (std::string_view n : gpu::probe_instructions(cc)) all.emplace_back(n);
  for (std::string_view n : gpu::sparse_probe_instructions(cc)) all.emplace_back(n);
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
  if (instruction == "mma.sync") return gpu::mma_sync_pairs(cc);
  return gpu::instruction_pairs(instruction, cc);
#else
  (void)device;
  not_built("the probe (" + instruction + ")");
#endif
}

std::vector<std::uint32_t> run_cases(const std::string& instruction, const FormatPair& pair,
                                     std::span<const MmaCase> cases) {
#if TCEMU_WITH_GPU
  return gpu::run_instruction(instruction, pair.first, pair.second, cases);
#else
  (void)pair;
  (void)cases;
  not_built("the probe (" + instruction + ")");
#endif
}

DenseProbe probe_dense(const ProbeDevice& device, const std::string& instruction,
                       const FormatPair& pair, std::size_t random, std::uint64_t seed) {
  const auto& [input, accumulator] = pair;
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
  return fit_datapath(baseline_datapath(p.datapath.input, p.datapath.accumulator, p.k),
                      p.probe.cases);
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
