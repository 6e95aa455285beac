// Mode cr for binary32 (sgemm, cgemm): every scheme gives, bit for bit, MPFR's exact product
// rounded once to binary32 in each direction, on inputs where rounding first to nearest
// binary64 (what mode sp and the old epilogue did) gives other bits (the test asserts that they
// do, so it would catch a double rounding); each part of cgemm likewise; with alpha and beta
// other than (1, 0), cr to nearest is the binary64 epilogue on the correctly rounded binary64
// product, rounded to nearest binary32; and a directed rounding with them is refused.
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <tcemu/emulator/presets.hpp>
#include <tcemu/host/host_backends.hpp>
#include <tcemu/ozaki/handle.hpp>
#include <tcemu/test/double_rounding_cases.hpp>

#include "ozaki_support.hpp"

namespace tcemu::ozaki {
namespace {

using testing::backend_for;
using testing::cr_schemes;
using testing::CrScheme;
using testing::expect_invalid_argument;

constexpr fp64::Direction kDirections[] = {fp64::Direction::nearest_even, fp64::Direction::upward,
                                           fp64::Direction::downward, fp64::Direction::toward_zero};

std::vector<float> narrowed(const std::vector<double>& x) {
  return {x.begin(), x.end()};
}
std::vector<double> widened(const std::vector<float>& x) {
  return {x.begin(), x.end()};
}

// The exact product rounded to nearest binary64, then to binary32 in direction d: the double
// rounding that mode cr must not do.
std::vector<double> rounded_twice(std::int64_t m, std::int64_t n, std::int64_t k,
                                  const std::vector<double>& a, const std::vector<double>& b,
                                  fp64::Direction d) {
  std::vector<double> x = reference::correctly_rounded_gemm(m, n, k, a, b);
  for (double& v : x) v = fp64::widen(fp64::narrow_bits(v, d));
  return x;
}

std::size_t differing(const std::vector<double>& x, const std::vector<double>& y) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < x.size(); ++i) count += fp64::bits(x[i]) != fp64::bits(y[i]);
  return count;
}

TEST(SgemmCr, EverySchemeGivesMpfrsBinary32BitsInEveryDirection) {
  const test::DoubleRoundingCases t = test::double_rounding_cases(9, 37);
  const std::vector<float> a = narrowed(t.a), b = narrowed(t.b);
  for (const fp64::Direction d : kDirections) {
    const std::vector<double> expected =
        reference::correctly_rounded_gemm(t.m, t.n, t.k, t.a, t.b, d, true);
    EXPECT_GT(differing(expected, rounded_twice(t.m, t.n, t.k, t.a, t.b, d)), 0u)
        << "the inputs must make a double rounding fail " << rounding_name(d);
    for (const CrScheme& s : cr_schemes()) {
      SCOPED_TRACE(std::string(s.name) + ", " + rounding_name(d));
      const auto backend = backend_for(s);
      Handle h(*backend, s.products, {.mode = Mode::cr, .rounding = d});
      std::vector<float> c(static_cast<std::size_t>(t.m * t.n), 7.0f);
      h.sgemm('N', 'N', t.m, t.n, t.k, 1.0f, a.data(), t.m, b.data(), t.k, 0.0f, c.data(), t.m);
      EXPECT_TRUE(testing::same_product_bits(expected, widened(c), t.m, t.n, t.k, t.a, t.b));
    }
  }
}

