// The mma.sync results we recorded on the H100 (tests/data/h100-probe) replay through the sm90
// presets with zero mismatches: the presets' measured fields (alignment floor -133, +0 for every
// zero, the fp8 halves) are what that hardware does.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <tcemu/emulator/case_file.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>

namespace tcemu {
namespace {

struct Replay {
  std::size_t cases = 0;
  std::size_t crafted = 0;
  std::size_t mismatches = 0;
};

Replay replay_file(const std::filesystem::path& file, const Datapath& dp) {
  std::ifstream in(file);
  EXPECT_TRUE(in) << "cannot open " << file;
  Replay r;
  std::string text;
  for (std::size_t line = 1; std::getline(in, text); ++line) {
    if (text.starts_with("# crafted: ")) ++r.crafted;
    const auto c = parse_case_line(text, line, dp.input, dp.accumulator);
    if (!c) continue;
    ++r.cases;
    const std::uint32_t got = mma_element(dp, c->a, c->b, c->c);
    if (got == c->d) continue;
    if (++r.mismatches <= 3) {
      ADD_FAILURE() << file.filename() << ":" << line << ": H100 " << to_hex(dp.accumulator, *c->d)
                    << ", emulator " << to_hex(dp.accumulator, got);
    }
  }
  return r;
}

TEST(H100Probe, EveryRecordedCaseReplaysThroughTheSm90Preset) {
  const std::pair<const char*, const char*> sets[] = {
      {"fp16", "fp32"}, {"fp16", "fp16"}, {"bf16", "fp32"}, {"tf32", "fp32"},
      {"e4m3", "fp32"}, {"e4m3", "fp16"}, {"e5m2", "fp32"}, {"e5m2", "fp16"}};
  for (const auto& [input, accumulator] : sets) {
    const Datapath dp = preset("sm90", *format_by_name(input), *format_by_name(accumulator));
    const auto file = std::filesystem::path(TCEMU_H100_PROBE_DIR) /
                      (std::string(input) + "-" + accumulator + ".txt");
    const Replay r = replay_file(file, dp);
    EXPECT_GE(r.cases, 5000u) << file;
    EXPECT_GE(r.crafted, 15u) << file;
    EXPECT_EQ(r.mismatches, 0u) << file << " through " << describe(dp);
  }
}

}  // namespace
}  // namespace tcemu
