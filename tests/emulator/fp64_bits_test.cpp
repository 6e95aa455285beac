// The binary64 routines that the Ozaki steps share between host and device (fp64_bits.hpp)
// against the host's IEEE arithmetic: scale is scalbn (one rounding, subnormals and overflow
// included), widen is the C++ float-to-double conversion (NaN payloads included), narrow_bits the
// double-to-float one with the canonical NaN.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <random>
#include <utility>
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

// The host's own conversion of x to binary32 in the C rounding mode `mode` (set and restored
// here; volatile keeps the compiler from converting at compile time).
std::uint32_t host_narrow(long double x, int mode) {
  const int saved = std::fegetround();
  std::fesetround(mode);
  volatile long double in = x;
  volatile float out = static_cast<float>(in);
  std::fesetround(saved);
  return std::bit_cast<std::uint32_t>(static_cast<float>(out));
}

constexpr std::pair<fp64::Direction, int> kModes[] = {
    {fp64::Direction::nearest_even, FE_TONEAREST},
    {fp64::Direction::upward, FE_UPWARD},
    {fp64::Direction::downward, FE_DOWNWARD},
    {fp64::Direction::toward_zero, FE_TOWARDZERO}};

TEST(Fp64Bits, NarrowInADirectionIsTheHostsConversionInThatMode) {
  std::mt19937_64 rng(4);
  for (int i = 0; i < 400000; ++i) {
    const double x = std::bit_cast<double>(rng());
    for (const auto& [d, mode] : kModes) {
      const std::uint32_t want = std::isnan(x) ? fp64::kCanonicalNan32 : host_narrow(x, mode);
      ASSERT_EQ(fp64::narrow_bits(x, d), want) << std::hexfloat << x << " " << mode;
    }
  }
}

TEST(Fp64Bits, RoundToOddTruncatesAndSetsTheLastBitWhenInexact) {
  const auto ro = [](bool negative, std::uint64_t s, int lsb, bool sticky = false) {
    return fp64::round(negative, {s, lsb, sticky}, fp64::Direction::to_odd);
  };
  const double max = std::numeric_limits<double>::max();
  EXPECT_EQ(ro(false, 3, 0), 3.0);                                         // exact
  EXPECT_EQ(ro(false, (std::uint64_t{1} << 63) + 1, 0), 0x1p63 + 0x1p11);  // even kept bits
  EXPECT_EQ(ro(true, (std::uint64_t{1} << 63) + 1, 0), -(0x1p63 + 0x1p11));
  EXPECT_EQ(ro(false, ((std::uint64_t{1} << 53) - 1) << 11 | 1, 0),  // already odd: no carry
            0x1p64 - 0x1p11);
  EXPECT_EQ(ro(false, std::uint64_t{1} << 60, 0, true), 0x1p60 + 0x1p8);  // the sticky alone
  EXPECT_EQ(ro(false, 1, -1100), 0x1p-1074);  // below the subnormals: the least one, not 0
  EXPECT_EQ(ro(true, 1, -1100), -0x1p-1074);
  EXPECT_EQ(ro(false, 4, -1076), 0x1p-1074);    // exact on the subnormal grid
  EXPECT_EQ(ro(false, 5, -1076), 0x1p-1074);    // 1.25 2^-1074: kept 1, odd already
  EXPECT_EQ(ro(false, 9, -1076), 0x1.8p-1073);  // 2.25 2^-1074: kept 2, made 3
  EXPECT_EQ(ro(false, 1, 1024), max);           // overflow: the largest finite of the sign
  EXPECT_EQ(ro(true, 3, 1100), -max);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(ro(true, 0, 0)), fp64::kSignBit);
}

// Boldo and Melquiond's theorem as fp64_bits.hpp states it: narrow_bits(RO_53(x), d) is x
// rounded once to binary32 in direction d, for 64-bit x (the host's long double holds them
// exactly) whose low bits sit just above, at and below binary32's midpoints and grid points, in
// binary32's normal and subnormal ranges, below binary64's normal range and beyond both ranges.
TEST(Fp64Bits, RoundToOddThenNarrowIsOneRoundingToBinary32) {
  if (std::numeric_limits<long double>::digits < 64) GTEST_SKIP() << "long double too narrow";
  std::mt19937_64 rng(5);
  const std::uint64_t tails[] = {0,
                                 1,
                                 (std::uint64_t{1} << 39) - 1,
                                 std::uint64_t{1} << 38,
                                 (std::uint64_t{1} << 38) + 1,
                                 (std::uint64_t{1} << 38) - 1,
                                 std::uint64_t{1} << 10};
  const int leads[][2] = {{-8, 8},        {-160, -118}, {-1110, -1015},
                          {-1250, -1150}, {120, 130},   {1015, 1030}};
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t s = ((rng() | (std::uint64_t{1} << 63)) & ~((std::uint64_t{1} << 39) - 1)) |
                            tails[rng() % std::size(tails)];
    const auto& range = leads[rng() % std::size(leads)];
    const int lead =
        range[0] + static_cast<int>(rng() % static_cast<std::uint64_t>(range[1] - range[0]));
    const bool negative = (rng() & 1) != 0;
    const long double x =
        (negative ? -1.0L : 1.0L) * std::ldexp(static_cast<long double>(s), lead - 63);
    const double odd = fp64::round(negative, {s, lead - 63, false}, fp64::Direction::to_odd);
    for (const auto& [d, mode] : kModes) {
      ASSERT_EQ(fp64::narrow_bits(odd, d), host_narrow(x, mode))
          << std::hex << s << " 2^" << std::dec << lead - 63 << " mode " << mode;
    }
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
