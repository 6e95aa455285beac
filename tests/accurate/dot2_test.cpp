// Dot2 (dot2.hpp) through the handle: the error bound of Ogita, Rump and Oishi on generated
// ill-conditioned dot products, the order the bits are defined by, and their independence of the
// thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include <tcemu/accurate/handle.hpp>
#include <tcemu/host/host_backends.hpp>
#include <tcemu/reference/exact_gemm.hpp>
#include <tcemu/reference/ill_conditioned.hpp>

#include <tcemu/test/accurate_support.hpp>

namespace {

using namespace tcemu;
using accurate::testing::bits;
using accurate::testing::hex;

// Dot2 written out here from the paper (Algorithm 5.3, TwoSum and TwoProd with std::fma), for
// the k-order inner products of GEMV and GEMM.
template <typename T>
T paper_dot2(const T* x, std::int64_t incx, const T* y, std::int64_t k) {
  T p = 0, s = 0;
  for (std::int64_t i = 0; i < k; ++i) {
    const T h = x[i * incx] * y[i], r = std::fma(x[i * incx], y[i], -h);
    const T sum = p + h, z = sum - p, q = (p - (sum - z)) + (h - z);
    p = sum;
    s = s + (q + r);
  }
  return p + s;
}

TEST(Dot2, ErrorBoundHoldsOnIllConditionedDotProducts) {
  auto backend = host::make_cpu64_backend(2);
  accurate::Handle dot2(*backend, InnerProduct::dot2);
  const double u = 0x1p-53;
  for (std::int64_t n : {6, 100, 1000}) {
    const double nu = static_cast<double>(n) * u;
    const double gamma = nu / (1 - nu);
    for (double condition = 1e2; condition < 1e40; condition *= 1e3) {
      for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        const auto d = reference::ill_conditioned_dot(n, condition, seed);
        const double got = dot2.ddot(n, d.x.data(), 1, d.y.data(), 1);
        double absolute = 0;  // |x|'|y|, bounded from above in binary64 (enough for the bound)
        for (std::int64_t i = 0; i < n; ++i) absolute += std::fabs(d.x[i] * d.y[i]);
        absolute *= 1 + 2 * nu;
        const double bound = u * std::fabs(d.exact) + gamma * gamma * absolute;
        EXPECT_LE(std::fabs(got - d.exact), 2 * bound)  // |got - exact| <= bound, d.exact rounded
            << "n " << n << ", condition " << d.condition << ": got " << hex(got) << ", exact "
            << hex(d.exact);
      }
    }
  }
}

TEST(Dot2, ReachesTwiceTheWorkingPrecision) {
  // At condition 1e20, plain binary64 has no correct digit left; Dot2 still has about 1e-16.
  auto backend = host::make_cpu64_backend(1);
  accurate::Handle dot2(*backend, InnerProduct::dot2);
  const auto d = reference::ill_conditioned_dot(1000, 1e20, 4);
  ASSERT_GT(d.condition, 1e17);
  const double got = dot2.ddot(1000, d.x.data(), 1, d.y.data(), 1);
  EXPECT_LT(std::fabs(got - d.exact) / std::fabs(d.exact), 1e-12);
  double plain = 0;
  for (std::size_t i = 0; i < d.x.size(); ++i) plain += d.x[i] * d.y[i];
  EXPECT_GT(std::fabs(plain - d.exact) / std::fabs(d.exact), 1e-4);
}

TEST(Dot2, GemvAndGemmSumEachElementInKOrder) {
  auto backend = host::make_cpu64_backend(2);
  accurate::Handle dot2(*backend, InnerProduct::dot2);
  const std::int64_t m = 7, n = 5, k = 333;
  const auto a = accurate::testing::phi_vector(m * k, 6, 1);
  const auto b = accurate::testing::phi_vector(k * n, 6, 2);
  std::vector<double> c(m * n);
  dot2.dgemm('N', 'N', m, n, k, 1.0, a.data(), m, b.data(), k, 0.0, c.data(), m);
  ASSERT_TRUE(test::same_bits_at(
      m, n,
      [&](std::int64_t i, std::int64_t j) {
        return paper_dot2(a.data() + i, m, b.data() + j * k, k);
      },
      [&](std::int64_t i, std::int64_t j) { return c[j * m + i]; },
      {.inputs = test::gemm_inputs(m, k, a.data(), b.data())}));
  std::vector<double> y(m);
  dot2.dgemv('N', m, k, 1.0, a.data(), m, b.data(), 1, 0.0, y.data(), 1);
  EXPECT_TRUE(test::same_bits_at(
      m, 1, [&](std::int64_t i, std::int64_t) { return paper_dot2(a.data() + i, m, b.data(), k); },
      [&](std::int64_t i, std::int64_t) { return y[i]; },
      {.inputs = test::gemm_inputs(m, k, a.data(), b.data())}));
  std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end()), cf(m * n);
  dot2.sgemm('N', 'N', m, n, k, 1.0f, af.data(), m, bf.data(), k, 0.0f, cf.data(), m);
  EXPECT_EQ(cf[m + 2], paper_dot2(af.data() + 2, m, bf.data() + k, k));
}

TEST(Dot2, DotBitsDoNotDependOnTheThreadCount) {
  const std::int64_t n = 100003;  // more terms than lanes, not a multiple of them
  const auto x = accurate::testing::phi_vector(n, 8, 3), y = accurate::testing::phi_vector(n, 8, 4);
  std::vector<double> results;
  for (int threads : {1, 2, 3, 5}) {
    auto backend = host::make_cpu64_backend(threads);
    accurate::Handle dot2(*backend, InnerProduct::dot2);
    results.push_back(dot2.ddot(n, x.data(), 1, y.data(), 1));
    EXPECT_EQ(bits(results.back()), bits(results.front())) << threads << " threads";
  }
  const double exact = reference::correctly_rounded_gemm(1, 1, n, x, y)[0];
  EXPECT_LE(std::fabs(results[0] - exact), 4 * 0x1p-53 * std::fabs(exact));
}

TEST(Dot2, NanAndInfPropagateAsInBlas) {
  auto backend = host::make_cpu64_backend(1);
  accurate::Handle dot2(*backend, InnerProduct::dot2);
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> x = {1.0, inf, 2.0}, y = {3.0, 2.0, 1.0};
  EXPECT_EQ(dot2.ddot(3, x.data(), 1, y.data(), 1), inf);  // TwoProd's error would be NaN
  x[1] = -inf;
  EXPECT_EQ(dot2.ddot(3, x.data(), 1, y.data(), 1), -inf);
  y[1] = 0;
  EXPECT_TRUE(std::isnan(dot2.ddot(3, x.data(), 1, y.data(), 1)));
  x = {1e300, 1e300};
  y = {1e300, 1.0};  // the product overflows: Inf, as plain summation gives
  EXPECT_EQ(dot2.ddot(2, x.data(), 1, y.data(), 1), inf);
  x = {nan, 1.0};
  y = {1.0, 1.0};
  EXPECT_TRUE(std::isnan(dot2.ddot(2, x.data(), 1, y.data(), 1)));
}

}  // namespace
