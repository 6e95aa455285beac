// The binary64 routines that the Ozaki steps share between host and device (fp64_bits.hpp)
// against the host's IEEE arithmetic: scale is scalbn (one rounding, subnormals and overflow
// included), widen is the C++ float-to-double conversion (NaN payloads included), narrow_bits the
// double-to-float one with the canonical NaN.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <tcemu/emulator/fp64_bits.hpp>
#include <tcemu/emulator/ozaki_elements.hpp>

namespace tcemu {
namespace {

TEST(Fp64Bits, ScaleIsScalbnForEveryKindOfInput) {
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<int> exponent(-2300, 2300);
  std::size_t checked = 0;
  for (int i = 0; i < 400000; ++i) {
    // Random bit patterns cover every field; a third are subnormal, to test rounding there.
    std::uint64_t bits = rng();
    if (i % 3 == 0) bits &= ~fp64::kExponentMask;
    const double x = std::bit_cast<double>(bits);
    // Exponents that put x near the subnormal boundary are the interesting ones.
    const int lead = std::isfinite(x) && x != 0.0 ? std::ilogb(x) : 0;
    const int e = i % 2 == 0 ? exponent(rng) : -1074 - lead + static_cast<int>(rng() % 60) - 30;
    const double want = std::scalbn(x, e);
    const double got = fp64::scale(x, e);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got));
    } else {
      ASSERT_EQ(std::bit_cast<std::uint64_t>(got), std::bit_cast<std::uint64_t>(want))
          << std::hexfloat << x << " * 2^" << e;
    }
    ++checked;
  }
  // Ties on the subnormal grid round to even: 3 * 2^-1076 = 0.75 ulp -> 1 ulp; 2^-1075 -> 0.
  EXPECT_EQ(fp64::scale(3.0, -1076), std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(std::bit_cast<std::uint64_t>(fp64::scale(1.0, -1075)), 0u);
  EXPECT_EQ(fp64::scale(1.5, -1074), 2 * std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(fp64::scale(1.0, std::int64_t{1} << 40), INFINITY);
  EXPECT_EQ(checked, 400000u);
}

TEST(Fp64Bits, WidenIsTheFloatToDoubleConversion) {
  std::mt19937_64 rng(2);
  for (int i = 0; i < 1000000; ++i) {
    auto f = static_cast<std::uint32_t>(rng());
    if (i % 4 == 0) f &= 0x807FFFFFu;  // subnormals and zeros
    if (i % 4 == 1) f |= 0x7F800000u;  // Inf and NaN, quiet and signalling
    const double want = static_cast<double>(std::bit_cast<float>(f));
    ASSERT_EQ(std::bit_cast<std::uint64_t>(fp64::widen(f)), std::bit_cast<std::uint64_t>(want))
        << std::hex << f;
  }
}

TEST(Fp64Bits, NarrowRoundsToNearestEvenWithTheCanonicalNan) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 1000000; ++i) {
    const double x = std::bit_cast<double>(rng());
    const std::uint32_t want =
        std::isnan(x) ? fp64::kCanonicalNan32 : std::bit_cast<std::uint32_t>(static_cast<float>(x));
    ASSERT_EQ(fp64::narrow_bits(x), want) << std::hexfloat << x;
  }
}

TEST(Fp64Bits, LeadingExponentReadsTheFields) {
  EXPECT_EQ(fp64::leading_exponent(fp64::bits(1.0)), 0);
  EXPECT_EQ(fp64::leading_exponent(fp64::bits(std::numeric_limits<double>::max())), 1023);
  EXPECT_EQ(fp64::leading_exponent(fp64::bits(std::numeric_limits<double>::denorm_min())), -1074);
  EXPECT_EQ(fp64::leading_exponent(fp64::bits(0x1.8p-1030)), -1030);
  EXPECT_EQ(fp64::finite_magnitude(fp64::bits(-INFINITY)), 0u);
  EXPECT_EQ(fp64::finite_magnitude(fp64::bits(-2.0)), fp64::bits(2.0));
}

TEST(Fp64Bits, ScaleBinary32IsScaleForEveryBinary32) {
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
TEST(Fp64Bits, ExactBinary32TermIsTheRoundedAddition) {
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
        // 2^offset, with random significand bits.
        const double dst =
            r == 0   ? -0.0
            : r == 1 ? -t
                     : std::ldexp(unit(rng),
                                  std::max(-1074, std::ilogb(t == 0 ? 1.0 : t) + offset(rng)));
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

// LeadingMagnitude gives split_level_of what the largest finite magnitude gives it (the leading
// exponent, zero or not), alone and as the largest value() of several bounds, on vectors of
// normals, of subnormals with bits in the high or only in the low word, and of zeros.
TEST(Fp64Bits, LeadingMagnitudeHasTheLargestMagnitudesLeadingExponent) {
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
    ASSERT_EQ(bound == 0, largest == 0);
    if (largest != 0) {
      EXPECT_EQ(fp64::leading_exponent(bound), fp64::leading_exponent(largest));
    }
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

}  // namespace
}  // namespace tcemu
