// The DOT-, GEMV- and GEMM-shaped calls (accurate/handle.hpp, and the Ozaki handle's ddot and
// dgemv, which run the Ozaki scheme's one code path): ExBLAS-style results against the MPFR
// oracle bit for bit, every transpose, increment and thread count; the epilogue; BLAS argument
// errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/accurate/handle.hpp>
#include <tcemu/backend/blas_epilogue.hpp>
#include <tcemu/host/host_backends.hpp>
#include <tcemu/ozaki/handle.hpp>
#include <tcemu/reference/exact_gemm.hpp>

#include <tcemu/test/accurate_support.hpp>

namespace {

using namespace tcemu;
using accurate::testing::bits;
using accurate::testing::hex;
using accurate::testing::phi_vector;

// Column-major m x n matrix, its transpose.
std::vector<double> transpose(const std::vector<double>& x, std::int64_t m, std::int64_t n) {
  std::vector<double> t(x.size());
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = 0; i < m; ++i) t[i * n + j] = x[j * m + i];
  }
  return t;
}

TEST(ExactBlas, GemmIsCorrectlyRoundedForEveryTransposeAndThreadCount) {
  const std::int64_t m = 17, n = 13, k = 211;
  const auto a = phi_vector(m * k, 10, 1), b = phi_vector(k * n, 10, 2);
  const auto want = reference::correctly_rounded_gemm(m, n, k, a, b);
  const auto at = transpose(a, m, k), bt = transpose(b, k, n);
  for (int threads : {1, 3}) {
    auto backend = host::make_cpu64_backend(threads);
    accurate::Handle exblas(*backend, InnerProduct::exact);
    for (char ta : {'N', 'T'}) {
      for (char tb : {'N', 't'}) {
        std::vector<double> c(m * n, 7.0);
        exblas.dgemm(ta, tb, m, n, k, 1.0, ta == 'N' ? a.data() : at.data(), ta == 'N' ? m : k,
                     tb == 'N' ? b.data() : bt.data(), tb == 'N' ? k : n, 0.0, c.data(), m);
        ASSERT_TRUE(accurate::testing::same_product_bits(want, c, m, n, k, a, b))
            << ta << tb << ", " << threads << " threads";
      }
    }
  }
}

TEST(ExactBlas, GemvAndDotWithIncrementsAreCorrectlyRounded) {
  auto backend = host::make_cpu64_backend(2);
  accurate::Handle exblas(*backend, InnerProduct::exact);
  const std::int64_t m = 9, n = 301;
  const auto a = phi_vector(m * n, 8, 3), x = phi_vector(n, 8, 4);
  const auto want = reference::correctly_rounded_gemm(m, 1, n, a, x);
  // x with increment 3, y with increment -2 (the reference BLAS walks it from its far end).
  std::vector<double> xs(3 * n), ys(2 * m, 0.0);
  for (std::int64_t p = 0; p < n; ++p) xs[3 * p] = x[p];
  exblas.dgemv('N', m, n, 1.0, a.data(), m, xs.data(), 3, 0.0, ys.data(), -2);
  EXPECT_TRUE(test::same_bits_at(
      m, 1, [&](std::int64_t i, std::int64_t) { return want[i]; },
      [&](std::int64_t i, std::int64_t) { return ys[2 * (m - 1 - i)]; }))
      << "y, increment -2";
  // A' x' with A' = A^T (n x m) stored as the transpose: the same product.
  const auto at = transpose(a, m, n);
  std::vector<double> y(m);
  exblas.dgemv('T', n, m, 1.0, at.data(), n, x.data(), 1, 0.0, y.data(), 1);
  EXPECT_TRUE(test::same_bits(want, y, m, 1)) << "A^T stored";
  // Row 4 of A (increment m) against x read backwards.
  std::vector<double> reversed(x.rbegin(), x.rend());
  EXPECT_EQ(bits(exblas.ddot(n, a.data() + 4, m, reversed.data(), -1)), bits(want[4]));
  EXPECT_EQ(exblas.ddot(0, a.data(), 1, x.data(), 1), 0.0);
}

