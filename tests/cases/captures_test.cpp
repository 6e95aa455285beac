// Every capture set recorded on a real GPU replays through its architecture's preset with zero
// mismatches (tests/data/gpu-captures, Khattak and Mikaitis, BSD-2).
#include <gtest/gtest.h>

#include <set>

#include <tcemu/cases/capture_set.hpp>
#include <tcemu/cases/case_file.hpp>
#include <tcemu/emulator/presets.hpp>

namespace tcemu {
namespace {

const std::vector<CaptureSet>& sets() {
  static const std::vector<CaptureSet> loaded = load_capture_sets(TCEMU_CAPTURES_DIR);
  return loaded;
}

TEST(Captures, EveryGpuFormatAndAccumulatorIsPresent) {
  std::set<std::string> names;
  for (const CaptureSet& s : sets()) {
    names.insert(s.gpu + "/" + std::string(s.input.name) + "/" + std::string(s.accumulator.name));
    EXPECT_EQ(s.cases.size(), 5000u) << s.gpu << " " << s.input.name;
  }
  // 8 GPUs; fp16 sets have both accumulators, fp8 sets too except on L40S.
  EXPECT_EQ(names.size(), 48u);
  EXPECT_TRUE(names.contains("V100/fp16/fp16"));
  EXPECT_TRUE(names.contains("H200/e4m3/fp32"));
  EXPECT_TRUE(names.contains("B200/tf32/fp32"));
}

TEST(Captures, ReplayWithZeroMismatches) {
  for (const CaptureSet& s : sets()) {
    const Datapath dp =
        preset(arch_of_gpu(s.gpu), s.input, s.accumulator, instruction_of_capture(s));
    const ReplayResult r = replay(s, dp);
    EXPECT_EQ(r.mismatches, 0u) << s.gpu << " " << s.input.name << " -> " << s.accumulator.name
                                << ": " << describe(dp);
    for (const ReplayMismatch& m : r.first) {
      ADD_FAILURE() << "row " << m.row + 1 << ": GPU " << to_hex(s.accumulator, m.expected)
                    << " emulator " << to_hex(s.accumulator, m.got);
    }
  }
}

// The captures discriminate the alignment width and the block rounding: changing either breaks
// the replay. (They do not discriminate the block size: on these random normal inputs 8- and
// 16-term blocks agree on every H100 case; crafted_features_test.cpp pins the block size.)
TEST(Captures, OneFieldChangedGivesMismatches) {
  for (const CaptureSet& s : sets()) {
    if (s.gpu != "H100" || !(s.input == formats::fp16) || !(s.accumulator == formats::fp32)) {
      continue;
    }
    Datapath dp = preset("sm90", s.input, s.accumulator);
    Datapath fewer_bits = dp;
    fewer_bits.alignment_fraction_bits = 24;
    Datapath round_nearest = dp;
    round_nearest.block_rounding = Rounding::nearest_even;
    EXPECT_GT(replay(s, fewer_bits).mismatches, 100u);
    EXPECT_GT(replay(s, round_nearest).mismatches, 100u);
  }
}

TEST(Captures, MalformedDirectoryIsReported) {
  EXPECT_THROW(load_capture_sets("/nonexistent/captures"), std::runtime_error);
}

}  // namespace
}  // namespace tcemu
