// tcemu presets: prints the datapath of every preset, or of one with overrides applied.
#include <iostream>

#include <tcemu/cases/printable.hpp>
#include <tcemu/emulator/integer_presets.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/emulator/sparse_presets.hpp>

#include "commands.hpp"
#include "datapath_options.hpp"
#include "integer_commands.hpp"

namespace tcemu::cli {
namespace {

constexpr const char* kUsage = R"(usage: tcemu presets [--all | datapath options]

Without options (or with --all) lists, per architecture, every instruction shape, input format
and accumulator the emulator knows, with all datapath fields and where they come from (lit,
cap, ours, inferred: docs/presets.md), then the names that stand for one of them: mma.sync (the
largest-K shape of the format) and each WMMA fragment shape (the mma.sync shape it compiles to
on that architecture); then every sparse MMA shape (mma.sp.mMnNkK, 2:4 sparsity of A), whose
datapath is that of its K/2 kept products (instruction_k = K/2; `tcemu mma --help` has the case
format); then every integer MMA instruction (IMMA) per architecture. With datapath options
(integer ones too: --type s8 --acc s32 ...; --instr mma.sp.* for a sparse shape) prints that one
datapath after the overrides.

)";

}  // namespace

int presets_command(const std::vector<std::string>& words) {
  auto option_names = datapath_option_names();
  option_names.merge(integer_value_option_names());
  auto flags = integer_flag_names();
  flags.insert({"help", "all"});
  const session::Arguments args(words, option_names, flags);
  if (args.flag("help")) {
    std::cout << kUsage << datapath_options_help() << '\n' << integer_options_help();
    return 0;
  }
  if (!args.positional().empty())
    throw session::UsageError("unexpected argument '" + printable(args.positional()[0]) + "'");
  if (words.empty() || args.flag("all")) {
    const std::vector<PresetEntry> entries = all_presets();
    for (std::string_view arch : preset_names()) {
      for (const PresetEntry& e : entries) {
        if (e.arch != arch) continue;
        std::cout << e.arch << ' ' << e.instruction << ": " << describe(e.datapath) << " ("
                  << e.source << ")\n";
      }
      // The alias names, resolved for every pair the architecture has.
      for (const PresetEntry& e : entries) {
        if (e.arch != arch) continue;
        const FloatFormat& in = e.datapath.input;
        const FloatFormat& acc = e.datapath.accumulator;
        const auto names = instruction_names(arch, in, acc);
        if (e.instruction != names[names.size() > 1 ? 1 : 0]) continue;  // once per pair
        for (std::string_view name : names) {
          if (name != "mma.sync" && !name.starts_with("wmma.")) continue;
          const Datapath dp = preset(arch, in, acc, name);
          for (const PresetEntry& target : entries) {
            if (target.arch == arch && target.datapath == dp && target.instruction != name &&
                (name == "mma.sync" || target.instruction == wmma_target(arch, name, in))) {
              std::cout << arch << ' ' << name << ' ' << in.name << " -> " << acc.name << " = "
                        << target.instruction << '\n';
              break;
            }
          }
        }
      }
    }
    for (const PresetEntry& e : all_sparse_presets()) {
      std::cout << e.arch << ' ' << e.instruction << " (sparse; the " << e.datapath.instruction_k
                << " kept products): " << describe(e.datapath) << " (" << e.source << ")\n";
    }
    print_integer_presets();
    return 0;
  }
  if (integer_requested(args)) {
    std::cout << describe(integer_datapath_from(args)) << '\n';
    return 0;
  }
  std::cout << describe(sparse_or_dense_datapath_from(args)) << '\n';
  return 0;
}

}  // namespace tcemu::cli
