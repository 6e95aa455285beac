// The order of the slice products (level_order.hpp): which pairs each mode takes and in what
// order, the order run_scheme and `tcemu explain` both follow.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include <tcemu/ozaki/level_order.hpp>

namespace tcemu::ozaki {
namespace {

using Levels = std::vector<std::vector<std::pair<int, int>>>;

Levels pairs(int slices_a, int slices_b, PairRule rule) {
  Levels out;
  for (const std::vector<SlicePair>& level : product_levels(slices_a, slices_b, rule)) {
    auto& pairs_of_level = out.emplace_back();
    for (const SlicePair pair : level) pairs_of_level.emplace_back(pair.p, pair.q);
  }
  return out;
}

TEST(LevelOrder, PairRuleOfEachMode) {
  const PairRule dp = pair_rule({.mode = Mode::dp, .max_splits = 7});
  EXPECT_EQ(dp.d, 7);
  EXPECT_TRUE(dp.fast);
  const PairRule sp = pair_rule({.mode = Mode::sp, .max_splits = 5});
  EXPECT_EQ(sp.d, 5);
  EXPECT_TRUE(sp.fast);
  const PairRule cr = pair_rule({.mode = Mode::cr, .max_splits = 9});
  EXPECT_EQ(cr.d, 9);
  EXPECT_FALSE(cr.fast);
  const PairRule off = pair_rule({.mode = Mode::tunable, .splits = 3, .fast = false});
  EXPECT_EQ(off.d, 3);
  EXPECT_FALSE(off.fast);
  const PairRule on = pair_rule({.mode = Mode::tunable, .splits = 4, .fast = true});
  EXPECT_EQ(on.d, 4);
  EXPECT_TRUE(on.fast);
}

// Fast mode with d = 3: the levels p + q <= 4, d (d + 1) / 2 = 6 products, p ascending.
TEST(LevelOrder, FastModeStopsAtLevelDPlusOne) {
  EXPECT_EQ(pairs(3, 3, {.d = 3, .fast = true}),
            (Levels{{{1, 1}}, {{1, 2}, {2, 1}}, {{1, 3}, {2, 2}, {3, 1}}}));
}

// Every pair of 3 slices of A and 2 of B, level by level: levels 2 to 5.
TEST(LevelOrder, EveryPairWithoutFastMode) {
  EXPECT_EQ(pairs(3, 2, {.d = 3, .fast = false}),
            (Levels{{{1, 1}}, {{1, 2}, {2, 1}}, {{2, 2}, {3, 1}}, {{3, 2}}}));
}

// Fast mode never goes past the last level of the slices there are.
TEST(LevelOrder, FastModeWithFewerSlicesThanD) {
  EXPECT_EQ(pairs(1, 2, {.d = 6, .fast = true}), (Levels{{{1, 1}}, {{1, 2}}}));
}

// No slices of A: levels 2 to 0 + 2 are there, without pairs.
TEST(LevelOrder, NoSlices) {
  EXPECT_EQ(pairs(0, 2, {.d = 2, .fast = false}), Levels(1));
  EXPECT_TRUE(pairs(0, 0, {.d = 2, .fast = false}).empty());
}

}  // namespace
}  // namespace tcemu::ozaki
