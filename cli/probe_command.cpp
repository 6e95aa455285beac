// tcemu probe: runs random and crafted cases through the present GPU's MMA instruction shapes and
// writes them, with the GPU's results, as case files that `tcemu validate` replays.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/cases/case_generator.hpp>
#include <tcemu/cases/sparse_probe_cases.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/pair_fma_emulation.hpp>
#include <tcemu/emulator/parallel_for.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/emulator/sparse_presets.hpp>
#include <tcemu/session/arguments.hpp>
#include <tcemu/session/output_file.hpp>
#include <tcemu/session/probe.hpp>

#include "commands.hpp"
#include "fp64_commands.hpp"
#include "integer_commands.hpp"
#include "probe_cases.hpp"

namespace tcemu::cli {
namespace {

constexpr const char* kUsage =
    R"(usage: tcemu probe --out-dir DIR [--type FORMAT [--b-type FORMAT] --acc FORMAT]
                   [--instr NAME|all] [--random N] [--seed S] [--keep N]
       tcemu probe --out-dir DIR --instr imma [--type s8|u8|s4|u4 [--b-type F]]
                   [--shape mma.sync.mMnNkK] [--random N] [--seed S] [--keep N] [--show N]
       tcemu probe --out-dir DIR --instr dmma [--shape mma.sync.mMnNkK]
                   [--random N] [--seed S] [--keep N] [--show N]

Runs cases through one instruction shape of the present GPU (one case per instruction: the case
is every row of A, every column of B and every element of C, or, for the mma.sync m16n8k16
fp16/bf16, m16n8k8 tf32, m16n8k32 fp8 and wgmma runners, row 0 of A, column 0 of B and C(0,0)
with the rest zero) and writes DIR/probe-GPU[-INSTR]-TYPE-ACC.txt for every input format and
accumulator the shape takes (or the one named): N random cases (default 100000) from the
scenarios of CaseGenerator, then the crafted cases of crafted_cases(), each line
'K a... b... c d' with the GPU's result d. The file's header names the device and the
`tcemu validate` command that replays it.

--instr names the instruction as the presets do (tcemu presets): mma.sync (default: the
largest-K mma.sync shape of each format), mma.sync.m8n8k4, mma.sync.m16n8k4, mma.sync.m16n8k8,
mma.sync.m16n8k16, mma.sync.m16n8k32 (sm_89+), wmma.m16n16k16, wmma.m32n8k16, wmma.m8n32k16,
wmma.m16n16k8, wgmma (sm_90a, m64n8kK), wgmma.m64nNkK (sm_90a, N = 16, 64, 128 or 256, K = 8
for tf32, 16 for fp16/bf16, 32 for e4m3/e5m2), and the sparse mma.sp.m16n8k16 and
mma.sp.m16n8k32 (fp16 -> fp32, fp16 -> fp16, bf16 -> fp32), mma.sp.m16n8k8, mma.sp.m16n8k16
(tf32 -> fp32) and mma.sp.m16n8k64 (e4m3, e5m2 -> fp32; sm_89+); 'all' probes every one of them the GPU has but the wgmma of
N > 8, one file per shape and format pair.

The Blackwell instructions (gpu/include/tcemu/gpu/blackwell_runner.hpp; built for sm_100a and
sm_120a, not yet run on Blackwell hardware: docs/gpu.md): on an sm_100a GPU (B200, GB200)
tcgen05 (kind::f16, tf32, f8f6f4 by --type), tcgen05.mxf8f6f4.block32, tcgen05.mxf4.block32,
tcgen05.mxf4nvf4.block32, tcgen05.mxf4nvf4.block16.ue8m0 and .ue4m3; on an sm_120a GPU (RTX 50,
RTX PRO 6000 Blackwell) mma.sync.m16n8k32 (kind::f8f6f4), mma.sync.m16n8k32.mxf8f6f4.block32,
mma.sync.m16n8k64.mxf4.block32, mma.sync.m16n8k64.mxf4nvf4.block32, .block16.ue8m0 and
.block16.ue4m3. The kinds of FP8/FP6/FP4 take B in any of e5m2 e4m3 e3m2 e2m3 e2m1 (every one,
or the one --b-type names: DIR/probe-GPU-INSTR-A-B-ACC.txt); their random cases are those of the
MMA-Sim evidence generator (scales included), their crafted ones where B's format is A's (scales
of 1); the lines are case lines of the preset's datapath (B's format, then the scales after c).
On any other GPU these names exit with status 1 and say which GPU they need.

The sparse shapes (2:4 sparsity of A) write sparse case lines 'K a_0..a_{K/2-1} METADATA
b_0..b_{K-1} c d' (cases/include/tcemu/cases/sparse_case.hpp: the K/2 kept values of A,
one digit 0-3 per kept value giving its position in its group of four, all K values of B): the
dense cases of the K/2 kept products given random metadata (the crafted ones also with indices
01 and 23 in every group; tf32, 1:2 sparse: 02 and 13) and random bits in B's dropped rows. They are compared with the
architecture's sparse preset and, as a check of the block structure, with the same datapath in blocks of K/4 kept products (a second
mismatch count).

