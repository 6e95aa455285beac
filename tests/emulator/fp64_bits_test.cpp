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

}  // namespace
}  // namespace tcemu
