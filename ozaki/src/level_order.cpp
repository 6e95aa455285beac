#include <tcemu/ozaki/level_order.hpp>

#include <algorithm>

namespace tcemu::ozaki {

PairRule pair_rule(const Options& options) {
  switch (options.mode) {
    case Mode::dp:
    case Mode::sp:
      return {.d = options.max_splits, .fast = true};
    case Mode::cr:
      return {.d = options.max_splits, .fast = false};
    case Mode::tunable:
      return {.d = options.splits, .fast = options.fast};
  }
  return {};
}

std::vector<std::vector<SlicePair>> product_levels(int slices_a, int slices_b, PairRule rule) {
  const int last = rule.fast ? std::min(slices_a + slices_b, rule.d + 1) : slices_a + slices_b;
  std::vector<std::vector<SlicePair>> levels;
  for (int level = 2; level <= last; ++level) {
    std::vector<SlicePair>& pairs = levels.emplace_back();
    for (int p = std::max(1, level - slices_b); p <= std::min(level - 1, slices_a); ++p) {
      pairs.push_back({.p = p, .q = level - p});
    }
  }
  return levels;
}

}  // namespace tcemu::ozaki
