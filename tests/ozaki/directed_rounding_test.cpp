// Directed rounding of the correctly rounded mode (Options::rounding): every scheme in mode cr
// gives, bit for bit, MPFR's exact product rounded upward, downward and toward zero, on inputs
// where those differ from round-to-nearest; downward and upward enclose the exact product; and a
// directed rounding outside mode cr or C := A B is refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/emulator/presets.hpp>
#include <tcemu/host/host_backends.hpp>
#include <tcemu/ozaki/handle.hpp>

#include "ozaki_support.hpp"

namespace tcemu::ozaki {
namespace {

using testing::backend_for;
using testing::cr_schemes;
using testing::CrScheme;
using testing::phi_matrix;
using testing::same_product_bits;

constexpr fp64::Direction kDirected[] = {fp64::Direction::upward, fp64::Direction::downward,
                                         fp64::Direction::toward_zero};

std::vector<double> product(const CrScheme& s, fp64::Direction d, std::int64_t m, std::int64_t n,
                            std::int64_t k, const std::vector<double>& a,
                            const std::vector<double>& b) {
  const auto backend = backend_for(s);
  Handle h(*backend, s.products, {.mode = Mode::cr, .rounding = d});
  std::vector<double> c(static_cast<std::size_t>(m * n), 7.0);
  h.dgemm('N', 'N', m, n, k, 1.0, a.data(), m, b.data(), k, 0.0, c.data(), m);
  return c;
}

// The elements where x and y differ.
std::size_t differing(const std::vector<double>& x, const std::vector<double>& y) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < x.size(); ++i) count += x[i] != y[i];
  return count;
}

TEST(DirectedRounding, EverySchemeGivesMpfrsBitsInEveryDirection) {
  // phi = 2 spreads the inputs over many binades; a subnormal row of A and a huge column of B
  // put results near both ends of the range.
  constexpr std::int64_t m = 13, n = 11, k = 37;
  std::vector<double> a = phi_matrix(m, k, 2.0, 71), b = phi_matrix(k, n, 2.0, 72);
  for (std::int64_t p = 0; p < k; ++p) a[static_cast<std::size_t>(p * m + 1)] *= 0x1p-1060;
  for (std::int64_t p = 0; p < k; ++p) b[static_cast<std::size_t>(p + 2 * k)] *= 0x1p+1000;
  const std::vector<double> nearest = reference::correctly_rounded_gemm(m, n, k, a, b);
  for (const fp64::Direction d : kDirected) {
    const std::vector<double> expected = reference::correctly_rounded_gemm(m, n, k, a, b, d);
    // The inputs make the direction matter: most elements are not binary64 numbers.
    EXPECT_GT(differing(expected, nearest), static_cast<std::size_t>(m * n / 4))
        << rounding_name(d);
    for (const CrScheme& s : cr_schemes()) {
      SCOPED_TRACE(std::string(s.name) + ", " + rounding_name(d));
      EXPECT_TRUE(same_product_bits(expected, product(s, d, m, n, k, a, b), m, n, k, a, b));
    }
  }
}

TEST(DirectedRounding, DownwardAndUpwardEncloseTheExactProduct) {
  constexpr std::int64_t m = 16, n = 9, k = 64;
  const std::vector<double> a = phi_matrix(m, k, 1.0, 81), b = phi_matrix(k, n, 1.0, 82);
  const std::vector<double> nearest = reference::correctly_rounded_gemm(m, n, k, a, b);
  for (const CrScheme& s : cr_schemes()) {
    SCOPED_TRACE(s.name);
    const std::vector<double> lo = product(s, fp64::Direction::downward, m, n, k, a, b);
    const std::vector<double> hi = product(s, fp64::Direction::upward, m, n, k, a, b);
    const std::vector<double> zero = product(s, fp64::Direction::toward_zero, m, n, k, a, b);
    std::size_t strict = 0;
    for (std::size_t i = 0; i < lo.size(); ++i) {
      // The exact value lies in [lo, hi]; its nearest binary64 number is lo or hi; lo and hi
      // are neighbours (or equal, where the product is a binary64 number); toward zero is the
      // one of them of smaller magnitude.
      ASSERT_TRUE(lo[i] <= hi[i]) << i << ": " << lo[i] << " > " << hi[i];
      EXPECT_TRUE(nearest[i] == lo[i] || nearest[i] == hi[i]) << i;
      EXPECT_TRUE(lo[i] == hi[i] || std::nextafter(lo[i], INFINITY) == hi[i]) << i;
      EXPECT_EQ(zero[i], std::fabs(lo[i]) <= std::fabs(hi[i]) ? lo[i] : hi[i]) << i;
      strict += lo[i] < hi[i];
    }
    EXPECT_GT(strict, lo.size() / 2);
  }
}