TEST(ExactBlas, DotOfAMillionTermsIsCorrectlyRoundedOnAnyThreadCount) {
  const std::int64_t n = 1 << 20;
  const auto x = phi_vector(n, 10, 5), y = phi_vector(n, 10, 6);
  const double want = reference::correctly_rounded_gemm(1, 1, n, x, y)[0];
  for (int threads : {1, 2, 4}) {
    auto backend = host::make_cpu64_backend(threads);
    accurate::Handle exblas(*backend, InnerProduct::exact);
    EXPECT_EQ(bits(exblas.ddot(n, x.data(), 1, y.data(), 1)), bits(want)) << threads;
  }
}

TEST(ExactBlas, Fp32RoutinesRoundOnceToBinary32) {
  auto backend = host::make_cpu64_backend(2);
  accurate::Handle exblas(*backend, InnerProduct::exact);
  const std::int64_t m = 6, n = 4, k = 500;
  const auto a = accurate::testing::as_fp32_values(phi_vector(m * k, 6, 7));
  const auto b = accurate::testing::as_fp32_values(phi_vector(k * n, 6, 8));
  const auto want = reference::correctly_rounded_gemm(m, n, k, a, b, true);
  std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end()), c(m * n);
  exblas.sgemm('N', 'N', m, n, k, 1.0f, af.data(), m, bf.data(), k, 0.0f, c.data(), m);
  for (std::size_t e = 0; e < c.size(); ++e) EXPECT_EQ(static_cast<double>(c[e]), want[e]) << e;
  EXPECT_EQ(static_cast<double>(exblas.sdot(k, af.data(), m, bf.data(), 1)), want[0]);
}

TEST(ExactBlas, EpilogueIsAlphaTimesTheRoundedProductPlusBetaC) {
  auto backend = host::make_cpu64_backend(1);
  accurate::Handle exblas(*backend, InnerProduct::exact);
  const std::int64_t m = 5, n = 3, k = 40;
  const auto a = phi_vector(m * k, 2, 9), b = phi_vector(k * n, 2, 10);
  const auto c0 = phi_vector(m * n, 1, 11);
  const auto s = reference::correctly_rounded_gemm(m, n, k, a, b);
  std::vector<double> c = c0;
  exblas.dgemm('N', 'N', m, n, k, -1.5, a.data(), m, b.data(), k, 0.25, c.data(), m);
  std::vector<double> epilogue(c.size());
  for (std::size_t e = 0; e < c.size(); ++e) epilogue[e] = -1.5 * s[e] + 0.25 * c0[e];
  EXPECT_TRUE(test::same_bits(epilogue, c, m, n,
                              {.inputs = test::gemm_inputs(m, k, a.data(), b.data(), c0.data())}));
  // alpha = 0: C := beta C without reading A or B (null is fine, as in BLAS).
  c = c0;
  exblas.dgemm('N', 'N', m, n, k, 0.0, nullptr, m, nullptr, k, 2.0, c.data(), m);
  for (std::size_t e = 0; e < c.size(); ++e) EXPECT_EQ(c[e], 2.0 * c0[e]);
}

