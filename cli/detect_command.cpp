// tcemu detect: infers the datapath of the present GPU's mma.sync (or of recorded cases) and
// prints it as preset options.
#include <fstream>
#include <iostream>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/cases/case_generator.hpp>
#include <tcemu/cases/detect.hpp>
#include <tcemu/cases/line_reader.hpp>
#include <tcemu/cases/printable.hpp>
#include <tcemu/cases/sparse_case.hpp>
#include <tcemu/cases/sparse_probe_cases.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/emulator/sparse_presets.hpp>
#include <tcemu/session/arguments.hpp>
#include <tcemu/session/backends.hpp>
#include <tcemu/session/probe.hpp>

#include "commands.hpp"
#include "datapath_options.hpp"
#include "fp64_commands.hpp"
#include "input_file.hpp"
#include "integer_commands.hpp"
#include "probe_cases.hpp"

namespace tcemu::cli {
namespace {

constexpr const char* kUsage =
    R"(usage: tcemu detect [--type FORMAT --acc FORMAT] [--instr NAME|all] [--random N] [--seed S]
       tcemu detect --type FORMAT --acc FORMAT [--instr mma.sp.mMnNkK] --from FILE
       tcemu detect --type FORMAT [--b-type FORMAT] --acc FORMAT
                    [--scale-block N --scale-format F | --scale-format-a F --scale-format-b F]
                    --from FILE

Infers the datapath (block size and k grouping, alignment bits, alignment floor, block
rounding, result precision, how c enters, zero sign, overflow, NaN bits) that reproduces the
results of the present GPU's mma.sync (or, with --instr, of the named instruction shape, as
`tcemu probe` names them; 'all': every shape the probe runners have) on N random cases
(default 20000) and the crafted cases, for every input format and accumulator it takes (or
the one named). With --from, the cases
and results are read from a file written by `tcemu probe` instead, and no GPU is needed.

Block-scaled and mixed-format instructions (Blackwell's kind::f8f6f4, mxf8f6f4, mxf4, mxf4nvf4):
--b-type names B's format and --scale-block with the scale formats the layout of the scales each
case line carries after c (as `tcemu mma` reads them); the instruction fixes these, the search
does not. It then also fits the products summed exactly before the scales apply (G, MMA-Sim's
group), the fraction bits F of the scaled alignment (up to 40), the exponent a zero product or
zero scale takes (the alignment floor, any of -170..-100) and the NaN-scale rule. Cancelling
groups, all-zero groups and scales 00 and ff among the cases decide the last three.
Prints, per format, the number of mismatches left, the datapath as `tcemu mma` options, and the
fields the cases leave undetermined.

Exit status: 0 a datapath reproduces every result; 1 mismatches are left, or another failure (no
GPU, standard output that could not be written); 2 a usage or input error (an unknown or
malformed option, a --from file that is missing, unreadable, malformed or without cases).

The names: those of `tcemu probe --instr` (mma.sync shapes, WMMA shapes, wgmma, wgmma.m64nNkK),
and the sparse shapes mma.sp.m16n8k8, mma.sp.m16n8k16, mma.sp.m16n8k32 and mma.sp.m16n8k64, whose
datapath is inferred over the K/2 kept products of each case (sparse case lines with --from;
'all' takes the sparse shapes but not the wgmma of N > 8). The integer shapes have nothing to
infer (exact sums, wrapped or saturated): `tcemu probe --instr imma` checks them. Nor is fp64
(DMMA) a block datapath: `tcemu probe --instr dmma` compares its chain of fused multiply-adds, in
either k order, fused or not, with the GPU's results.

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

// The architecture whose mma.sync takes the fitted formats, so that the options line that
// datapath_options() writes on top of its preset runs: sm90, or sm120 for the FP8/FP6/FP4 pairs of
// kind::f8f6f4 and its block-scaled forms.
std::string arch_taking(const Datapath& dp) {
  for (const char* arch : {"sm90", "sm120"}) {
    try {
      preset(arch, dp.input, dp.b_format(), dp.accumulator);
      return arch;
    } catch (const std::invalid_argument&) {
      // not this architecture's formats
    }
  }
  return "sm90";
}

// The recorded cases of a file: case lines, or with `sparse_k` (the K of a sparse shape) sparse
// case lines as the dense cases of their K/2 kept products.
// `inputs` gives the formats of A, B and c and the scales' layout.
std::vector<MmaCase> read_recorded(const std::string& file, const Datapath& inputs,
                                   std::size_t sparse_k = 0) {
  std::ifstream in = open_input(file);
  std::vector<MmaCase> cases;
  std::string text;
  LineReader lines(in, file);
  while (lines.next(text)) {
    const std::size_t line = lines.line();
    try {
      std::optional<MmaCase> c;
      if (sparse_k == 0) {
        c = parse_case_line(text, line, inputs);
      } else if (const auto sparse =
                     parse_sparse_case_line(text, line, inputs.input, inputs.accumulator)) {
        if (sparse->b.size() != sparse_k) {
          throw CaseFileError(line, "K = " + std::to_string(sparse->b.size()) +
                                        ", the sparse shape takes K = " + std::to_string(sparse_k));
        }
        c = dense_case(*sparse);
        c->d = sparse->d;
      }
      if (!c) continue;
      if (!c->d) throw CaseFileError(line, "no recorded result d");
      if (!cases.empty() && c->a.size() != cases.front().a.size()) {
        throw CaseFileError(line, "K differs from the first case's");
      }
      cases.push_back(std::move(*c));
    } catch (const CaseFileError& e) {
      throw session::InputError(file + ": " + e.what());
    }
  }
  if (cases.empty()) throw session::InputError(file + ": no cases");
  return cases;
}

}  // namespace

int detect_command(const std::vector<std::string>& words) {
  const session::Arguments args(words,
                                {"type", "b-type", "acc", "instr", "random", "seed", "from",
                                 "scale-block", "scale-format", "scale-format-a", "scale-format-b"},
                                {"help"});
  if (args.flag("help")) {
    std::cout << kUsage;
    return 0;
  }
  if (integer_requested(args) || args.value_or("instr", "") == "imma") {
    throw session::UsageError(
        "tcemu detect infers floating-point datapaths; an integer MMA is an exact sum, wrapped or "
        "saturated, with nothing to infer: `tcemu probe --instr imma` checks the GPU's against "
        "the integer presets");
  }
  if (fp64_requested(args) || args.value_or("instr", "") == "dmma") {
    throw session::UsageError(
        "tcemu detect infers block datapaths; fp64 MMA is a chain of fused multiply-adds: `tcemu "
        "probe --instr dmma` compares each k order, fused and unfused, with the GPU's results, and "
        "`tcemu validate --type fp64 --fp64-order ORDER --fp64-step STEP` with recorded ones");
  }
  const std::string instruction = args.value_or("instr", "mma.sync");
  const bool sparse = session::is_sparse_instruction(instruction);
  if (!args.value("from")) {
    for (const char* name :
         {"b-type", "scale-block", "scale-format", "scale-format-a", "scale-format-b"}) {
      if (args.value(name)) {
        throw session::UsageError("--" + std::string(name) +
                                  " describes recorded cases: it needs --from FILE");
      }
    }
  }
  if (const auto file = args.value("from")) {
    const auto input = format_by_name(args.value_or("type", ""));
    const auto acc = format_by_name(args.value_or("acc", ""));
    if (!input || !acc) throw session::UsageError("--from needs --type and --acc");
    Datapath inputs = baseline_datapath(*input, *acc, 1);
    if (const auto b = args.value("b-type")) {
      const auto input_b = format_by_name(*b);
      if (!input_b) throw session::UsageError("--b-type: unknown format '" + printable(*b) + "'");
      inputs.has_input_b = !(*input_b == *input);
      inputs.input_b = *input_b;
    }
    apply_block_scaling(args, inputs);
    std::size_t sparse_k = 0;
    if (sparse && (inputs.has_input_b || inputs.block_scaled())) {
      throw session::UsageError("--instr " + instruction +
                                ": a sparse shape takes one input format and no scales");
    }
    if (sparse) {
      try {
        sparse_k = static_cast<std::size_t>(sparse_instruction_k(instruction));
      } catch (const std::invalid_argument& e) {
        throw session::UsageError(std::string("--instr: ") + e.what());
      }
    }
    const auto cases = read_recorded(*file, inputs, sparse_k);
    const int k = static_cast<int>(cases.front().a.size());
    Datapath start = baseline_datapath(inputs, k);
    try {
      validate(start);
    } catch (const std::invalid_argument& e) {
      throw session::UsageError(*file + ": K = " + std::to_string(k) + ": " + e.what());
    }
    const DatapathFit fit = fit_datapath(start, cases);
    report(*file, arch_taking(fit.datapath), fit);
    return fit.mismatches == 0 ? 0 : 1;
  }
  if (!session::gpu_built()) {
    throw std::runtime_error(
        "this tcemu was built without the CUDA backend; use --from FILE with recorded cases");
  }
  const long long random = args.integer("random").value_or(20000);
  if (random < 0) throw session::UsageError("--random must not be negative");
  const auto seed = static_cast<std::uint64_t>(args.integer("seed").value_or(1));
  const session::ProbeDevice device = session::probe_device(instruction);
  const auto named = named_pair(args);
  const std::vector<std::string> instructions = session::probe_instructions(device, instruction);
  std::size_t total_mismatches = 0;
  for (const std::string& name : instructions) {
    std::cout << "detecting the " << name << " datapath of " << device.name << " (sm_"
              << device.compute_major << device.compute_minor << ")\n";
    const auto pairs =
        named ? std::vector<session::FormatPair>{*named} : session::instruction_pairs(device, name);
    for (const session::FormatPair& pair : pairs) {
      const std::string label =
          name + " " + std::string(pair.first.name) + " -> " + std::string(pair.second.name);
      const DatapathFit fit =
          session::is_sparse_instruction(name)
              ? session::fit_probe(session::probe_sparse(device, name, pair,
                                                         static_cast<std::size_t>(random), seed))
              : session::fit_probe(session::probe_dense(device, name, pair,
                                                        static_cast<std::size_t>(random), seed));
      report(session::is_sparse_instruction(name)
                 ? label + " (the " + std::to_string(sparse_instruction_k(name) / 2) +
                       " kept products)"
                 : label,
             device.arch, fit);
      total_mismatches += fit.mismatches;
    }
  }
  return total_mismatches == 0 ? 0 : 1;
}

}  // namespace tcemu::cli
