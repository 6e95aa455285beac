// tcemu detect: infers the datapath of the present GPU's mma.sync (or of recorded cases) and
// prints it as preset options.
#include <fstream>
#include <iostream>

#include <tcemu/emulator/case_file.hpp>
#include <tcemu/emulator/case_generator.hpp>
#include <tcemu/emulator/detect.hpp>
#include <tcemu/emulator/presets.hpp>
#if TCEMU_WITH_GPU
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/mma_runner.hpp>
#endif

#include "arguments.hpp"
#include "commands.hpp"
#include "datapath_options.hpp"
#include "input_file.hpp"
#include "probe_cases.hpp"

namespace tcemu::cli {
namespace {

constexpr const char* kUsage =
    R"(usage: tcemu detect [--type FORMAT --acc FORMAT] [--instr NAME|all] [--random N] [--seed S]
       tcemu detect --type FORMAT --acc FORMAT --from FILE

Infers the datapath (block size and k grouping, alignment bits, alignment floor, block
rounding, result precision, how c enters, zero sign, overflow, NaN bits) that reproduces the
results of the present GPU's mma.sync (or, with --instr, of the named instruction shape, as
`tcemu probe` names them; 'all': every shape the probe runners have) on N random cases
(default 20000) and the crafted cases, for every input format and accumulator it takes (or
the one named). With --from, the cases
and results are read from a file written by `tcemu probe` instead, and no GPU is needed.
Prints, per format, the number of mismatches left, the datapath as `tcemu mma` options, and the
fields the cases leave undetermined.

)";

void report(const std::string& label, const std::string& arch, const DatapathFit& fit) {
  std::cout << label << ": " << fit.cases << " cases, " << fit.mismatches << " mismatches\n"
            << "  " << describe(fit.datapath)
            << "\n  options: " << datapath_options(arch, fit.datapath) << '\n';
  if (!fit.undetermined.empty()) {
    std::cout << "  undetermined by these cases:";
    for (const std::string& f : fit.undetermined) std::cout << ' ' << f;
    std::cout << '\n';
  }
}

std::vector<MmaCase> read_recorded(const std::string& file, const FloatFormat& input,
                                   const FloatFormat& accumulator) {
  std::ifstream in = open_input(file);
  std::vector<MmaCase> cases;
  std::string text;
  for (std::size_t line = 1; std::getline(in, text); ++line) {
    try {
      auto c = parse_case_line(text, line, input, accumulator);
      if (!c) continue;
      if (!c->d) throw CaseFileError(line, "no recorded result d");
      if (!cases.empty() && c->a.size() != cases.front().a.size()) {
        throw CaseFileError(line, "K differs from the first case's");
      }
      cases.push_back(std::move(*c));
    } catch (const CaseFileError& e) {
      throw std::runtime_error(file + ": " + e.what());
    }
  }
  if (cases.empty()) throw std::runtime_error(file + ": no cases");
  return cases;
}

}  // namespace

int detect_command(const std::vector<std::string>& words) {
  const Arguments args(words, {"type", "acc", "instr", "random", "seed", "from"}, {"help"});
  if (args.flag("help")) {
    std::cout << kUsage;
    return 0;
  }
  if (const auto file = args.value("from")) {
    const auto input = format_by_name(args.value_or("type", ""));
    const auto acc = format_by_name(args.value_or("acc", ""));
    if (!input || !acc) throw UsageError("--from needs --type and --acc");
    const auto cases = read_recorded(*file, *input, *acc);
    const int k = static_cast<int>(cases.front().a.size());
    const DatapathFit fit = fit_datapath(baseline_datapath(*input, *acc, k), cases);
    report(*file, "sm90", fit);
    return fit.mismatches == 0 ? 0 : 1;
  }
#if TCEMU_WITH_GPU
  const long long random = args.integer("random").value_or(20000);
  if (random < 0) throw UsageError("--random must not be negative");
  const auto seed = static_cast<std::uint64_t>(args.integer("seed").value_or(1));
  const gpu::DeviceInfo device = gpu::require_device();
  const std::string arch = device.arch_preset().empty() ? "sm90" : device.arch_preset();
  const auto named = named_pair(args);
  const int cc = device.compute_major * 10 + device.compute_minor;
  const std::string instruction = args.value_or("instr", "mma.sync");
  std::vector<std::string> instructions;
  for (std::string_view name : gpu::probe_instructions(cc)) {
    if (instruction == "all" || name == instruction) instructions.emplace_back(name);
  }
  if (instruction == "mma.sync") instructions = {"mma.sync"};
  if (instructions.empty()) throw UsageError("--instr: no probe runner for '" + instruction + "'");
  std::size_t total_mismatches = 0;
  for (const std::string& name : instructions) {
    std::cout << "detecting the " << name << " datapath of " << device.name << " (sm_"
              << device.compute_major << device.compute_minor << ")\n";
    const auto pairs = named ? std::vector<std::pair<FloatFormat, FloatFormat>>{*named}
                       : name == "mma.sync" ? gpu::mma_sync_pairs(cc)
                                            : gpu::instruction_pairs(name, cc);
    for (const auto& [input, accumulator] : pairs) {
      const int k = instruction_shape_k(arch, input, accumulator, name);
      ProbeCases probe = probe_cases(preset(arch, input, accumulator, name), k,
                                     static_cast<std::size_t>(random), seed);
      const auto d = gpu::run_instruction(name, input, accumulator, probe.cases);
      for (std::size_t i = 0; i < d.size(); ++i) probe.cases[i].d = d[i];
      const DatapathFit fit = fit_datapath(baseline_datapath(input, accumulator, k), probe.cases);
      report(name + " " + std::string(input.name) + " -> " + std::string(accumulator.name), arch,
             fit);
      total_mismatches += fit.mismatches;
    }
  }
  return total_mismatches == 0 ? 0 : 1;
#else
  throw std::runtime_error(
      "this tcemu was built without the CUDA backend; use --from FILE with recorded cases");
#endif
}

}  // namespace tcemu::cli
