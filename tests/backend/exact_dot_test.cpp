// The correctly rounded inner product (exact_dot.hpp, long_accumulator.hpp) against the MPFR
// oracle (reference/exact_gemm.hpp), bit for bit, on random and adversarial vectors, and the
// fast oracle built on it (reference/accumulator_gemm.hpp) against MPFR.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <tcemu/backend/exact_dot.hpp>
#include <tcemu/reference/accumulator_gemm.hpp>
#include <tcemu/reference/exact_gemm.hpp>

#include <tcemu/test/accurate_support.hpp>

namespace {

using namespace tcemu;
using accurate::testing::bits;
using accurate::testing::hex;

double exact_dot(const std::vector<double>& x, const std::vector<double>& y) {
  ExactDot<double> e;
  for (std::size_t i = 0; i < x.size(); ++i) e.add(x[i], y[i]);
  return e.result();
}

float exact_dot_fp32(const std::vector<double>& x, const std::vector<double>& y) {
  ExactDot<float> e;
  for (std::size_t i = 0; i < x.size(); ++i) {
    e.add(static_cast<float>(x[i]), static_cast<float>(y[i]));
  }
  return e.result();
}

double mpfr_dot(const std::vector<double>& x, const std::vector<double>& y, bool fp32 = false) {
  return reference::correctly_rounded_gemm(1, 1, static_cast<std::int64_t>(x.size()), x, y, fp32,
                                           1)[0];
}

// Random binary64 numbers with exponents anywhere in [lo, hi], either sign, subnormals included
// when lo < -1022.
std::vector<double> wide_vector(std::size_t n, int lo, int hi, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> exponent(lo, hi);
  std::uniform_int_distribution<std::uint64_t> fraction(0, (std::uint64_t{1} << 52) - 1);
  std::vector<double> x(n);
  for (double& v : x) {
    v = std::ldexp(1.0 + std::ldexp(static_cast<double>(fraction(rng)), -52), exponent(rng));
    if (rng() & 1) v = -v;
  }
  return x;
}

TEST(ExactDot, MatchesMpfrOnRandomVectorsOfEveryExponentRange) {
  std::mt19937_64 rng(7);
  struct Range {
    int lo, hi;
  };
  // Products from the subnormal range (below 2^-969: the exact integer path), through ordinary
  // numbers, to products that overflow binary64 (the exact path again).
  for (const Range r : {Range{-30, 30}, Range{-600, 600}, Range{-1074, -480}, Range{500, 1023},
                        Range{-1074, 1023}}) {
    for (std::size_t n : {1u, 2u, 7u, 100u, 1000u}) {
      for (int trial = 0; trial < 20; ++trial) {
        const auto x = wide_vector(n, r.lo, r.hi, rng), y = wide_vector(n, r.lo, r.hi, rng);
        const double want = mpfr_dot(x, y);
        ASSERT_EQ(bits(exact_dot(x, y)), bits(want))
            << "range [" << r.lo << ", " << r.hi << "], n " << n << ": want " << hex(want);
      }
    }
  }
}

TEST(ExactDot, CancellationDownToTheLastBit) {
  // x'y = 2^-1074 exactly after the huge terms cancel: 1e300 * 1e300 overflows binary64, and
  // the two opposite overflowing products must cancel exactly.
  const std::vector<double> x = {1e300, 3.0, -1e300, 0x1p-1074, -3.0};
  const std::vector<double> y = {1e300, 0x1p-60, 1e300, 1.0, 0x1p-60};
  EXPECT_EQ(bits(exact_dot(x, y)), bits(0x1p-1074));
  EXPECT_EQ(bits(exact_dot(x, y)), bits(mpfr_dot(x, y)));
  // Sums of tiny products below the subnormal grid that add up to representable numbers.
  std::vector<double> tiny(1 << 12, 0x1p-600), other(1 << 12, 0x1p-480);  // each 2^-1080
  EXPECT_EQ(bits(exact_dot(tiny, other)), bits(0x1p-1068));
  // A tie between two binary64 numbers is broken to even only by the sticky bits far below.
  const std::vector<double> tie = {1.0, 0x1p-53, 0x1p-1000};
  const std::vector<double> ones = {1.0, 1.0, 0x1p-60};
  EXPECT_EQ(bits(exact_dot(tie, ones)), bits(1.0 + 0x1p-52));
  EXPECT_EQ(bits(exact_dot(tie, ones)), bits(mpfr_dot(tie, ones)));
}

TEST(ExactDot, OverflowOfTheRoundedResultGivesInfAndZeroIsPlus) {
  const double big = std::numeric_limits<double>::max();
  EXPECT_EQ(exact_dot({big, big}, {1.0, 1.0}), std::numeric_limits<double>::infinity());
  EXPECT_EQ(exact_dot({-big, -big}, {1.0, 1.0}), -std::numeric_limits<double>::infinity());
  // max + half an ulp of max rounds to even: Inf (the next binade's first number is 2^1024).
  EXPECT_EQ(exact_dot({big, 0x1p970}, {1.0, 1.0}), std::numeric_limits<double>::infinity());
  EXPECT_EQ(bits(exact_dot({big, 0x1p969}, {1.0, 1.0})), bits(big));
  EXPECT_EQ(bits(exact_dot({-0.0, 1.0, -1.0}, {1.0, 1.0, 1.0})), bits(0.0));
  EXPECT_EQ(bits(exact_dot({-0.0}, {1.0})), bits(0.0));
}

TEST(ExactDot, NanAndInfPropagateAsInBlas) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(exact_dot({inf, 1.0}, {2.0, 1e300}), inf);
  EXPECT_EQ(exact_dot({inf, 1.0}, {-2.0, 1e300}), -inf);
  EXPECT_EQ(bits(exact_dot({inf, inf}, {1.0, -1.0})), 0x7FF8000000000000u);
  EXPECT_EQ(bits(exact_dot({inf, 1.0}, {0.0, 1.0})), 0x7FF8000000000000u);
  EXPECT_EQ(bits(exact_dot({nan, 1.0}, {0.0, 1.0})), 0x7FF8000000000000u);
  EXPECT_EQ(bits(exact_dot({1.0, 2.0}, {nan, 1.0})), 0x7FF8000000000000u);
  const float finf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(exact_dot_fp32({finf, 1.0}, {2.0, 1.0}), finf);
}