TEST(DirectedRounding, OverflowGoesToInfOnlyInItsDirection) {
  // Every element of A B is 3 2^1023 = 1.5 2^1024, past the largest finite value: upward (for a
  // positive value) and to nearest give +Inf, downward and toward zero the largest finite value;
  // mirrored for -A.
  constexpr std::int64_t m = 2, n = 2, k = 3;
  const std::vector<double> a(m * k, 0x1p+1023), b(k * n, 1.0);
  std::vector<double> neg_a(a.size(), -0x1p+1023);
  const double max = 0x1.fffffffffffffp+1023;
  for (const CrScheme& s : cr_schemes()) {
    SCOPED_TRACE(s.name);
    EXPECT_EQ(product(s, fp64::Direction::nearest_even, m, n, k, a, b)[0], INFINITY);
    EXPECT_EQ(product(s, fp64::Direction::upward, m, n, k, a, b)[0], INFINITY);
    EXPECT_EQ(product(s, fp64::Direction::downward, m, n, k, a, b)[0], max);
    EXPECT_EQ(product(s, fp64::Direction::toward_zero, m, n, k, a, b)[0], max);
    EXPECT_EQ(product(s, fp64::Direction::upward, m, n, k, neg_a, b)[0], -max);
    EXPECT_EQ(product(s, fp64::Direction::downward, m, n, k, neg_a, b)[0], -INFINITY);
    EXPECT_EQ(product(s, fp64::Direction::nearest_even, m, n, k, neg_a, b)[0], -INFINITY);
  }
}

TEST(DirectedRounding, RefusedOutsideCrAndOutsideCEqualsAB) {
  const auto backend = host::make_emulator_backend(1);
  EXPECT_THROW(
      Handle(*backend, CrtProducts{}, {.mode = Mode::dp, .rounding = fp64::Direction::upward}),
      std::invalid_argument);
  Handle h(*backend, CrtProducts{}, {.mode = Mode::cr, .rounding = fp64::Direction::downward});
  const std::vector<double> a(4, 1.0), b(4, 1.0);
  std::vector<double> c(4, 0.0);
  try {
    h.dgemm('N', 'N', 2, 2, 2, 2.0, a.data(), 2, b.data(), 2, 0.0, c.data(), 2);
    ADD_FAILURE() << "alpha = 2 was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("alpha = 1, beta = 0"), std::string::npos) << e.what();
  }
  EXPECT_THROW(h.dgemm('N', 'N', 2, 2, 2, 1.0, a.data(), 2, b.data(), 2, 1.0, c.data(), 2),
               std::invalid_argument);
  h.dgemm('N', 'N', 2, 2, 2, 1.0, a.data(), 2, b.data(), 2, 0.0, c.data(), 2);
  EXPECT_EQ(c, std::vector<double>(4, 2.0));
}

TEST(DirectedRounding, NamesRoundTrip) {
  for (const char* name : {"nearest", "upward", "downward", "toward-zero"}) {
    const auto d = rounding_by_name(name);
    ASSERT_TRUE(d.has_value()) << name;
    EXPECT_STREQ(rounding_name(*d), name);
  }
  EXPECT_FALSE(rounding_by_name("up").has_value());
}

}  // namespace
}  // namespace tcemu::ozaki