Every GPU result is also compared with the emulator's preset of the device's architecture for
that instruction (sm90 mma.sync.m8n8k4 fp16 -> fp16, which has no preset, with its exact model,
the fp32 pair-FMA emulation of emulator/include/tcemu/emulator/pair_fma_emulation.hpp); a line per file prints the count of cases and of mismatches. --keep N writes
only the first N random cases (and every crafted one) to the file: the comparison still covers
all of them.

With --instr imma (or an integer --type): every integer mma.sync shape of the GPU, and on an
sm_90a GPU the wgmma m64n8k32 (imma_runner.hpp), for every pair of s8/u8 (s4/u4) operand formats or the one named, without
and with .satfinite: N random cases then the crafted ones of integer_probe_cases.hpp, each
checked on the spot against the emulator's preset for the GPU's architecture and shape (the
count of mismatches is printed, with the first --show N of them, default 3; exit 1 if any).
DIR/probe-GPU-imma-SHAPE-A-B[-satfinite].txt keeps the first --keep N random cases and N
crafted ones evenly spaced (default: every case), as integer case lines with the GPU's d.

With --instr dmma (or --type fp64, where --instr may name the shape): every fp64 mma.sync shape
of the GPU (m8n8k4 from sm_80; m16n8k4, m16n8k8, m16n8k16 from sm_90; dmma_runner.hpp), or the
one --shape names (a GPU below its compute capability is refused, naming both): N random cases
then the crafted ones of fp64_probe_cases.hpp, built so that the k order of the instruction's
chain, where c enters, one rounding per step or two, and the NaN, Inf, signed-zero and
subnormal rules each change the result. Each is checked on the spot against the preset (MMA-Sim
2.1.1's chain of fused multiply-adds in ascending k order) and against the same chain descending,
unfused, and both: one line each with its mismatches (and how many of them are crafted), so the
run says which order the hardware has; the first --show N mismatches against the preset are
printed (exit 1 if any). DIR/probe-GPU-dmma-SHAPE.txt keeps the cases as fp64 case lines (16
hex digits a word) with the GPU's d, as --keep says.

)";

using session::FormatPair;

std::string file_name(const std::string& device, const std::string& instruction,
                      const FormatPair& p, const FloatFormat& input_b) {
  std::string gpu;
  for (char ch : device) gpu += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  const std::string b = input_b == p.first ? "" : std::string(input_b.name) + "-";
  return "probe-" + gpu + (instruction == "mma.sync" ? "-" : "-" + instruction + "-") +
         std::string(p.first.name) + "-" + b + std::string(p.second.name) + ".txt";
}

std::string device_words(const session::ProbeDevice& device) {
  return device.name + " (sm_" + std::to_string(device.compute_major) +
         std::to_string(device.compute_minor) + ")";
}

