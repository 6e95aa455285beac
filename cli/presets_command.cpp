// tcemu presets: prints the datapath of every preset, or of one with overrides applied.
#include <iostream>

#include <tcemu/emulator/integer_presets.hpp>
#include <tcemu/emulator/presets.hpp>

#include "commands.hpp"
#include "datapath_options.hpp"
#include "integer_commands.hpp"

namespace tcemu::cli {
namespace {

constexpr const char* kUsage = R"(usage: tcemu presets [--all | datapath options]

Without options (or with --all) lists every preset, instruction path, input format and
accumulator the emulator knows, with all datapath fields, then every integer MMA instruction
(IMMA) per architecture. With datapath options prints that one datapath after the overrides.

)";

}  // namespace

int presets_command(const std::vector<std::string>& words) {
  auto names = datapath_option_names();
  names.merge(integer_value_option_names());
  auto flags = integer_flag_names();
  flags.insert({"help", "all"});
  const Arguments args(words, names, flags);
  if (args.flag("help")) {
    std::cout << kUsage << datapath_options_help() << '\n' << integer_options_help();
    return 0;
  }
  if (!args.positional().empty()) throw UsageError("unexpected argument " + args.positional()[0]);
  if (words.empty() || args.flag("all")) {
    for (const PresetEntry& e : all_presets()) {
      std::cout << e.arch << ' ' << e.instruction << ": " << describe(e.datapath) << '\n';
    }
    print_integer_presets();
    return 0;
  }
  if (integer_requested(args)) {
    std::cout << describe(integer_datapath_from(args)) << '\n';
    return 0;
  }
  std::cout << describe(datapath_from(args)) << '\n';
  return 0;
}

}  // namespace tcemu::cli
