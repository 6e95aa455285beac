// tcemu presets: prints the datapath of every preset, or of one with overrides applied.
#include <iostream>

#include <tcemu/emulator/presets.hpp>

#include "commands.hpp"
#include "datapath_options.hpp"

namespace tcemu::cli {
namespace {

constexpr const char* kUsage = R"(usage: tcemu presets [--all | datapath options]

Without options (or with --all) lists every preset, instruction path, input format and
accumulator the emulator knows, with all datapath fields. With datapath options prints that one
datapath after the overrides.

)";

}  // namespace

int presets_command(const std::vector<std::string>& words) {
  const Arguments args(words, datapath_option_names(), {"help", "all"});
  if (args.flag("help")) {
    std::cout << kUsage << datapath_options_help();
    return 0;
  }
  if (!args.positional().empty()) throw UsageError("unexpected argument " + args.positional()[0]);
  if (words.empty() || args.flag("all")) {
    for (std::string_view arch : preset_names()) {
      for (std::string_view instruction : instruction_names(arch)) {
        for (const FloatFormat& input :
             {formats::fp16, formats::bf16, formats::tf32, formats::e4m3, formats::e5m2}) {
          for (const FloatFormat& acc : {formats::fp32, formats::fp16}) {
            try {
              const Datapath dp = preset(arch, input, acc, instruction);
              std::cout << arch << ' ' << instruction << ": " << describe(dp) << '\n';
            } catch (const std::invalid_argument&) {
              // the hardware has no such MMA; not listed
            }
          }
        }
      }
    }
    return 0;
  }
  std::cout << describe(datapath_from(args)) << '\n';
  return 0;
}

}  // namespace tcemu::cli
