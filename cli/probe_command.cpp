// tcemu probe: runs random and crafted cases through the present GPU's mma.sync instructions and
// writes them, with the GPU's results, as case files that `tcemu validate` replays.
#include <filesystem>
#include <fstream>
#include <iostream>

#include <tcemu/emulator/case_file.hpp>
#include <tcemu/emulator/case_generator.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>
#if TCEMU_WITH_GPU
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/mma_runner.hpp>
#endif

#include "arguments.hpp"
#include "commands.hpp"
#include "integer_commands.hpp"
#include "probe_cases.hpp"

namespace tcemu::cli {
namespace {

constexpr const char* kUsage = R"(usage: tcemu probe --out-dir DIR [--type FORMAT --acc FORMAT]
                   [--instr mma.sync|wgmma] [--random N] [--seed S]
       tcemu probe --out-dir DIR --instr imma [--type s8|u8|s4|u4 [--b-type F]]
                   [--shape mma.sync.mMnNkK] [--random N] [--seed S] [--record N] [--show N]

Runs cases through the warp-level mma.sync instruction of the present GPU, or with --instr wgmma
through the warpgroup-level wgmma of an sm_90a GPU (one case per instruction: row 0 of A,
column 0 of B, C(0,0)), and writes DIR/probe-GPU[-wgmma]-TYPE-ACC.txt for every
input format and accumulator the GPU supports (or the one named): N random cases (default
100000) from the scenarios of CaseGenerator, then the crafted cases of crafted_cases(), each
line 'K a... b... c d' with the GPU's result d. The file's header names the device and the
`tcemu validate` command that replays it.

With --instr imma (or an integer --type): every integer mma.sync shape of the GPU, and on an
sm_90a GPU the wgmma m64n8k32 (imma_runner.hpp), for every pair of s8/u8 (s4/u4) operand formats or the one named, without
and with .satfinite: N random cases then the crafted ones of integer_probe_cases.hpp, each
checked on the spot against the emulator's preset for the GPU's architecture and shape (the
count of mismatches is printed, with the first --show N of them, default 3; exit 1 if any).
DIR/probe-GPU-imma-SHAPE-A-B[-satfinite].txt keeps the first --record N random cases and N
crafted ones evenly spaced (default: every case), as integer case lines with the GPU's d.

)";

#if TCEMU_WITH_GPU
using Pair = std::pair<FloatFormat, FloatFormat>;

std::string file_name(const std::string& device, const std::string& instruction, const Pair& p) {
  std::string gpu;
  for (char ch : device) gpu += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return "probe-" + gpu + (instruction == "wgmma" ? "-wgmma-" : "-") + std::string(p.first.name) +
         "-" + std::string(p.second.name) + ".txt";
}

void probe_pair(const gpu::DeviceInfo& device, const std::string& instruction, const Pair& p,
                std::size_t random, std::uint64_t seed, const std::filesystem::path& path) {
  const auto& [input, accumulator] = p;
  const int k = gpu::mma_sync_k(input);
  const bool wgmma = instruction == "wgmma";
  // The generator needs the instruction's shape; any preset of the formats gives it.
  const std::string arch = device.arch_preset().empty() ? "sm90" : device.arch_preset();
  ProbeCases probe = probe_cases(preset(arch, input, accumulator), k, random, seed);
  const std::vector<std::uint32_t> d = wgmma ? gpu::run_wgmma(input, accumulator, probe.cases)
                                             : gpu::run_mma_sync(input, accumulator, probe.cases);
  std::ofstream out(path);
  out << "# tcemu probe: " << device.name << " (sm_" << device.compute_major << device.compute_minor
      << "), " << (wgmma ? "wgmma m64n8k" : "mma.sync m16n8k") << k << ", input " << input.name
      << ", accumulator " << accumulator.name << ", " << random << " random cases (seed " << seed
      << ") and " << probe.cases.size() - random << " crafted\n"
      << "# validate: tcemu validate --arch " << arch << (wgmma ? " --instr wgmma" : "")
      << " --type " << input.name << " --acc " << accumulator.name << " "
      << path.filename().string() << '\n';
  for (std::size_t i = 0; i < probe.cases.size(); ++i) {
    if (!probe.names[i].empty()) out << "# crafted: " << probe.names[i] << '\n';
    probe.cases[i].d = d[i];
    out << format_case_line(probe.cases[i], input, accumulator) << '\n';
  }
  if (!out) throw std::runtime_error("cannot write " + path.string());
  std::cout << path.string() << ": " << probe.cases.size() << " cases\n";
}
#endif

}  // namespace

int probe_command(const std::vector<std::string>& words) {
  const Arguments args(
      words,
      {"out-dir", "type", "acc", "instr", "random", "seed", "b-type", "shape", "record", "show"},
      {"help"});
  if (args.flag("help")) {
    std::cout << kUsage;
    return 0;
  }
  if (args.value_or("instr", "") == "imma" || integer_requested(args)) return integer_probe(args);
  for (const char* integer_only : {"b-type", "shape", "record", "show"}) {
    if (args.value(integer_only)) {
      throw UsageError("--" + std::string(integer_only) + " applies to --instr imma only");
    }
  }
#if TCEMU_WITH_GPU
  const auto dir = args.value("out-dir");
  if (!dir) throw UsageError("--out-dir is required");
  const long long random = args.integer("random").value_or(100000);
  if (random < 0) throw UsageError("--random must not be negative");
  const auto seed = static_cast<std::uint64_t>(args.integer("seed").value_or(1));
  const gpu::DeviceInfo device = gpu::require_device();
  const std::string instruction = args.value_or("instr", "mma.sync");
  if (instruction != "mma.sync" && instruction != "wgmma") {
    throw UsageError("--instr: '" + instruction + "' is neither mma.sync nor wgmma");
  }
  const int cc = device.compute_major * 10 + device.compute_minor;
  const auto named = named_pair(args);
  const std::vector<Pair> pairs =
      named ? std::vector<Pair>{*named}
            : (instruction == "wgmma" ? gpu::wgmma_pairs(cc) : gpu::mma_sync_pairs(cc));
  if (pairs.empty()) throw std::runtime_error(device.name + " has no " + instruction);
  std::filesystem::create_directories(*dir);
  for (const Pair& p : pairs) {
    probe_pair(device, instruction, p, static_cast<std::size_t>(random), seed,
               std::filesystem::path(*dir) / file_name(device.name, instruction, p));
  }
  return 0;
#else
  throw std::runtime_error("this tcemu was built without the CUDA backend (no CUDA toolkit found)");
#endif
}

}  // namespace tcemu::cli
