// The BLAS-shaped entry point: argument errors as xerbla names them, transposes, leading
// dimensions, quick returns and the beta rules.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include <tcemu/host/host_backends.hpp>
#include <tcemu/markidis/presets.hpp>

#include "matrices.hpp"

namespace tcemu::markidis {
namespace {

using testing::Matrix;
using testing::random_matrix;

class Sgemm : public ::testing::Test {
 protected:
  std::unique_ptr<Backend> backend = host::make_emulator_backend();
  Scheme scheme = scheme_by_name("halfhalf");
  Datapath dp = scheme_datapath(scheme, "sm90");

  std::string error(char ta, char tb, std::int64_t m, std::int64_t n, std::int64_t k,
                    std::int64_t lda, std::int64_t ldb, std::int64_t ldc) {
    std::vector<float> a(64), b(64), c(64);
    try {
      sgemm(*backend, scheme, dp, ta, tb, m, n, k, 1.0f, a.data(), lda, b.data(), ldb, 0.0f,
            c.data(), ldc);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "accepted";
  }
};

TEST_F(Sgemm, ArgumentErrorsNameTheParameter) {
  // The messages of the BLAS call plumbing every scheme shares (blas_call.hpp), numbered as
  // xerbla numbers sgemm's parameters.
  EXPECT_NE(error('X', 'N', 2, 2, 2, 2, 2, 2).find("sgemm: parameter 1 (transa)"),
            std::string::npos);
  EXPECT_NE(error('N', 'x', 2, 2, 2, 2, 2, 2).find("parameter 2 (transb)"), std::string::npos);
  EXPECT_NE(error('N', 'N', -1, 2, 2, 2, 2, 2).find("parameter 3 (m) "), std::string::npos);
  EXPECT_NE(error('N', 'N', 2, -1, 2, 2, 2, 2).find("parameter 4 (n) "), std::string::npos);
  EXPECT_NE(error('N', 'N', 2, 2, -1, 2, 2, 2).find("parameter 5 (k) "), std::string::npos);
  EXPECT_NE(error('N', 'N', 3, 2, 2, 2, 3, 3).find("parameter 8 (lda) = 2 must be >= max(1, 3)"),
            std::string::npos);
  EXPECT_NE(error('T', 'N', 3, 2, 4, 3, 4, 3).find("parameter 8 (lda) = 3 must be >= max(1, 4)"),
            std::string::npos);
  EXPECT_NE(error('N', 'T', 2, 3, 2, 2, 2, 2).find("parameter 10 (ldb) = 2 must be >= max(1, 3)"),
            std::string::npos);
  EXPECT_NE(error('N', 'N', 3, 2, 2, 3, 2, 2).find("parameter 13 (ldc)"), std::string::npos);
  EXPECT_EQ(error('n', 'c', 2, 2, 2, 2, 2, 2), "accepted");
  scheme.groups.clear();
  EXPECT_NE(error('N', 'N', 2, 2, 2, 2, 2, 2).find("no accumulator groups"), std::string::npos);
}

// op(A) op(B) through transposed storage and padded leading dimensions gives the bits of the
// plain product; the padding of C is not written.
TEST_F(Sgemm, TransposesAndLeadingDimensions) {
  const std::int64_t m = 13, n = 7, k = 40;
  const Matrix a = random_matrix(m, k, 1), b = random_matrix(k, n, 2);
  const Matrix plain = testing::run(scheme, dp, a, b);
  // A^T stored k x m with lda = k + 3, B^T stored n x k with ldb = n + 1.
  const std::int64_t lda = k + 3, ldb = n + 1, ldc = m + 2;
  std::vector<float> at(lda * m, 0.0f), bt(ldb * k, 0.0f), c(ldc * n, -7.0f);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t p = 0; p < k; ++p) at[i * lda + p] = a(i, p);
  }
  for (std::int64_t p = 0; p < k; ++p) {
    for (std::int64_t j = 0; j < n; ++j) bt[p * ldb + j] = b(p, j);
  }
  sgemm(*backend, scheme, dp, 'T', 't', m, n, k, 1.0f, at.data(), lda, bt.data(), ldb, 0.0f,
        c.data(), ldc);
  // All of C, its padding rows included: the plain product's bits, -7 (one bit pattern) in the
  // padding.
  std::vector<float> want(c.size(), -7.0f);
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = 0; i < m; ++i) want[j * ldc + i] = plain(i, j);
  }
  const auto inputs = test::gemm_inputs(m, k, a.v.data(), b.v.data());
  EXPECT_TRUE(test::same_bits(want, c, ldc, n, {.inputs = [&](std::int64_t i, std::int64_t j) {
                                return i < m ? inputs(i, j) : std::string("padding of C");
                              }}));
}

