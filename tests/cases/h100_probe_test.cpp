// The results we recorded on the H100 (tests/data/h100-probe) replay through the sm90 presets with
// zero mismatches: the presets' measured fields (alignment floor -133, +0 for every zero, the fp8
// halves, each instruction shape's block structure) are what that hardware does.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/pair_fma_emulation.hpp>
#include <tcemu/emulator/presets.hpp>

namespace tcemu {
namespace {

struct Replay {
  std::size_t cases = 0;
  std::size_t crafted = 0;
  std::size_t mismatches = 0;
};

Replay replay_file(const std::filesystem::path& file, const Datapath& dp,
                   std::size_t expected_k = 0) {
  std::ifstream in(file);
  EXPECT_TRUE(in) << "cannot open " << file;
  Replay r;
  std::string text;
  for (std::size_t line = 1; std::getline(in, text); ++line) {
    if (text.starts_with("# crafted: ")) ++r.crafted;
    const auto c = parse_case_line(text, line, dp.input, dp.accumulator);
    if (!c) continue;
    ++r.cases;
    if (expected_k != 0 && c->a.size() != expected_k) {
      ADD_FAILURE() << file.filename() << ":" << line << ": K = " << c->a.size() << ", expected "
                    << expected_k;
    }
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

// Every sm90 instruction shape we probed (tcemu probe --instr all --random 1000000 --keep 300,
// docs/presets.md): 300 random and every crafted case per shape, input and accumulator, each
// replayed through that shape's preset. The files expected are every name instruction_names()
// gives sm90 for the pair, but the plain mma.sync (its shape's file covers it).
TEST(H100Probe, EveryInstructionShapeReplaysThroughItsPreset) {
  std::size_t files = 0;
  for (const PresetEntry& e : all_presets()) {
    if (e.arch != "sm90") continue;
    const FloatFormat& input = e.datapath.input;
    const FloatFormat& accumulator = e.datapath.accumulator;
    for (std::string_view name : instruction_names("sm90", input, accumulator)) {
      // Each (name, pair) once: on the row of the pair's first instruction.
      if (name == "mma.sync" || e.instruction != instruction_names("sm90", input, accumulator)[1])
        continue;
      const Datapath dp = preset("sm90", input, accumulator, name);
      const auto file = std::filesystem::path(TCEMU_H100_SHAPES_DIR) /
                        (std::string(name) + "-" + std::string(input.name) + "-" +
                         std::string(accumulator.name) + ".txt");
      ASSERT_TRUE(std::filesystem::exists(file)) << file;
      const auto k =
          static_cast<std::size_t>(instruction_shape_k("sm90", input, accumulator, name));
      const Replay r = replay_file(file, dp, k);
      EXPECT_GE(r.cases, 300u + r.crafted) << file;
      EXPECT_GE(r.crafted, 15u) << file;
      EXPECT_EQ(r.mismatches, 0u) << file << " through " << describe(dp);
      ++files;
    }
  }
  // 8 pairs x mma.sync shapes, WMMA shapes and wgmma: the 35 files of the archive.
  EXPECT_EQ(files, 35u);
}

// wgmma at N = 16, 64, 128, 256 (tcemu probe --instr wgmma.m64nNkK --random 1000000 --keep 300,
// fp32 and fp16 accumulators): the one wgmma preset of the pair, whatever N; 32 files.
TEST(H100Probe, EveryWideWgmmaShapeReplaysThroughTheWgmmaPreset) {
  struct Pair {
    const FloatFormat* input;
    const FloatFormat* accumulator;
    int k;
  };
  const Pair pairs[] = {{&formats::fp16, &formats::fp32, 16}, {&formats::bf16, &formats::fp32, 16},
                        {&formats::tf32, &formats::fp32, 8},  {&formats::e4m3, &formats::fp32, 32},
                        {&formats::e5m2, &formats::fp32, 32}, {&formats::fp16, &formats::fp16, 16},
                        {&formats::e4m3, &formats::fp16, 32}, {&formats::e5m2, &formats::fp16, 32}};
  std::size_t files = 0;
  for (int n : {16, 64, 128, 256}) {
    for (const auto& [input, accumulator, k] : pairs) {
      const std::string name = "wgmma.m64n" + std::to_string(n) + "k" + std::to_string(k);
      const Datapath dp = preset("sm90", *input, *accumulator, name);
      EXPECT_EQ(dp, preset("sm90", *input, *accumulator, "wgmma"));
      const auto file =
          std::filesystem::path(TCEMU_H100_SHAPES_DIR) /
          (name + "-" + std::string(input->name) + "-" + std::string(accumulator->name) + ".txt");
      ASSERT_TRUE(std::filesystem::exists(file)) << file;
      const Replay r = replay_file(file, dp, static_cast<std::size_t>(k));
      EXPECT_GE(r.cases, 300u + r.crafted) << file;
      EXPECT_GE(r.crafted, 15u) << file;
      EXPECT_EQ(r.mismatches, 0u) << file << " through " << describe(dp);
      ++files;
    }
  }
  EXPECT_EQ(files, 32u);
}

// sm90 mma.sync.m8n8k4 fp16 -> fp16 (tcemu probe --instr mma.sync.m8n8k4 --type fp16 --acc fp16
// --random 1000000 --keep 3000): every case through the fp32 pair-FMA emulation of its SASS;
// the block model's nearest datapath (the fp32 accumulator's FMA chain, rounded to fp16 after each
// product) misses some, so the cases tell the two apart.
TEST(H100Probe, M8n8k4Fp16AccumulatorReplaysThroughThePairFmaEmulation) {
  const auto file = std::filesystem::path(TCEMU_H100_SHAPES_DIR) / "mma.sync.m8n8k4-fp16-fp16.txt";
  std::ifstream in(file);
  ASSERT_TRUE(in) << "cannot open " << file;
  Datapath chain = preset("sm90", formats::fp16, formats::fp32, "mma.sync.m8n8k4");
  chain.accumulator = formats::fp16;
  chain.block_result_precision = 11;
  chain.nan_bits = 0x7FFF;
  std::size_t cases = 0, crafted = 0, mismatches = 0, chain_mismatches = 0;
  std::string text;
  for (std::size_t line = 1; std::getline(in, text); ++line) {
    if (text.starts_with("# crafted: ")) ++crafted;
    const auto c = parse_case_line(text, line, formats::fp16, formats::fp16);
    if (!c) continue;
    ++cases;
    ASSERT_EQ(c->a.size(), 4u);
    const std::uint32_t got = sm90_m8n8k4_fp16_element(c->a, c->b, c->c);
    if (got != *c->d && ++mismatches <= 3) {
      ADD_FAILURE() << file.filename() << ":" << line << ": H100 " << to_hex(formats::fp16, *c->d)
                    << ", emulation " << to_hex(formats::fp16, got);
    }
    if (mma_element(chain, c->a, c->b, c->c) != *c->d) ++chain_mismatches;
  }
  EXPECT_GE(cases, 3000u + crafted);
  EXPECT_GE(crafted, 15u);
  EXPECT_EQ(mismatches, 0u);
  EXPECT_GT(chain_mismatches, 10u);
}

}  // namespace
}  // namespace tcemu
