// The BLAS face of the handle: Inf and NaN, zero rows and columns, k = 1, empty dimensions,
// alpha, beta and transposes, and argument errors numbered as xerbla numbers them.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <tcemu/emulator/presets.hpp>
#include <tcemu/host/host_backends.hpp>
#include <tcemu/ozaki/handle.hpp>

#include "ozaki_support.hpp"

namespace tcemu::ozaki {
namespace {

using testing::correctly_rounded_product;
using testing::expect_invalid_argument;
using testing::phi_matrix;

const Products kTensorCores = TensorCoreProducts{preset("sm90", formats::fp16, formats::fp32)};
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

std::uint64_t bits(double x) {
  return std::bit_cast<std::uint64_t>(x);
}

// What IEEE arithmetic (a standard DGEMM) gives for element (i, j): NaN, +Inf or -Inf.
double ieee_special(std::int64_t m, std::int64_t k, const std::vector<double>& a,
                    const std::vector<double>& b, std::int64_t i, std::int64_t j) {
  double s = 0.0;
  for (std::int64_t p = 0; p < k; ++p) s += a[p * m + i] * b[j * k + p];
  return s;
}

TEST(SpecialValues, AffectOnlyTheirRowsAndColumnsAsInDgemm) {
  const std::int64_t m = 6, n = 5, k = 9;
  const auto a_clean = phi_matrix(m, k, 1.0, 1);
  auto b_clean = phi_matrix(k, n, 1.0, 2);
  b_clean[3 * k + 5] = 0.0;  // meets the Inf of row 3: NaN at (3, 3)
  for (Mode mode : {Mode::dp, Mode::cr}) {
    auto backend = host::make_emulator_backend();
    Handle h(*backend, kTensorCores, {.mode = mode});
    auto a = a_clean, b = b_clean;
    a[3 * m + 1] = kNan;       // row 1: NaN
    a[4 * m + 2] = INFINITY;   // row 2: +Inf
    a[5 * m + 3] = INFINITY;   // row 3: +Inf at p = 5 ...
    b[4 * k + 7] = -INFINITY;  // column 4: -Inf
    std::vector<double> c(m * n, 0.0), clean(m * n, 0.0);
    c[0] = kNan;  // beta = 0: C is not read
    h.dgemm('N', 'N', m, n, k, 1.0, a.data(), m, b.data(), k, 0.0, c.data(), m);
    h.dgemm('N', 'N', m, n, k, 1.0, a_clean.data(), m, b_clean.data(), k, 0.0, clean.data(), m);
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        const bool affected = i == 1 || i == 2 || i == 3 || j == 4;
        const double got = c[j * m + i];
        if (!affected) {
          EXPECT_EQ(bits(got), bits(clean[j * m + i])) << i << ", " << j;
          continue;
        }
        const double expected = ieee_special(m, k, a, b, i, j);
        if (std::isnan(expected)) {
          EXPECT_EQ(bits(got), 0x7FF8000000000000u) << i << ", " << j << ": " << got;
        } else {
          EXPECT_EQ(got, expected) << i << ", " << j;
        }
      }
    }
    // With beta = 1 a NaN or Inf in C enters its own element only.
    std::vector<double> c2(m * n, 0.0);
    c2[7] = -std::numeric_limits<double>::signaling_NaN();
    c2[8] = -INFINITY;
    h.dgemm('N', 'N', m, n, k, 1.0, a_clean.data(), m, b_clean.data(), k, 1.0, c2.data(), m);
    for (std::size_t e = 0; e < c2.size(); ++e) {
      if (e == 7) {
        EXPECT_EQ(bits(c2[e]), 0x7FF8000000000000u);  // the canonical NaN, whatever C's payload
      } else if (e == 8) {
        EXPECT_EQ(c2[e], -INFINITY);
      } else {
        EXPECT_EQ(bits(c2[e]), bits(clean[e] + 0.0)) << e;
      }
    }
  }
}

TEST(BlasShapes, ZeroRowsAndColumnsKOneAndTransposes) {
  const std::int64_t m = 5, n = 4, k = 6;
  auto a = phi_matrix(m, k, 2.0, 3), b = phi_matrix(k, n, 2.0, 4);
  for (std::int64_t p = 0; p < k; ++p) a[p * m + 2] = 0.0;   // zero row
  for (std::int64_t p = 0; p < k; ++p) b[1 * k + p] = -0.0;  // zero column
  auto backend = host::make_emulator_backend();
  Handle h(*backend, kTensorCores, {.mode = Mode::cr});
  const auto reference = correctly_rounded_product(m, n, k, a, b);
  std::vector<double> c(m * n);
  h.dgemm('N', 'N', m, n, k, 1.0, a.data(), m, b.data(), k, 0.0, c.data(), m);
  EXPECT_TRUE(testing::same_product_bits(reference, c, m, n, k, a, b));

  // op(A) = A^T for A^T stored k x m, op(B) = B^T for B^T stored n x k, padded leading
  // dimensions: same bits.
  const std::int64_t lda = k + 3, ldb = n + 2, ldc = m + 1;
  std::vector<double> at(lda * m, kNan), bt(ldb * k, kNan), c2(ldc * n, -7.0);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t p = 0; p < k; ++p) at[i * lda + p] = a[p * m + i];
  }
  for (std::int64_t p = 0; p < k; ++p) {
    for (std::int64_t j = 0; j < n; ++j) bt[p * ldb + j] = b[j * k + p];
  }
  h.dgemm('T', 't', m, n, k, 1.0, at.data(), lda, bt.data(), ldb, 0.0, c2.data(), ldc);
  // All of C, its padding row included: the bits of the product above, -7 (one bit pattern) in
  // the padding row, untouched.
  std::vector<double> want(c2.size(), -7.0);
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = 0; i < m; ++i) want[j * ldc + i] = c[j * m + i];
  }
  const auto inputs = test::gemm_inputs(m, k, a.data(), b.data());
  EXPECT_TRUE(test::same_bits(want, c2, ldc, n, {.inputs = [&](std::int64_t i, std::int64_t j) {
                                return i < m ? inputs(i, j) : std::string("padding row of C");
                              }}));

  // k = 1: a_i b_j, correctly rounded.
  std::vector<double> c1(m * n);
  h.dgemm('N', 'N', m, n, 1, 1.0, a.data(), m, b.data(), 1, 0.0, c1.data(), m);
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = 0; i < m; ++i) EXPECT_EQ(c1[j * m + i], a[i] * b[j]);
  }
}