TEST(ExactBlas, BadArgumentsNameTheParameter) {
  auto backend = host::make_cpu64_backend(1);
  accurate::Handle exblas(*backend, InnerProduct::exact);
  std::vector<double> v(100, 1.0);
  auto message = [](auto&& call) {
    try {
      call();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  EXPECT_EQ(message([&] {
              exblas.dgemm('N', 'N', 5, 2, 3, 1.0, v.data(), 2, v.data(), 3, 0.0, v.data(), 5);
            }),
            "dgemm: parameter 8 (lda) = 2 must be >= max(1, 5)");
  EXPECT_EQ(message([&] {
              exblas.dgemm('X', 'N', 5, 2, 3, 1.0, v.data(), 5, v.data(), 3, 0.0, v.data(), 5);
            }),
            "dgemm: parameter 1 (transa) = 'X' is not N, T or C");
  EXPECT_EQ(
      message([&] { exblas.dgemv('N', 4, -1, 1.0, v.data(), 4, v.data(), 1, 0.0, v.data(), 1); }),
      "dgemv: parameter 3 (n) = -1 must be >= 0");
  EXPECT_EQ(
      message([&] { exblas.dgemv('N', 4, 3, 1.0, v.data(), 4, v.data(), 0, 0.0, v.data(), 1); }),
      "dgemv: parameter 8 (incx) = 0 must not be zero");
  EXPECT_EQ(
      message([&] { exblas.dgemv('T', 4, 3, 1.0, v.data(), 4, v.data(), 1, 0.0, v.data(), 0); }),
      "dgemv: parameter 11 (incy) = 0 must not be zero");
  EXPECT_EQ(message([&] { exblas.ddot(3, nullptr, 1, v.data(), 1); }),
            "ddot: parameter 2 (x) is null");
}

TEST(ExactBlas, NanInfAndOverflowAsInBlas) {
  auto backend = host::make_cpu64_backend(1);
  accurate::Handle exblas(*backend, InnerProduct::exact);
  const double inf = std::numeric_limits<double>::infinity();
  // A 2 x 2 with an Inf in row 0: row 0 of A B is Inf (or NaN where it meets a zero), row 1
  // finite; the exact sum of finite products that overflow binary64 but cancel stays finite.
  std::vector<double> a = {inf, 1e300, 1.0, -1e300};  // column-major: row 0 = (inf, 1), row 1 =
                                                      // (1e300, -1e300)
  std::vector<double> b = {2.0, 0.0, 1e300, 1e300};   // columns (2, 0) and (1e300, 1e300)
  std::vector<double> c(4);
  exblas.dgemm('N', 'N', 2, 2, 2, 1.0, a.data(), 2, b.data(), 2, 0.0, c.data(), 2);
  EXPECT_EQ(c[0], inf);
  EXPECT_EQ(c[1], 2e300);
  EXPECT_EQ(c[2], inf);
  EXPECT_EQ(bits(c[3]), bits(0.0));  // 1e600 - 1e600, exactly: plain DGEMM gives NaN
  // A correctly rounded result beyond the largest finite number is Inf.
  std::vector<double> x = {1e300, 1e300}, y = {1e10, 1e10};
  EXPECT_EQ(exblas.ddot(2, x.data(), 1, y.data(), 1), inf);
}

TEST(OzakiBlas, DotAndGemvRunTheSchemeAndAreCorrectlyRoundedInCrMode) {
  auto backend = host::make_cpu64_backend(2);
  ozaki::Handle cr(*backend, ozaki::Fp64Products{}, {.mode = ozaki::Mode::cr});
  const std::int64_t m = 11, n = 257;
  const auto a = phi_vector(m * n, 6, 12), x = phi_vector(n, 6, 13);
  const auto want = reference::correctly_rounded_gemm(m, 1, n, a, x);
  std::vector<double> y(m);
  cr.dgemv('N', m, n, 1.0, a.data(), m, x.data(), 1, 0.0, y.data(), 1);
  for (std::int64_t i = 0; i < m; ++i) EXPECT_EQ(bits(y[i]), bits(want[i])) << "row " << i;
  EXPECT_GT(cr.report().gemms, 0);
  EXPECT_EQ(bits(cr.ddot(n, a.data() + 3, m, x.data(), 1)), bits(want[3]));

  // DP mode: DGEMV is DGEMM with n = 1, bit for bit (the same code path).
  ozaki::Handle dp(*backend, ozaki::Fp64Products{}, {.mode = ozaki::Mode::dp});
  std::vector<double> gemv(m), gemm(m);
  dp.dgemv('N', m, n, 1.0, a.data(), m, x.data(), 1, 0.0, gemv.data(), 1);
  dp.dgemm('N', 'N', m, 1, n, 1.0, a.data(), m, x.data(), n, 0.0, gemm.data(), m);
  for (std::int64_t i = 0; i < m; ++i) EXPECT_EQ(bits(gemv[i]), bits(gemm[i])) << "row " << i;
  EXPECT_THROW(dp.sdot(0, nullptr, 1, nullptr, 1), std::invalid_argument);  // dp is not sp
}

}  // namespace
