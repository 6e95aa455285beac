// The long accumulator (long_accumulator.hpp) in both of its ranges and storages: the short range
// (binary64 terms, Backend::exact_sum) and the wide one (exact products too, exact_dot.hpp) round
// every sum of binary64 numbers to the same bits for every scale; limbs kept elsewhere
// (StridedLimbs) change nothing; a single term comes back as fp64::scale gives it, whatever the
// limb its lowest bit falls in (the magnitude of a negative value is negated limb by limb on the
// fly); merging accumulators, directly or column by column, is exact.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <tcemu/backend/long_accumulator.hpp>
#include <tcemu/emulator/fp64_bits.hpp>

namespace tcemu {
namespace {

std::uint64_t bits(double x) {
  return std::bit_cast<std::uint64_t>(x);
}

// A finite binary64 of any exponent (subnormals and the largest binades included), either sign.
double any_finite(std::mt19937_64& rng) {
  for (;;) {
    const double x = std::bit_cast<double>(rng());
    if (std::isfinite(x)) return x;
  }
}

TEST(LongAccumulator, BothRangesAndStoragesRoundEverySumAlike) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int> count(1, 40);
  std::uniform_int_distribution<int> exponent(-1074, 1023);
  std::uniform_int_distribution<std::int64_t> shift(-2300, 2300);
  // StridedLimbs over a host array: limb l at [3 l].
  std::vector<std::uint64_t> column(Binary64Accumulator<>::kLimbs * 3);
  for (int trial = 0; trial < 20000; ++trial) {
    LongAccumulator wide, wide_negated;
    Binary64Accumulator<> narrow;
    Binary64Accumulator<StridedLimbs> strided(StridedLimbs{column.data(), 3});
    const int n = count(rng);
    // Half the trials: terms of one magnitude class that cancel, so the sums land anywhere.
    const int near = exponent(rng);
    for (int t = 0; t < n; ++t) {
      double x = any_finite(rng);
      if (trial % 2 == 0) x = std::ldexp(std::ldexp(x, -std::ilogb(x == 0 ? 1.0 : x)), near);
      if (!std::isfinite(x)) x = std::numeric_limits<double>::max();
      wide.add(x);
      wide_negated.add(-x);
      narrow.add(x);
      strided.add(x);
    }
    const std::int64_t s = trial % 3 == 0 ? shift(rng) : 0;
    const double want = wide.round_to_double(s);
    ASSERT_EQ(bits(narrow.round_to_double(s)), bits(want)) << "trial " << trial;
    ASSERT_EQ(bits(strided.round_to_double(s)), bits(want)) << "trial " << trial;
    // The negated terms give the negated sum (an exact zero is +0 both ways).
    const double negated = wide_negated.round_to_double(s);
    ASSERT_EQ(bits(negated),
              want == 0.0 && wide.magnitude().significand == 0 ? 0u : bits(want) ^ fp64::kSignBit)
        << "trial " << trial;
    ASSERT_EQ(std::bit_cast<std::uint32_t>(narrow.round_to_float()),
              std::bit_cast<std::uint32_t>(wide.round_to_float()));
  }
}

TEST(LongAccumulator, ASingleTermIsScaledExactlyOrRoundedOnce) {
  // Every bit position of the binary64 range, both signs: the term's lowest set bit, and so the
  // lowest nonzero limb of a negative value, falls in every limb.
  for (int e = -1074; e <= 1023; ++e) {
    for (const double m : {1.0, 1.5, 1.9999999999999998}) {
      const double x = std::ldexp(m, e);
      if (x == 0.0 || !std::isfinite(x)) continue;
      for (const double term : {x, -x}) {
        Binary64Accumulator<> narrow;
        LongAccumulator wide;
        narrow.add(term);
        wide.add(term);
        for (const std::int64_t s : {std::int64_t{0}, std::int64_t{-60}, std::int64_t{1100},
                                     std::int64_t{-1} << 40, std::int64_t{1} << 40}) {
          const double want = fp64::scale(term, s);
          ASSERT_EQ(bits(narrow.round_to_double(s)), bits(want)) << term << " * 2^" << s;
          ASSERT_EQ(bits(wide.round_to_double(s)), bits(want)) << term << " * 2^" << s;
        }
      }
    }
  }
}

TEST(LongAccumulator, MergingIsExactDirectlyAndColumnByColumn) {
  std::mt19937_64 rng(12);
  constexpr int kParts = 5;
  constexpr int kLimbs = LongAccumulator::kLimbs;
  for (int trial = 0; trial < 200; ++trial) {
    LongAccumulator all, merged;
    std::vector<LongAccumulator> parts(kParts);
    for (int t = 0; t < 60; ++t) {
      const double x = any_finite(rng), y = any_finite(rng);
      all.add_product(x, y);
      parts[static_cast<std::size_t>(t % kParts)].add_product(x, y);
    }
    std::uint64_t low[kLimbs] = {}, high[kLimbs] = {};
    for (const LongAccumulator& p : parts) {
      merged.add(p);
      for (int i = 0; i < kLimbs; ++i) {
        low[i] += p.limb(i);
        high[i] += static_cast<std::uint64_t>(low[i] < p.limb(i));
      }
    }
    const LongAccumulator columns = LongAccumulator::from_limb_sums(low, high);
    for (int i = 0; i < kLimbs; ++i) {
      ASSERT_EQ(merged.limb(i), all.limb(i)) << "trial " << trial << ", limb " << i;
      ASSERT_EQ(columns.limb(i), all.limb(i)) << "trial " << trial << ", limb " << i;
    }
  }
}

}  // namespace
}  // namespace tcemu