TEST(BlasShapes, EmptyDimensionsAlphaAndBeta) {
  auto backend = host::make_emulator_backend();
  Handle h(*backend, kTensorCores, {.mode = Mode::dp});
  const std::vector<double> a = {1.0, 2.0}, b = {3.0, 4.0};
  std::vector<double> c = {5.0, -0.0};
  // m = 0 / n = 0: nothing is touched, null pointers are fine.
  h.dgemm('N', 'N', 0, 2, 2, 1.0, nullptr, 1, nullptr, 2, 0.0, nullptr, 1);
  h.dgemm('N', 'N', 2, 0, 2, 1.0, nullptr, 2, nullptr, 2, 0.0, nullptr, 2);
  // k = 0: C = beta C.
  h.dgemm('N', 'N', 2, 1, 0, 1.0, nullptr, 2, nullptr, 1, 2.0, c.data(), 2);
  EXPECT_EQ(c[0], 10.0);
  // alpha = 0, beta = 0: C = 0, and A, B are not read (a NaN there does not propagate).
  const std::vector<double> nan_a = {kNan, kNan};
  h.dgemm('N', 'N', 2, 1, 1, 0.0, nan_a.data(), 2, b.data(), 1, 0.0, c.data(), 2);
  EXPECT_EQ(bits(c[0]), 0u);
  EXPECT_EQ(bits(c[1]), 0u);
  // alpha and beta: 2 * (a b) + 0.5 * c with the roundings of the epilogue.
  c = {8.0, 16.0};
  h.dgemm('N', 'N', 2, 1, 1, 2.0, a.data(), 2, b.data(), 1, 0.5, c.data(), 2);
  EXPECT_EQ(c[0], 2.0 * 3.0 + 4.0);
  EXPECT_EQ(c[1], 2.0 * 6.0 + 8.0);
}

TEST(BlasArguments, AreReportedLikeXerbla) {
  auto backend = host::make_emulator_backend();
  Handle h(*backend, kTensorCores, {.mode = Mode::dp});
  std::vector<double> x(100, 1.0);
  const double* p = x.data();
  double* c = x.data();
  expect_invalid_argument([&] { h.dgemm('X', 'N', 2, 2, 2, 1, p, 2, p, 2, 0, c, 2); },
                          "parameter 1 (transa)");
  expect_invalid_argument([&] { h.dgemm('N', '?', 2, 2, 2, 1, p, 2, p, 2, 0, c, 2); },
                          "parameter 2 (transb)");
  expect_invalid_argument([&] { h.dgemm('N', 'N', -1, 2, 2, 1, p, 2, p, 2, 0, c, 2); },
                          "parameter 3 (m)");
  expect_invalid_argument([&] { h.dgemm('N', 'N', 2, -1, 2, 1, p, 2, p, 2, 0, c, 2); },
                          "parameter 4 (n)");
  expect_invalid_argument([&] { h.dgemm('N', 'N', 2, 2, -3, 1, p, 2, p, 2, 0, c, 2); },
                          "parameter 5 (k)");
  expect_invalid_argument([&] { h.dgemm('N', 'N', 5, 2, 2, 1, p, 4, p, 2, 0, c, 5); },
                          "parameter 8 (lda)");
  expect_invalid_argument([&] { h.dgemm('T', 'N', 5, 2, 3, 1, p, 2, p, 3, 0, c, 5); },
                          "parameter 8 (lda)");
  expect_invalid_argument([&] { h.dgemm('N', 'N', 2, 2, 3, 1, p, 2, p, 2, 0, c, 2); },
                          "parameter 10 (ldb)");
  expect_invalid_argument([&] { h.dgemm('N', 'N', 3, 2, 2, 1, p, 3, p, 2, 0, c, 2); },
                          "parameter 13 (ldc)");
  expect_invalid_argument([&] { h.dgemm('N', 'N', 2, 2, 2, 1, nullptr, 2, p, 2, 0, c, 2); },
                          "parameter 7 (a)");
  // BLAS reports the first bad parameter.
  expect_invalid_argument([&] { h.dgemm('N', 'N', -1, -1, 2, 1, p, 0, p, 2, 0, c, 0); },
                          "parameter 3 (m)");
  EXPECT_THROW(Handle(*backend, kTensorCores, {.mode = Mode::tunable, .splits = 0}),
               std::invalid_argument);
}

}  // namespace
}  // namespace tcemu::ozaki
