// tcemu mma: evaluates case files through a datapath (case_file.hpp has the format).
#include <fstream>
#include <iostream>

#include <tcemu/emulator/case_file.hpp>
#include <tcemu/emulator/mma.hpp>

#include "commands.hpp"
#include "datapath_options.hpp"
#include "input_file.hpp"
#include "integer_commands.hpp"

namespace tcemu::cli {
namespace {

constexpr const char* kUsage = R"(usage: tcemu mma [options] [FILE ...]

Reads MMA cases from each FILE (or standard input when there is none or FILE is -), one per
line, and writes one result per line to standard output:

  K a_0 ... a_{K-1} b_0 ... b_{K-1} c

Operands are hex bit patterns of their format without prefix (fp16/bf16: 4 digits, tf32: the
8-digit fp32 container, e4m3/e5m2: 2 digits; c and the result: 8 digits for an fp32
accumulator, 4 for fp16; integer formats: 2 digits per s8/u8 operand, 1 per s4/u4, 8 for an
s32 c and result). A line is one output element of one MMA instruction with that K; a
larger K runs as a chain of instructions. Blank lines and lines starting with # are skipped.
A malformed line stops the run with an error naming the file and line.

)";

// Evaluates every case of `in`; returns false (after printing the error) on a malformed line.
bool run_stream(std::istream& in, const std::string& name, const Arguments& args,
                const Datapath& dp) {
  std::string text;
  for (std::size_t line = 1; std::getline(in, text); ++line) {
    try {
      const auto c = parse_case_line(text, line, dp.input, dp.accumulator);
      if (!c) continue;
      check_case_k(args, dp, c->a.size(), line);
      std::cout << to_hex(dp.accumulator, mma_element(dp, c->a, c->b, c->c)) << '\n';
    } catch (const CaseFileError& e) {
      std::cout.flush();
      std::cerr << "tcemu mma: " << name << ": " << e.what() << '\n';
      return false;
    }
  }
  return true;
}

}  // namespace

int mma_command(const std::vector<std::string>& words) {
  auto names = datapath_option_names();
  names.merge(integer_value_option_names());
  auto flags = integer_flag_names();
  flags.insert("help");
  const Arguments args(words, names, flags);
  if (args.flag("help")) {
    std::cout << kUsage << datapath_options_help() << '\n' << integer_options_help();
    return 0;
  }
  if (integer_requested(args)) return integer_mma(args);
  const Datapath dp = datapath_from(args);
  std::vector<std::string> files = args.positional();
  if (files.empty()) files.push_back("-");
  for (const std::string& file : files) {
    if (file == "-") {
      check_stdin_is_not_a_directory();
      if (!run_stream(std::cin, "<stdin>", args, dp)) return 1;
      continue;
    }
    std::ifstream in;
    try {
      in = open_input(file);
    } catch (const std::runtime_error& e) {
      std::cout.flush();
      std::cerr << "tcemu mma: " << e.what() << '\n';
      return 1;
    }
    if (!run_stream(in, file, args, dp)) return 1;
  }
  return 0;
}

}  // namespace tcemu::cli
