// The sparse MMA results we recorded on the H100 (tests/data/h100-probe/h100-sparse.tar.xz,
// docs/presets.md) replay through the sm90 sparse presets with zero mismatches, and the same
// datapath cut into blocks of K/4 kept products misses some of them (the data tells the block
// structures apart).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <tcemu/cases/sparse_case.hpp>
#include <tcemu/emulator/sparse_presets.hpp>

namespace tcemu {
namespace {

TEST(H100SparseProbe, EveryRecordedCaseReplaysThroughTheSparsePreset) {
  std::size_t files = 0;
  for (const PresetEntry& e : all_sparse_presets()) {
    if (e.arch != "sm90") continue;
    const Datapath& dp = e.datapath;
    Datapath quarter = dp;
    quarter.block_terms = quarter.k_group = dp.instruction_k / 2;
    const auto file = std::filesystem::path(TCEMU_H100_SPARSE_DIR) /
                      (std::string(e.instruction) + "-" + std::string(dp.input.name) + "-" +
                       std::string(dp.accumulator.name) + ".txt");
    std::ifstream in(file);
    ASSERT_TRUE(in) << "cannot open " << file;
    std::size_t cases = 0, crafted = 0, mismatches = 0, quarter_mismatches = 0;
    std::string text;
    for (std::size_t line = 1; std::getline(in, text); ++line) {
      if (text.starts_with("# crafted: ")) ++crafted;
      const auto c = parse_sparse_case_line(text, line, dp.input, dp.accumulator);
      if (!c) continue;
      ++cases;
      ASSERT_TRUE(c->d) << file << ":" << line;
      ASSERT_EQ(c->b.size(), static_cast<std::size_t>(sparse_instruction_k(e.instruction)));
      const std::uint32_t got = sparse_mma_element(dp, *c);
      if (got != *c->d && ++mismatches <= 3) {
        ADD_FAILURE() << file.filename() << ":" << line << ": H100 "
                      << to_hex(dp.accumulator, *c->d) << ", emulator "
                      << to_hex(dp.accumulator, got);
      }
      if (sparse_mma_element(quarter, *c) != *c->d) ++quarter_mismatches;
    }
    EXPECT_GE(crafted, 3u * 20u) << file;
    EXPECT_GE(cases, 300u + crafted) << file;
    EXPECT_EQ(mismatches, 0u) << file << " through " << describe(dp);
    EXPECT_GT(quarter_mismatches, 10u) << file;
    ++files;
  }
  EXPECT_EQ(files, 10u);  // 8 fp16/bf16/tf32 files, the 2 fp8 k64 ones
}

}  // namespace
}  // namespace tcemu
