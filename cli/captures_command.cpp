// tcemu captures: replays the GPU capture sets through the matching presets (the headline demo).
#include <iomanip>
#include <iostream>

#include <tcemu/cases/capture_set.hpp>
#include <tcemu/cases/case_file.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/session/arguments.hpp>

#include "case_lines.hpp"
#include "commands.hpp"

namespace tcemu::cli {
namespace {

constexpr const char* kUsage = R"(usage: tcemu captures [--verbose] [--allow-empty] [DIR]

Replays every capture set recorded on real GPUs (Khattak and Mikaitis; DIR defaults to the copy
unpacked into the build tree) through the preset of its architecture and prints, per GPU, input
format and accumulator, the number of cases and of results that differ from the GPU's bits.
--verbose also prints the datapath and the first mismatches. Exits 1 if any result differs, 2
for a usage or input error: a DIR without capture sets (or cases) is one unless --allow-empty.
)";

}  // namespace

int captures_command(const std::vector<std::string>& words) {
  const session::Arguments args(words, {}, {"help", "verbose", "allow-empty"});
  if (args.flag("help")) {
    std::cout << kUsage;
    return 0;
  }
  if (args.positional().size() > 1) throw session::UsageError("at most one capture directory");
  const std::string dir =
      args.positional().empty() ? std::string(TCEMU_DEFAULT_CAPTURES_DIR) : args.positional()[0];
  const auto sets = load_capture_sets(dir);
  std::size_t recorded = 0;
  for (const CaptureSet& set : sets) recorded += set.cases.size();
  check_not_empty(dir, recorded, args.flag("allow-empty"));
  std::cout << "Replaying " << sets.size() << " capture sets from " << dir << "\n\n"
            << "| GPU | preset | instruction | input | accumulator | K | cases | mismatches |\n"
            << "|---|---|---|---|---|---|---|---|\n";
  std::size_t total_cases = 0, total_mismatches = 0;
  for (const CaptureSet& set : sets) {
    const std::string arch = arch_of_gpu(set.gpu);
    const std::string instruction = instruction_of_capture(set);
    const Datapath dp = preset(arch, set.input, set.accumulator, instruction);
    const ReplayResult r = replay(set, dp);
    total_cases += r.cases;
    total_mismatches += r.mismatches;
    std::cout << "| " << set.gpu << " | " << arch << " | " << instruction << " | " << set.input.name
              << " | " << set.accumulator.name << " | "
              << (set.cases.empty() ? 0 : set.cases[0].a.size()) << " | " << r.cases << " | "
              << r.mismatches << " |\n";
    if (args.flag("verbose")) {
      std::cout << "    " << describe(dp) << '\n';
      for (const ReplayMismatch& m : r.first) {
        std::cout << "    row " << m.row + 1 << ": GPU " << to_hex(set.accumulator, m.expected)
                  << ", emulator " << to_hex(set.accumulator, m.got) << '\n';
      }
    }
  }
  std::cout << "\n" << total_mismatches << " mismatches in " << total_cases << " cases.\n";
  return total_mismatches == 0 ? 0 : 1;
}

}  // namespace tcemu::cli