TEST(ExactDot, Fp32MatchesMpfrWithoutDoubleRounding) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<double> x = accurate::testing::as_fp32_values(wide_vector(50, -70, 60, rng));
    std::vector<double> y = accurate::testing::as_fp32_values(wide_vector(50, -70, 60, rng));
    ASSERT_EQ(bits(exact_dot_fp32(x, y)), bits(mpfr_dot(x, y, true))) << "trial " << trial;
  }
  // 1 + 2^-24 + 2^-60: rounding to binary64 first (1 + 2^-24) and then to binary32 would tie
  // and give 1; the correctly rounded binary32 result is 1 + 2^-23.
  const std::vector<double> x = {1.0, 0x1p-24, 0x1p-30}, y = {1.0, 1.0, 0x1p-30};
  EXPECT_EQ(exact_dot_fp32(x, y), 1.0f + 0x1p-23f);
}

TEST(ExactDot, MergingPartialSumsIsExact) {
  std::mt19937_64 rng(5);
  const auto x = wide_vector(999, -1074, 1023, rng), y = wide_vector(999, -1074, 1023, rng);
  ExactDot<double> parts[3];
  for (std::size_t i = 0; i < x.size(); ++i) parts[i % 3].add(x[i], y[i]);
  parts[2].add(parts[0]);
  parts[2].add(parts[1]);
  EXPECT_EQ(bits(parts[2].result()), bits(mpfr_dot(x, y)));
}

TEST(AccumulatorOracle, AgreesWithMpfrBitForBit) {
  for (double phi : {0.5, 4.0, 12.0}) {
    const std::int64_t m = 23, n = 19, k = 301;
    const auto a = accurate::testing::phi_vector(m * k, phi, 1);
    const auto b = accurate::testing::phi_vector(k * n, phi, 2);
    const auto fast = reference::accumulator_gemm(m, n, k, a, b);
    const auto mpfr = reference::correctly_rounded_gemm(m, n, k, a, b);
    ASSERT_TRUE(accurate::testing::same_product_bits(mpfr, fast, m, n, k, a, b)) << "phi " << phi;
    const auto a32 = accurate::testing::as_fp32_values(a),
               b32 = accurate::testing::as_fp32_values(b);
    const auto fast32 = reference::accumulator_gemm(m, n, k, a32, b32, true);
    const auto mpfr32 = reference::correctly_rounded_gemm(m, n, k, a32, b32, true);
    ASSERT_TRUE(accurate::testing::same_product_bits(mpfr32, fast32, m, n, k, a32, b32))
        << "fp32, phi " << phi;
  }
}

}  // namespace
