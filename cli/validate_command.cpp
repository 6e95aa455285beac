// tcemu validate: replays recorded cases (lines with a d, as `tcemu probe` writes them) through a
// datapath and reports the mismatches.
#include <fstream>
#include <iostream>

#include <tcemu/emulator/case_file.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>

#include "commands.hpp"
#include "datapath_options.hpp"
#include "input_file.hpp"

namespace tcemu::cli {
namespace {

constexpr const char* kUsage = R"(usage: tcemu validate [datapath options] [--show N] FILE ...

Replays every recorded case (K a... b... c d) of each FILE through the datapath and compares the
emulator's result with the recorded d, bit for bit. Prints the number of cases and mismatches
per file, and the first N mismatches (default 5) with their inputs, the recorded and the
emulated result; a comment line '# crafted: NAME' before a case names it. Exits 1 if any case
differs.

)";

struct Counts {
  std::size_t cases = 0;
  std::size_t mismatches = 0;
};

Counts validate_file(std::istream& in, const std::string& file, const Datapath& dp,
                     std::size_t show) {
  Counts counts;
  std::string text, name;
  for (std::size_t line = 1; std::getline(in, text); ++line) {
    if (text.starts_with("# crafted: ")) {
      name = text.substr(11);
      continue;
    }
    const auto c = parse_case_line(text, line, dp.input, dp.accumulator);
    if (!c) continue;
    if (!c->d) throw CaseFileError(line, "no recorded result d to validate against");
    ++counts.cases;
    const std::uint32_t got = mma_element(dp, c->a, c->b, c->c);
    if (got != *c->d) {
      if (counts.mismatches++ < show) {
        std::cout << file << ":" << line << (name.empty() ? "" : " (" + name + ")") << ": recorded "
                  << to_hex(dp.accumulator, *c->d) << ", emulated " << to_hex(dp.accumulator, got)
                  << "\n  " << format_case_line(*c, dp.input, dp.accumulator) << '\n';
      }
    }
    name.clear();
  }
  return counts;
}

}  // namespace

int validate_command(const std::vector<std::string>& words) {
  auto names = datapath_option_names();
  names.insert("show");
  const Arguments args(words, names, {"help"});
  if (args.flag("help")) {
    std::cout << kUsage << datapath_options_help();
    return 0;
  }
  if (args.positional().empty()) throw UsageError("no case file given");
  const Datapath dp = datapath_from(args);
  const auto show = static_cast<std::size_t>(args.integer("show").value_or(5));
  std::cout << "datapath: " << describe(dp) << '\n';
  std::size_t total_mismatches = 0;
  for (const std::string& file : args.positional()) {
    std::ifstream in = open_input(file);
    Counts counts;
    try {
      counts = validate_file(in, file, dp, show);
    } catch (const CaseFileError& e) {
      throw std::runtime_error(file + ": " + e.what());
    }
    std::cout << file << ": " << counts.cases << " cases, " << counts.mismatches << " mismatches\n";
    total_mismatches += counts.mismatches;
  }
  return total_mismatches == 0 ? 0 : 1;
}

}  // namespace tcemu::cli
