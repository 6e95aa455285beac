// The binary32 terms and the leading-magnitude reduction of the Ozaki element functions
// (ozaki_elements.hpp) against fp64_bits.hpp's exact routines and the host's IEEE arithmetic.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <tcemu/backend/ozaki_elements.hpp>
#include <tcemu/emulator/fp64_bits.hpp>

namespace tcemu {
namespace {

TEST(OzakiElements, ScaleBinary32IsScaleForEveryBinary32) {
  // The edges of the multiplication's range and of binary32, random binary32 patterns, every e
  // near the range's ends and a sample inside, against fp64::scale bit for bit (NaN as NaN).
  std::vector<std::uint32_t> patterns = {
      0x00000000u, 0x80000000u, 0x00000001u, 0x80000001u, 0x007FFFFFu, 0x00800000u, 0x3F800000u,
      0xBF800001u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0x7F800001u};
  std::mt19937 rng(5);
  for (int i = 0; i < 2000; ++i) patterns.push_back(static_cast<std::uint32_t>(rng()));
  std::vector<std::int64_t> shifts;
  for (std::int64_t e = -1200; e <= 1200; e += 37) shifts.push_back(e);
  for (std::int64_t e : {-875, -874, -873, -872, 895, 896, 897, 898, -3000, 3000}) {
    shifts.push_back(e);
  }
  for (const std::uint32_t f : patterns) {
    const double p = fp64::widen(f);
    for (const std::int64_t e : shifts) {
      const double fast = ozaki_elements::scale_binary32(p, e), exact = fp64::scale(p, e);
      if (std::isnan(exact)) {
        EXPECT_TRUE(std::isnan(fast)) << std::hex << f << std::dec << " e " << e;
      } else {
        EXPECT_EQ(fp64::bits(fast), fp64::bits(exact)) << std::hex << f << std::dec << " e " << e;
      }
    }
  }
}

// The fused term of the GPU's summation equals the scaled term added by one RN addition, on
// every shift where the scaling is exact, binary32 edge values and random patterns, and sums of
// every size around the term's, cancelling ones included.
TEST(OzakiElements, ExactBinary32TermIsTheRoundedAddition) {
  std::vector<std::uint32_t> patterns = {0x00000000u, 0x80000000u, 0x00000001u, 0x807FFFFFu,
                                         0x00800000u, 0x3F800000u, 0xBF800001u, 0x7F7FFFFFu,
                                         0x4B7FFFFFu, 0x7F800000u, 0xFF800000u};
  std::mt19937 rng(6);
  for (int i = 0; i < 300; ++i) {
    const std::uint32_t f = static_cast<std::uint32_t>(rng());
    if (((f >> 23) & 0xFF) != 0xFF) patterns.push_back(f);  // NaNs: only the payload differs
  }
  std::vector<std::int32_t> shifts = {-873, -872, -500, -149, -24, -1, 0, 1, 24, 500, 895, 896};
  for (std::int32_t e = -873; e <= 896; e += 61) shifts.push_back(e);
  EXPECT_FALSE(ozaki_elements::binary32_scaling_is_exact(-874));
  EXPECT_FALSE(ozaki_elements::binary32_scaling_is_exact(897));
  std::uniform_int_distribution<int> offset(-60, 60);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (const std::uint32_t f : patterns) {
    const double p = fp64::widen(f);
    for (const std::int32_t e : shifts) {
      ASSERT_TRUE(ozaki_elements::binary32_scaling_is_exact(e));
      const double t = fp64::scale(p, e);
      for (int r = 0; r < 8; ++r) {
        // r = 0: -0 (an overwrite); r = 1: -t (exact cancellation); otherwise t's size times
        // 2^offset, with random significand bits. An infinite t takes the largest finite size:
        // ilogb(Inf) is INT_MAX, and INT_MAX + offset overflowed (undefined; issue 18).
        const double size = t == 0 ? 1.0 : std::isinf(t) ? std::numeric_limits<double>::max() : t;
        const double dst =
            r == 0   ? -0.0
            : r == 1 ? -t
                     : std::ldexp(unit(rng), std::max(-1074, std::ilogb(size) + offset(rng)));
        if (std::isinf(t) && std::isinf(dst)) continue;
        const double fused =
            ozaki_elements::accumulate_exact_binary32_term(dst, p, fp64::power_of_two(e));
        const double added = ozaki_elements::accumulate_binary32_term(dst, p, e);
        EXPECT_EQ(fp64::bits(fused), fp64::bits(added))
            << std::hex << f << std::dec << " e " << e << " dst " << dst;
      }
    }
  }
}

// LeadingMagnitude is the largest finite magnitude (all of its bits: Algorithm 1's tau =
// ceil(log2 mu) depends on whether mu is a power of two), alone and as the largest value() of
// several bounds, on vectors of normals, of subnormals with bits in the high or only in the low
// word, and of zeros.
TEST(OzakiElements, LeadingMagnitudeIsTheLargestMagnitude) {
  std::mt19937_64 rng(7);
  const auto random_value = [&](int kind) {
    const std::uint64_t sign = (rng() & 1) << 63, fraction = rng() & ((std::uint64_t{1} << 52) - 1);
    switch (kind) {
      case 0:  // normal
        return fp64::value(sign | ((1 + rng() % 2046) << 52) | fraction);
      case 1:  // subnormal, any fraction
        return fp64::value(sign | fraction);
      case 2:  // subnormal below 2^-1042: only low-word bits
        return fp64::value(sign | (fraction >> (20 + rng() % 32)));
      default:
        return rng() % 2 ? 0.0 : -0.0;
    }
  };
  const auto check = [](const std::vector<double>& values, std::uint64_t bound) {
    std::uint64_t largest = 0;
    for (const double v : values)
      largest = std::max(largest, fp64::finite_magnitude(fp64::bits(v)));
    EXPECT_EQ(bound, largest);
  };
  for (int trial = 0; trial < 4000; ++trial) {
    // A mix of up to two kinds, split between two bounds.
    const int kind_a = static_cast<int>(rng() % 4), kind_b = static_cast<int>(rng() % 4);
    std::vector<double> values;
    ozaki_elements::LeadingMagnitude first, second;
    const int count = 1 + static_cast<int>(rng() % 20);
    for (int i = 0; i < count; ++i) {
      values.push_back(random_value(rng() % 2 ? kind_a : kind_b));
      (i % 2 ? second : first).add(values.back());
    }
    ozaki_elements::LeadingMagnitude whole;
    for (const double v : values) whole.add(v);
    check(values, whole.value());
    check(values, std::max(first.value(), second.value()));
  }
}

// ceil_log2_magnitude is ceil(log2 mu) (Algorithm 1's tau), from the bits: the leading exponent
// for powers of two, one more for everything else, normal or subnormal.
TEST(OzakiElements, CeilLog2MagnitudeIsTauOfAlgorithm1) {
  const auto tau = [](double mu) { return ozaki_elements::ceil_log2_magnitude(fp64::bits(mu)); };
  EXPECT_EQ(tau(1.0), 0);
  EXPECT_EQ(tau(0x1.0000000000001p0), 1);
  EXPECT_EQ(tau(0x1.fffffffffffffp-1), 0);
  EXPECT_EQ(tau(0x1p1023), 1023);
  EXPECT_EQ(tau(0x1.8p1023), 1024);
  EXPECT_EQ(tau(0x1p-1022), -1022);
  EXPECT_EQ(tau(0x1p-1074), -1074);
  EXPECT_EQ(tau(0x1p-1060), -1060);
  EXPECT_EQ(tau(0x3p-1074), -1072);
  EXPECT_EQ(tau(0x1.8p-1030), -1029);
  // Against the definition on random normals and subnormals, and their powers of two.
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 20000; ++trial) {
    const std::uint64_t b = rng() >> (1 + rng() % 12);
    const std::uint64_t mu = trial % 2 ? b : b & ~fp64::kFractionMask;
    if (mu == 0 || !fp64::is_finite(mu)) continue;
    const int e = fp64::leading_exponent(mu);
    const bool power = fp64::value(mu) == std::ldexp(1.0, e);
    EXPECT_EQ(ozaki_elements::ceil_log2_magnitude(mu), power ? e : e + 1) << std::hex << mu;
  }
}

}  // namespace
}  // namespace tcemu
