// tcemu presets: prints the datapath of every preset, or of one with overrides applied.
#include <algorithm>
#include <iostream>
#include <string_view>
#include <vector>

#include <tcemu/cases/printable.hpp>
#include <tcemu/emulator/integer_presets.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/emulator/sparse_presets.hpp>

#include "commands.hpp"
#include "datapath_options.hpp"
#include "fp64_commands.hpp"
#include "integer_commands.hpp"

namespace tcemu::cli {
namespace {

constexpr const char* kUsage = R"(usage: tcemu presets [--all | datapath options]

Without options (or with --all) lists, per architecture, every instruction shape, input format
and accumulator the emulator knows, with all datapath fields and where they come from (lit,
cap, ours, inferred, MMA-Sim 2.1.1: docs/presets.md), a block-scaled one with its scale block,
scale formats, group size and NaN-scale rule; the rows of an instruction that takes every pair
of several formats (kind::f8f6f4) as one line, 'input=e5m2|e4m3|... input_b=e5m2|e4m3|...
(every pair)' (--type A --b-type B prints one pair); then the names that stand for one of
them: mma.sync (the largest-K shape of the format) and each WMMA fragment shape (the mma.sync
shape it compiles to on that architecture); then every sparse MMA shape (mma.sp.mMnNkK, 2:4 sparsity of A), whose
datapath is that of its K/2 kept products (instruction_k = K/2; `tcemu mma --help` has the case
format); then every integer MMA instruction (IMMA) per architecture; then every fp64 MMA
instruction (DMMA) per architecture and the shape mma.sync stands for. With datapath options
(integer and fp64 ones too: --type s8 --acc s32 ..., --type fp64 --instr mma.sync.m16n8k8 ...;
--instr mma.sp.* for a sparse shape) prints that one datapath after the overrides.

)";

// `dp` with b in a's format: what the rows of one instruction taking pairs of formats share.
Datapath without_formats(Datapath dp, const FloatFormat& input) {
  dp.input = input;
  dp.has_input_b = false;
  dp.input_b = {};
  return dp;
}

// Appends `name` to `names` unless it is there.
void add_name(std::vector<std::string_view>& names, std::string_view name) {
  if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
}

std::string joined(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::string_view name : names) out += (out.empty() ? "" : "|") + std::string(name);
  return out;
}

// Prints one architecture's rows, one line each, except that consecutive rows of one
// instruction, accumulator and source that differ only in their input formats and hold every pair
// of them (kind::f8f6f4: 25 pairs) are one line: "input=e5m2|e4m3|... input_b=e5m2|e4m3|...
// (every pair)" and the fields they share.
void print_rows(const std::vector<PresetEntry>& rows) {
  for (std::size_t i = 0; i < rows.size();) {
    const PresetEntry& first = rows[i];
    const Datapath shared = without_formats(first.datapath, first.datapath.input);
    std::vector<std::string_view> inputs, inputs_b;
    std::size_t end = i;
    for (; end < rows.size(); ++end) {
      const PresetEntry& e = rows[end];
      if (e.instruction != first.instruction || e.source != first.source ||
          !(without_formats(e.datapath, first.datapath.input) == shared))
        break;
      add_name(inputs, e.datapath.input.name);
      add_name(inputs_b, e.datapath.b_format().name);
    }
    // The table has no key twice, so end - i distinct pairs of these formats are all of them
    // exactly when there are |inputs| x |inputs_b|.
    const std::string text = describe(shared);
    const std::string prefix = "input=" + std::string(first.datapath.input.name) + " ";
    if (end - i > 1 && end - i == inputs.size() * inputs_b.size() && text.starts_with(prefix)) {
      std::cout << first.arch << ' ' << first.instruction << ": input=" << joined(inputs)
                << " input_b=" << joined(inputs_b) << " (every pair) " << text.substr(prefix.size())
                << " (" << first.source << ")\n";
      i = end;
      continue;
    }
    std::cout << first.arch << ' ' << first.instruction << ": " << describe(first.datapath) << " ("
              << first.source << ")\n";
    ++i;
  }
}

}  // namespace

int presets_command(const std::vector<std::string>& words) {
  auto option_names = datapath_option_names();
  option_names.merge(integer_value_option_names());
  option_names.merge(fp64_value_option_names());
  auto flags = integer_flag_names();
  flags.insert({"help", "all"});
  const session::Arguments args(words, option_names, flags);
  if (args.flag("help")) {
    std::cout << kUsage << datapath_options_help() << '\n'
              << integer_options_help() << '\n'
              << fp64_options_help();
    return 0;
  }
  if (!args.positional().empty())
    throw session::UsageError("unexpected argument '" + printable(args.positional()[0]) + "'");
  if (words.empty() || args.flag("all")) {
    const std::vector<PresetEntry> entries = all_presets();
    for (std::string_view arch : preset_names()) {
      std::vector<PresetEntry> rows;
      for (const PresetEntry& e : entries) {
        if (e.arch == arch) rows.push_back(e);
      }
      print_rows(rows);
      // The alias names, resolved for every format the architecture has (a pair of formats has
      // no alias: mma.sync and wmma.* take one input format).
      for (const PresetEntry& e : rows) {
        const FloatFormat& in = e.datapath.input;
        const FloatFormat& acc = e.datapath.accumulator;
        if (e.datapath.has_input_b) continue;
        const auto names = instruction_names(arch, in, acc);
        if (e.instruction != names[names.size() > 1 ? 1 : 0]) continue;  // once per format
        for (std::string_view name : names) {
          if (name != "mma.sync" && !name.starts_with("wmma.")) continue;
          const Datapath dp = preset(arch, in, acc, name);
          for (const PresetEntry& target : rows) {
            if (target.datapath == dp && target.instruction != name &&
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
    print_fp64_presets();
    return 0;
  }
  if (integer_requested(args)) {
    std::cout << describe(integer_datapath_from(args)) << '\n';
    return 0;
  }
  if (fp64_requested(args)) {
    std::cout << describe(fp64_datapath_from(args)) << '\n';
    return 0;
  }
  std::cout << describe(sparse_or_dense_datapath_from(args)) << '\n';
  return 0;
}

}  // namespace tcemu::cli