// Returns the number of mismatches against the preset.
std::size_t probe_pair(const session::ProbeDevice& device, const std::string& instruction,
                       const FormatPair& p, const FloatFormat& input_b, std::size_t random,
                       std::uint64_t seed, std::size_t keep, const std::filesystem::path& path) {
  const auto& [input, accumulator] = p;
  const std::string& arch = device.arch;
  const bool blackwell = session::is_blackwell_instruction(device, instruction);
  const session::DenseProbe run =
      session::probe_dense(device, instruction, p, random, seed, input_b);
  const ProbeCases& probe = run.probe;
  const Datapath& dp = run.datapath;
  const bool pair_fma = run.pair_fma;
  const int k = run.k;
  const std::string model =
      pair_fma ? "the fp32 pair-FMA emulation (pair_fma_emulation.hpp)" : "the " + arch + " preset";
  // The comparison through the model, on all cases.
  std::atomic<std::size_t> differing{0};
  detail::parallel_for(0, static_cast<std::int64_t>(probe.cases.size()), 65536,
                       [&](std::int64_t begin, std::int64_t end) {
                         std::size_t local = 0;
                         for (std::int64_t i = begin; i < end; ++i) {
                           const MmaCase& c = probe.cases[static_cast<std::size_t>(i)];
                           const std::uint32_t model_d =
                               pair_fma ? sm90_m8n8k4_fp16_element(c.a, c.b, c.c)
                                        : mma_case_element(dp, c);
                           if (model_d != *c.d) ++local;
                         }
                         differing += local;
                       });
  const std::size_t mismatches = differing;
  session::OutputFile file(path);
  std::ostream& out = file.stream();
  const std::size_t kept = std::min(keep, random);
  out << "# tcemu probe: " << device_words(device) << ", "
      << (instruction == "mma.sync" ? "mma.sync m16n8k" + std::to_string(k) : instruction)
      << ", input " << input.name << (input_b == input ? "" : " x " + std::string(input_b.name))
      << ", accumulator " << accumulator.name << ", " << kept << " of " << random
      << " random cases (seed " << seed << ") and " << probe.cases.size() - random << " crafted; "
      << mismatches << " of " << probe.cases.size() << " cases differ from " << model << "\n"
      << "# validate: tcemu validate --arch " << arch
      << (instruction == "mma.sync" ? "" : " --instr " + instruction) << " --type " << input.name
      << (input_b == input ? "" : " --b-type " + std::string(input_b.name)) << " --acc "
      << accumulator.name << " " << path.filename().string() << '\n';
  for (std::size_t i = 0; i < probe.cases.size(); ++i) {
    if (i >= kept && i < random) continue;
    if (!probe.names[i].empty()) out << "# crafted: " << probe.names[i] << '\n';
    out << (blackwell ? format_case_line(probe.cases[i], dp)
                      : format_case_line(probe.cases[i], input, accumulator))
        << '\n';
  }
  file.close();
  std::cout << path.string() << ": " << probe.cases.size() << " cases (" << random << " random, "
            << probe.cases.size() - random << " crafted), " << mismatches << " mismatches against "
            << model << ", " << instruction << " " << input.name
            << (input_b == input ? "" : " x " + std::string(input_b.name)) << " -> "
            << accumulator.name << "\n";
  return mismatches;
}

// The sparse shapes: as probe_pair, through the sparse runner and the sparse preset; prints the
// mismatches against the preset and against the preset's datapath in blocks of K/4 products.
std::size_t probe_sparse_pair(const session::ProbeDevice& device, const std::string& instruction,
                              const FormatPair& p, std::size_t random, std::uint64_t seed,
                              std::size_t keep, const std::filesystem::path& path) {
  const auto& [input, accumulator] = p;
  const std::string& arch = device.arch;
  const session::SparseProbe run = session::probe_sparse(device, instruction, p, random, seed);
  const SparseProbeCases& probe = run.probe;
  const Datapath& dp = run.datapath;
  const int k = run.k;
  const std::string model = "the " + arch + " sparse preset";
  Datapath quarter = dp;
  quarter.block_terms = quarter.k_group = k / 4;
  std::atomic<std::size_t> differing{0}, differing_quarter{0};
  detail::parallel_for(0, static_cast<std::int64_t>(probe.cases.size()), 65536,
                       [&](std::int64_t begin, std::int64_t end) {
                         std::size_t local = 0, local_quarter = 0;
                         for (std::int64_t i = begin; i < end; ++i) {
                           const SparseMmaCase& c = probe.cases[static_cast<std::size_t>(i)];
                           if (sparse_mma_element(dp, c) != *c.d) ++local;
                           if (sparse_mma_element(quarter, c) != *c.d) ++local_quarter;
                         }
                         differing += local;
                         differing_quarter += local_quarter;
                       });
  const std::size_t mismatches = differing;
  session::OutputFile file(path);
  std::ostream& out = file.stream();
  const std::size_t kept = std::min(keep, random);
  out << "# tcemu probe: " << device_words(device) << ", " << instruction << ", input "
      << input.name << ", accumulator " << accumulator.name << ", " << kept << " of " << random
      << " random cases (seed " << seed << ") and " << probe.cases.size() - random << " crafted; "
      << mismatches << " of " << probe.cases.size() << " cases differ from " << model << ", "
      << differing_quarter << " from its datapath in blocks of " << k / 4 << " kept products\n"
      << "# validate: tcemu validate --arch " << arch << " --instr " << instruction << " --type "
      << input.name << " --acc " << accumulator.name << " " << path.filename().string() << '\n';
  for (std::size_t i = 0; i < probe.cases.size(); ++i) {
    if (i >= kept && i < random) continue;
    if (!probe.names[i].empty()) out << "# crafted: " << probe.names[i] << '\n';
    out << format_sparse_case_line(probe.cases[i], input, accumulator) << '\n';
  }
  file.close();
  std::cout << path.string() << ": " << probe.cases.size() << " cases (" << random << " random, "
            << probe.cases.size() - random << " crafted), " << mismatches << " mismatches against "
            << model << ", " << instruction << " " << input.name << " -> " << accumulator.name
            << " (" << differing_quarter << " against blocks of " << k / 4 << ")\n";
  return mismatches;
}

}  // namespace