TEST_F(Sgemm, AlphaBetaAndQuickReturns) {
  const std::int64_t m = 6, n = 5, k = 32;
  Matrix a = random_matrix(m, k, 3), b = random_matrix(k, n, 4);
  const Matrix ab = testing::run(scheme, dp, a, b);
  const float nan = std::numeric_limits<float>::quiet_NaN();

  // beta == 0: C is not read, a NaN there does not propagate.
  std::vector<float> c(m * n, nan);
  sgemm(*backend, scheme, dp, 'N', 'N', m, n, k, 2.0f, a.v.data(), m, b.v.data(), k, 0.0f, c.data(),
        m);
  for (std::size_t i = 0; i < c.size(); ++i) EXPECT_EQ(c[i], 2.0f * ab.v[i]);
  // beta != 0: C = fma(alpha, AB, beta C), and a NaN in C propagates.
  std::vector<float> c0(m * n);
  for (std::size_t i = 0; i < c0.size(); ++i) c0[i] = 0.25f * static_cast<float>(i);
  c0[4] = nan;
  std::vector<float> c1 = c0;
  sgemm(*backend, scheme, dp, 'N', 'N', m, n, k, -1.5f, a.v.data(), m, b.v.data(), k, 3.0f,
        c1.data(), m);
  for (std::size_t i = 0; i < c1.size(); ++i) {
    const float want = std::fma(-1.5f, ab.v[i], 3.0f * c0[i]);
    if (i == 4) {
      EXPECT_TRUE(std::isnan(c1[i]));
    } else {
      EXPECT_EQ(c1[i], want) << i;
    }
  }
  // alpha == 0: C = beta C and A, B are not used (a NaN there does not propagate).
  a(0, 0) = nan;
  std::vector<float> c2(m * n, 3.0f);
  sgemm(*backend, scheme, dp, 'N', 'N', m, n, k, 0.0f, a.v.data(), m, b.v.data(), k, 0.5f,
        c2.data(), m);
  for (float x : c2) EXPECT_EQ(x, 1.5f);
  // k == 0 with beta == 0: C = 0 without reading it.
  std::vector<float> c3(m * n, nan);
  sgemm(*backend, scheme, dp, 'N', 'N', m, n, 0, 1.0f, a.v.data(), m, b.v.data(), 1, 0.0f,
        c3.data(), m);
  EXPECT_TRUE(test::same_bits(std::vector<float>(c3.size(), 0.0f), c3, m, n));
  // m == 0 or beta == 1 with alpha == 0: nothing is touched.
  std::vector<float> c4(m * n, nan);
  sgemm(*backend, scheme, dp, 'N', 'N', m, n, k, 0.0f, a.v.data(), m, b.v.data(), k, 1.0f,
        c4.data(), m);
  for (float x : c4) EXPECT_TRUE(std::isnan(x));
}

// gemm() on buffers with an empty inner dimension: every scheme gives +0 (the empty sum).
TEST_F(Sgemm, EmptyInnerDimensionOnBuffers) {
  Buffer a_buffer = backend->allocate(0), b_buffer = backend->allocate(0);
  Buffer d_buffer = backend->allocate(3 * 4 * sizeof(float));
  std::vector<float> d(12, -1.0f);
  backend->copy_in(d.data(), d_buffer, d.size() * sizeof(float));
  const BufferMatrix a{&a_buffer, 0, formats::fp32, 3, 0, 3, Layout::column_major};
  const BufferMatrix b{&b_buffer, 0, formats::fp32, 0, 4, 1, Layout::column_major};
  const BufferMatrix dm{&d_buffer, 0, formats::fp32, 3, 4, 3, Layout::column_major};
  for (std::string_view name : scheme_names()) {
    const Scheme s = scheme_by_name(name);
    gemm(*backend, s, scheme_datapath(s, "sm90"), a, b, std::nullopt, dm);
    backend->copy_out(d_buffer, d.data(), d.size() * sizeof(float));
    EXPECT_TRUE(test::same_bits(std::vector<float>(d.size(), 0.0f), d, 3, 4)) << name;
  }
}

}  // namespace
}  // namespace tcemu::markidis
