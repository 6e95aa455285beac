// tcemu validate: replays recorded cases (lines with a d, as `tcemu probe` writes them) through a
// datapath and reports the mismatches; or compares a recorded whole D with the emulated GEMM of
// its A, B and C (tcemu/cases/gemm_check.hpp).
#include <fstream>
#include <functional>
#include <iostream>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/cases/gemm_check.hpp>
#include <tcemu/cases/printable.hpp>
#include <tcemu/cases/sparse_case.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/pair_fma_emulation.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/emulator/sparse_presets.hpp>

#include "case_lines.hpp"
#include "commands.hpp"
#include "datapath_options.hpp"
#include "fp64_commands.hpp"
#include "gemm_operands.hpp"
#include "input_file.hpp"
#include "integer_commands.hpp"

namespace tcemu::cli {
namespace {

constexpr const char* kUsage =
    R"(usage: tcemu validate [datapath options] [--show N] [--allow-empty] FILE ...
       tcemu validate [datapath options] [--show N] --a FILE --b FILE [--c FILE] --d FILE
                      [--scale-a FILE --scale-b FILE]
                      [--alpha x --beta y --c-input MODE --takeout KB --threads N]

Case files: replays every recorded case (K a... b... c d) of each FILE through the datapath and
compares the emulator's result with the recorded d, bit for bit. Prints the number of cases and
mismatches per file, and the first N mismatches (default 5) with their inputs, the recorded and
the emulated result; a comment line '# crafted: NAME' before a case names it. A block-scaled
datapath's case lines carry the scales after c (tcemu mma --help), its matrices come with
--scale-a and --scale-b. With --instr
mma.sp.m16n8k8, mma.sp.m16n8k16, mma.sp.m16n8k32 or mma.sp.m16n8k64 the files hold sparse case
lines (tcemu mma --help), as
`tcemu probe --instr mma.sp.*` writes them. sm90 mma.sync.m8n8k4 fp16 -> fp16 (--instr
mma.sync.m8n8k4 --type fp16 --acc fp16) has no preset; its cases replay through its exact model,
the fp32 pair-FMA emulation of ptxas's SASS (emulator/include/tcemu/emulator/
pair_fma_emulation.hpp), and no datapath option applies. A file without any case is an error
(a probe run that wrote nothing passes no check) unless --allow-empty is given.

Whole matrices (--d): compares the recorded D (M x N, the accumulator format, hex text or .npy)
with the emulated GEMM of A, B and C, bit for bit, and prints a summary: how many elements
differ and their share, the largest distance in ulps and a histogram of the distances, and the
first N differing elements with their (row, column), expected and recorded bits and values, and
what each was computed from (C's element and, for K <= 16, its `tcemu mma` case line).

Exit status: 0 every case or element is equal; 1 some differ; 2 a usage, input or output error:
an unknown or malformed option, a file that is missing, unreadable or malformed (a line longer
than 1 MiB included), a matrix of the wrong shape or type, a case file without cases (unless
--allow-empty), standard output that could not be written.

)";

// The case lines of one file: `element` gives d of a case (the datapath's mma_element, or the
// pair-FMA emulation); `check_k` throws a CaseFileError for a K (of that line) the instruction
// does not take. `dp` gives the formats.
Counts validate_file(std::istream& in, const std::string& file, const Datapath& dp,
                     std::size_t show, const std::function<std::uint32_t(const MmaCase&)>& element,
                     const std::function<void(std::size_t k, std::size_t line)>& check_k) {
  return validate_case_lines(
      in, file, show, [&](const std::string& text, std::size_t line) -> std::optional<Verdict> {
        const auto c = parse_case_line(text, line, dp);
        if (!c) return std::nullopt;
        if (!c->d) throw CaseFileError(line, "no recorded result d to validate against");
        check_k(c->a.size(), line);
        const std::uint32_t got = element(*c);
        if (got == *c->d) return Verdict{true, {}};
        return Verdict{false, "recorded " + to_hex(dp.accumulator, *c->d) + ", emulated " +
                                  to_hex(dp.accumulator, got) + "\n  " + format_case_line(*c, dp)};
      });
}

// The same for sparse case lines through a sparse shape's datapath.
Counts validate_sparse_file(std::istream& in, const std::string& file,
                            const session::Arguments& args, const Datapath& dp, std::size_t show) {
  const std::size_t k = static_cast<std::size_t>(sparse_instruction_k(*args.value("instr")));
  return validate_case_lines(
      in, file, show, [&](const std::string& text, std::size_t line) -> std::optional<Verdict> {
        const auto c = parse_sparse_case_line(text, line, dp.input, dp.accumulator);
        if (!c) return std::nullopt;
        if (!c->d) throw CaseFileError(line, "no recorded result d to validate against");
        if (c->b.size() != k) {
          throw CaseFileError(line, "K = " + std::to_string(c->b.size()) + ", but " +
                                        *args.value("instr") + " takes K = " + std::to_string(k));
        }
        const std::uint32_t got = sparse_mma_element(dp, *c);
        if (got == *c->d) return Verdict{true, {}};
        return Verdict{false, "recorded " + to_hex(dp.accumulator, *c->d) + ", emulated " +
                                  to_hex(dp.accumulator, got) + "\n  " +
                                  format_sparse_case_line(*c, dp.input, dp.accumulator)};
      });
}

// Whole-matrix mode: the recorded D against the emulated GEMM of its operands.
int validate_matrices(const session::Arguments& args, const Datapath& dp, std::int64_t show) {
  if (!args.positional().empty()) {
    throw session::UsageError("case files and --d do not mix: got '" +
                              printable(args.positional().front()) + "'");
  }
  const GemmOperands operands = gemm_operands_from(args, dp);
  const BitMatrix d =
      read_bit_matrix_file(*args.value("d"), element_type_of_option(args, "acc", dp.accumulator));
  check_matrix_shape("d", *args.value("d"), d, operands.a.rows, operands.b.cols,
                     "the rows of --a and the columns of --b");
  const auto scales = operands.scales(dp);
  const GemmCheck check =
      scales ? check_gemm(dp, operands.options, operands.a_view(dp), operands.b_view(dp), *scales,
                          operands.c_view(dp), d.view(dp.accumulator), show)
             : check_gemm(dp, operands.options, operands.a_view(dp), operands.b_view(dp),
                          operands.c_view(dp), d.view(dp.accumulator), show);
  std::cout << *args.value("d") << ": " << check.report;
  return check.passed() ? 0 : 1;
}

int validate_pair_fma(const session::Arguments& args, std::size_t show) {
  if (args.value("d"))
    throw session::UsageError("sm90 mma.sync.m8n8k4 fp16 -> fp16 takes case files");
  if (args.positional().empty()) throw session::UsageError("no case file given");
  // The formats and K of the cases (K = 4, a chain of them for 4 n).
  Datapath formats_of_cases = preset("sm90", formats::fp16, formats::fp32, "mma.sync.m8n8k4");
  formats_of_cases.accumulator = formats::fp16;
  std::cout << "model: sm90 mma.sync.m8n8k4 fp16 -> fp16, the fp32 pair-FMA emulation "
               "(pair_fma_emulation.hpp)\n";
  return validate_each_file(args, [&](std::istream& in, const std::string& file) {
    return validate_file(
        in, file, formats_of_cases, show,
        [](const MmaCase& c) { return sm90_m8n8k4_fp16_element(c.a, c.b, c.c); },
        [](std::size_t k, std::size_t line) {
          if (k % 4 != 0) {
            throw CaseFileError(
                line, "K = " + std::to_string(k) + " is not a multiple of mma.sync.m8n8k4's K = 4");
          }
        });
  });
}

int validate(const std::vector<std::string>& words) {
  auto names = datapath_option_names();
  names.merge(gemm_operand_option_names());
  names.insert("show");
  names.insert("d");
  names.merge(integer_value_option_names());
  names.merge(fp64_value_option_names());
  auto flags = integer_flag_names();
  flags.insert("help");
  flags.insert("allow-empty");
  const session::Arguments args(words, names, flags);
  if (args.flag("help")) {
    std::cout << kUsage << gemm_operand_options_help() << '\n'
              << datapath_options_help() << '\n'
              << integer_options_help() << '\n'
              << fp64_options_help();
    return 0;
  }
  const long long show_option = args.integer("show").value_or(5);
  if (show_option < 0) throw session::UsageError("--show must be 0 or positive");
  if (integer_requested(args)) {
    return integer_validate(args, static_cast<std::size_t>(show_option));
  }
  if (fp64_requested(args)) return fp64_validate(args, static_cast<std::size_t>(show_option));
  const bool sparse = sparse_requested(args);
  if (sparse && args.value("d"))
    throw session::UsageError("sparse shapes take case files, not --d");
  if (pair_fma_requested(args))
    return validate_pair_fma(args, static_cast<std::size_t>(show_option));
  const Datapath dp = sparse ? sparse_or_dense_datapath_from(args) : datapath_from(args);
  if (args.value("d")) {
    std::cout << "datapath: " << describe(dp) << '\n';
    return validate_matrices(args, dp, show_option);
  }
  for (const std::string& name : gemm_operand_option_names()) {
    if (args.value(name)) throw session::UsageError("--" + name + " needs --d (whole-matrix mode)");
  }
  if (args.positional().empty())
    throw session::UsageError("no case file given (or --d for matrices)");
  const auto show = static_cast<std::size_t>(show_option);
  std::cout << "datapath: " << describe(dp) << '\n';
  return validate_each_file(args, [&](std::istream& in, const std::string& file) {
    return sparse
               ? validate_sparse_file(in, file, args, dp, show)
               : validate_file(
                     in, file, dp, show, [&](const MmaCase& c) { return mma_case_element(dp, c); },
                     [&](std::size_t k, std::size_t line) { check_case_k(args, dp, k, line); });
  });
}

}  // namespace

// Exits 2 for every error (a usage error stays one; any other is an input error: a missing,
// malformed or empty file, a wrong shape), 1 only for results that differ.
int validate_command(const std::vector<std::string>& words) {
  try {
    return validate(words);
  } catch (const session::UsageError&) {
    throw;
  } catch (const session::InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw session::InputError(e.what());
  }
}

}  // namespace tcemu::cli