int probe_command(const std::vector<std::string>& words) {
  const session::Arguments args(
      words,
      {"out-dir", "type", "acc", "instr", "random", "seed", "keep", "b-type", "shape", "show"},
      {"help"});
  if (args.flag("help")) {
    std::cout << kUsage;
    return 0;
  }
  if (args.value_or("instr", "") == "imma" || integer_requested(args)) return integer_probe(args);
  if (args.value_or("instr", "") == "dmma" || fp64_requested(args)) return fp64_probe(args);
  for (const char* integer_only : {"shape", "show"}) {
    if (args.value(integer_only)) {
      throw session::UsageError("--" + std::string(integer_only) +
                                " applies to --instr imma and --instr dmma only");
    }
  }
  const auto dir = args.value("out-dir");
  if (!dir) throw session::UsageError("--out-dir is required");
  const long long random = args.integer("random").value_or(100000);
  if (random < 0) throw session::UsageError("--random must not be negative");
  const long long keep = args.integer("keep").value_or(random);
  if (keep < 0) throw session::UsageError("--keep must not be negative");
  const auto seed = static_cast<std::uint64_t>(args.integer("seed").value_or(1));
  const std::string instruction = args.value_or("instr", "mma.sync");
  const auto named = named_pair(args);
  std::optional<FloatFormat> named_b;
  if (const auto b = args.value("b-type")) {
    named_b = format_by_name(*b);
    if (!named_b) throw session::UsageError("--b-type: unknown format '" + *b + "'");
    if (!named) throw session::UsageError("--b-type needs --type and --acc");
  }
  const session::ProbeDevice device = session::probe_device(instruction);
  const std::vector<std::string> instructions = session::probe_instructions(device, instruction);
  std::filesystem::create_directories(*dir);
  std::size_t files = 0;
  for (const std::string& name : instructions) {
    const bool sparse = session::is_sparse_instruction(name);
    const std::vector<FormatPair> shape_pairs = session::instruction_pairs(device, name);
    const std::vector<FormatPair> pairs = named ? std::vector<FormatPair>{*named} : shape_pairs;
    if (pairs.empty() && instruction != "all") {
      throw std::runtime_error(device.name + " has no " + name);
    }
    for (const FormatPair& p : pairs) {
      if (named && instruction == "all" && shape_pairs.size() > 0 &&
          std::ranges::count_if(shape_pairs, [&](const FormatPair& q) {
            return q.first == p.first && q.second == p.second;
          }) == 0)
        continue;  // --instr all with a pair: only the shapes that take it
      if (sparse) {
        if (named_b && !(*named_b == p.first)) continue;  // mma.sp takes B in A's format
        probe_sparse_pair(device, name, p, static_cast<std::size_t>(random), seed,
                          static_cast<std::size_t>(keep),
                          std::filesystem::path(*dir) / file_name(device.name, name, p, p.first));
        ++files;
        continue;
      }
      for (const FloatFormat& b : session::instruction_b_formats(device, name, p)) {
        if (named_b && !(*named_b == b)) continue;
        probe_pair(device, name, p, b, static_cast<std::size_t>(random), seed,
                   static_cast<std::size_t>(keep),
                   std::filesystem::path(*dir) / file_name(device.name, name, p, b));
        ++files;
      }
    }
  }
  if (files == 0) throw std::runtime_error("no instruction of " + device.name + " takes that pair");
  return 0;
}

}  // namespace tcemu::cli