TEST(SgemmCr, CgemmGivesEachPartCorrectlyRoundedInEveryDirection) {
  // A = X - i X and B = Y (imaginary parts 0): Re = X Y and Im = -X Y, both the hard cases.
  const test::DoubleRoundingCases t = test::double_rounding_cases(5, 41);
  const std::int64_t m = t.m, n = t.n, k = t.k;
  std::vector<std::complex<float>> a(t.a.size()), b(t.b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = {static_cast<float>(t.a[i]), static_cast<float>(-t.a[i])};
  }
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = {static_cast<float>(t.b[i]), 0.0f};
  // The real form [Ar Ai] (m x 2k) times [[Br Bi]; [-Bi Br]] (2k x 2n).
  std::vector<double> a2(static_cast<std::size_t>(m * 2 * k)),
      b2(static_cast<std::size_t>(4 * k * n));
  for (std::int64_t p = 0; p < k; ++p) {
    for (std::int64_t i = 0; i < m; ++i) {
      a2[p * m + i] = a[p * m + i].real();
      a2[(k + p) * m + i] = a[p * m + i].imag();
    }
    for (std::int64_t j = 0; j < n; ++j) {
      const std::complex<float> v = b[j * k + p];
      b2[j * 2 * k + p] = v.real();
      b2[j * 2 * k + k + p] = -v.imag();
      b2[(n + j) * 2 * k + p] = v.imag();
      b2[(n + j) * 2 * k + k + p] = v.real();
    }
  }
  for (const fp64::Direction d : kDirections) {
    const std::vector<double> expected =
        reference::correctly_rounded_gemm(m, 2 * n, 2 * k, a2, b2, d, true);
    EXPECT_GT(differing(expected, rounded_twice(m, 2 * n, 2 * k, a2, b2, d)), 0u);
    for (const CrScheme& s : cr_schemes()) {
      SCOPED_TRACE(std::string(s.name) + ", " + rounding_name(d));
      const auto backend = backend_for(s);
      Handle h(*backend, s.products, {.mode = Mode::cr, .rounding = d});
      std::vector<std::complex<float>> c(static_cast<std::size_t>(m * n), {7.0f, 7.0f});
      h.cgemm('N', 'N', m, n, k, 1.0f, a.data(), m, b.data(), k, 0.0f, c.data(), m);
      std::vector<double> got(static_cast<std::size_t>(2 * m * n));
      for (std::int64_t j = 0; j < n; ++j) {
        for (std::int64_t i = 0; i < m; ++i) {
          got[j * m + i] = c[j * m + i].real();
          got[(n + j) * m + i] = c[j * m + i].imag();
        }
      }
      EXPECT_TRUE(testing::same_product_bits(expected, got, m, 2 * n, 2 * k, a2, b2));
    }
  }
}

TEST(SgemmCr, AlphaAndBetaApplyInBinary64ToTheCorrectlyRoundedBinary64Product) {
  // cr to nearest with alpha, beta != (1, 0): out = RN_24(RN_53(alpha RN_53(A B)) +
  // RN_53(beta c)), the epilogue of sp on the correctly rounded binary64 product.
  const test::DoubleRoundingCases t = test::double_rounding_cases(6, 43);
  const std::vector<float> a = narrowed(t.a), b = narrowed(t.b);
  const std::vector<double> ab = reference::correctly_rounded_gemm(t.m, t.n, t.k, t.a, t.b);
  const std::vector<float> c0 = narrowed(testing::phi_matrix(t.m, t.n, 1.0, 44));
  const float alpha = 0.75f, beta = -1.5f;
  std::vector<double> expected(ab.size());
  for (std::size_t i = 0; i < ab.size(); ++i) {
    // The host rounds to nearest here (the test sets no mode).
    double r = static_cast<double>(alpha) * ab[i];
    if (r == 0.0) r = 0.0;
    expected[i] = static_cast<float>(r + static_cast<double>(beta) * c0[i]);
  }
  for (const CrScheme& s : cr_schemes()) {
    SCOPED_TRACE(s.name);
    const auto backend = backend_for(s);
    Handle h(*backend, s.products, {.mode = Mode::cr});
    std::vector<float> c = c0;
    h.sgemm('N', 'N', t.m, t.n, t.k, alpha, a.data(), t.m, b.data(), t.k, beta, c.data(), t.m);
    EXPECT_TRUE(testing::same_product_bits(expected, widened(c), t.m, t.n, t.k, t.a, t.b));
    Handle up(*backend, s.products, {.mode = Mode::cr, .rounding = fp64::Direction::upward});
    expect_invalid_argument(
        [&] {
          up.sgemm('N', 'N', t.m, t.n, t.k, alpha, a.data(), t.m, b.data(), t.k, 0.0f, c.data(),
                   t.m);
        },
        "rounding upward is for C := A B (alpha = 1, beta = 0)");
  }
}

TEST(SgemmCr, RoundToOddIsNotAUsersDirection) {
  const auto backend = host::make_emulator_backend(1);
  EXPECT_THROW(
      Handle(*backend, CrtProducts{}, {.mode = Mode::cr, .rounding = fp64::Direction::to_odd}),
      std::invalid_argument);
  EXPECT_FALSE(rounding_by_name("to-odd").has_value());
  Handle dp(*backend, CrtProducts{}, {.mode = Mode::dp});
  const std::vector<float> x(4, 1.0f);
  std::vector<float> c(4);
  expect_invalid_argument(
      [&] { dp.sgemm('N', 'N', 2, 2, 2, 1.0f, x.data(), 2, x.data(), 2, 0.0f, c.data(), 2); },
      "sgemm: mode dp is for fp64 operands");
}

}  // namespace
}  // namespace tcemu::ozaki
