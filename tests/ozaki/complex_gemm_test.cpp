// zgemm and cgemm through the real form (blas_routines.hpp, complex_steps.hpp): the bits of the
// real routine (dgemm, sgemm) on the real form [Ar Ai] [[Br Bi]; [-Bi Br]] built here, for every
// pair of operations N, T, C, padded leading dimensions and real, then complex, alpha and beta;
// in mode cr each part is MPFR's correctly rounded part in every direction; Handle::gemm on
// complex buffers gives zgemm's bits; and bad arguments are reported as zgemm's xerbla does.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <tcemu/accurate/handle.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/emulator/rounded_arithmetic.hpp>
#include <tcemu/host/host_backends.hpp>
#include <tcemu/ozaki/handle.hpp>

#include "ozaki_support.hpp"

namespace tcemu::ozaki {
namespace {

using testing::expect_invalid_argument;
using testing::phi_matrix;
using Z = std::complex<double>;
using C = std::complex<float>;

const Products kTensorCores = TensorCoreProducts{preset("sm90", formats::fp16, formats::fp32)};
constexpr char kOps[] = {'N', 'T', 'C'};

// A rows x cols column-major complex matrix with leading dimension ld, parts (rand - 0.5)
// exp(phi randn), the padding rows NaN (never read).
template <class T>
std::vector<std::complex<T>> complex_matrix(std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                            double phi, std::uint64_t seed) {
  const auto re = phi_matrix(rows, cols, phi, seed), im = phi_matrix(rows, cols, phi, seed + 1000);
  const T nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<std::complex<T>> x(static_cast<std::size_t>(ld * cols), {nan, nan});
  for (std::int64_t j = 0; j < cols; ++j) {
    for (std::int64_t i = 0; i < rows; ++i) {
      x[j * ld + i] = {static_cast<T>(re[j * rows + i]), static_cast<T>(im[j * rows + i])};
    }
  }
  return x;
}

// Element (i, p) of op(X) for X stored column-major with leading dimension ld.
template <class T>
std::complex<T> op_element(const std::vector<std::complex<T>>& x, std::int64_t ld, char op,
                           std::int64_t i, std::int64_t p) {
  if (op == 'N') return x[p * ld + i];
  const std::complex<T> v = x[i * ld + p];
  return op == 'C' ? std::conj(v) : v;
}

// The real forms, column-major and dense: A2 = [Ar Ai] (m x 2k) of op(A) and B2 = [[Br Bi];
// [-Bi Br]] (2k x 2n) of op(B).
template <class T>
std::vector<T> real_form_a(const std::vector<std::complex<T>>& a, std::int64_t lda, char op,
                           std::int64_t m, std::int64_t k) {
  std::vector<T> a2(static_cast<std::size_t>(m * 2 * k));
  for (std::int64_t p = 0; p < k; ++p) {
    for (std::int64_t i = 0; i < m; ++i) {
      const std::complex<T> v = op_element(a, lda, op, i, p);
      a2[p * m + i] = v.real();
      a2[(k + p) * m + i] = v.imag();
    }
  }
  return a2;
}
template <class T>
std::vector<T> real_form_b(const std::vector<std::complex<T>>& b, std::int64_t ldb, char op,
                           std::int64_t k, std::int64_t n) {
  std::vector<T> b2(static_cast<std::size_t>(4 * k * n));
  const std::int64_t ld = 2 * k;
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t p = 0; p < k; ++p) {
      const std::complex<T> v = op_element(b, ldb, op, p, j);
      b2[j * ld + p] = v.real();
      b2[(n + j) * ld + p] = v.imag();
      b2[j * ld + k + p] = -v.imag();
      b2[(n + j) * ld + k + p] = v.real();
    }
  }
  return b2;
}

// C (m x n, ldc) as the real pair [Cr Ci] (m x 2n, dense) and back.
template <class T>
std::vector<T> split_c(const std::vector<std::complex<T>>& c, std::int64_t ldc, std::int64_t m,
                       std::int64_t n) {
  std::vector<T> c2(static_cast<std::size_t>(2 * m * n));
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = 0; i < m; ++i) {
      c2[j * m + i] = c[j * ldc + i].real();
      c2[(n + j) * m + i] = c[j * ldc + i].imag();
    }
  }
  return c2;
}
template <class T>
std::vector<std::complex<T>> joined(const std::vector<T>& c2, std::vector<std::complex<T>> c,
                                    std::int64_t ldc, std::int64_t m, std::int64_t n) {
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = 0; i < m; ++i) c[j * ldc + i] = {c2[j * m + i], c2[(n + j) * m + i]};
  }
  return c;
}

// The parts of two complex arrays, bit for bit.
template <class T>
::testing::AssertionResult same_parts(const std::vector<std::complex<T>>& expected,
                                      const std::vector<std::complex<T>>& got, std::int64_t ld,
                                      std::int64_t n) {
  const auto parts = [](const std::vector<std::complex<T>>& x) {
    std::vector<T> p;
    for (const auto& v : x) p.insert(p.end(), {v.real(), v.imag()});
    return p;
  };
  return test::same_bits(parts(expected), parts(got), 2 * ld, n);
}

struct Scheme {
  const char* name;
  Products products;
  bool cpu64;
};

std::vector<Scheme> schemes() {
  return {{"dgemm-tc", kTensorCores, false},
          {"dgemm-int8", IntegerProducts{}, false},
          {"dgemm-crt", CrtProducts{}, false},
          {"fp64 slices on cpu64", Fp64Products{}, true}};
}

std::unique_ptr<Backend> backend_for(const Scheme& s) {
  return s.cpu64 ? host::make_cpu64_backend(2) : host::make_emulator_backend(2);
}

// The operands of one complex product op(A) op(B) (m x k times k x n) with every leading
// dimension above the rows it must hold, and C before the call.
template <class T>
struct Operands {
  char ta, tb;
  std::int64_t m, n, k, lda, ldb, ldc;
  std::vector<std::complex<T>> a, b, c0;

  Operands(char ta_, char tb_, std::int64_t m_, std::int64_t n_, std::int64_t k_,
           std::uint64_t seed)
      : ta(ta_),
        tb(tb_),
        m(m_),
        n(n_),
        k(k_),
        lda((ta == 'N' ? m : k) + 2),
        ldb((tb == 'N' ? k : n) + 1),
        ldc(m + 3),
        a(complex_matrix<T>(ta == 'N' ? m : k, ta == 'N' ? k : m, lda, 1.0, seed)),
        b(complex_matrix<T>(tb == 'N' ? k : n, tb == 'N' ? n : k, ldb, 1.0, seed + 1)),
        c0(complex_matrix<T>(m, n, ldc, 1.0, seed + 2)) {}

  // C after zgemm (cgemm) on the handle.
  std::vector<std::complex<T>> complex_routine(BlasRoutines& h, std::complex<T> alpha,
                                               std::complex<T> beta) const {
    auto c = c0;
    if constexpr (std::is_same_v<T, double>) {
      h.zgemm(ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
    } else {
      h.cgemm(ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
    }
    return c;
  }
  // [Re Im] of C (m x 2n, dense) := alpha A2 B2 + beta [Cr Ci] by dgemm (sgemm) on the real form
  // built here.
  std::vector<T> real_routine(BlasRoutines& h, T alpha, T beta) const {
    auto c2 = split_c(c0, ldc, m, n);
    const auto a2 = real_form_a(a, lda, ta, m, k);
    const auto b2 = real_form_b(b, ldb, tb, k, n);
    if constexpr (std::is_same_v<T, double>) {
      h.dgemm('N', 'N', m, 2 * n, 2 * k, alpha, a2.data(), m, b2.data(), 2 * k, beta, c2.data(), m);
    } else {
      h.sgemm('N', 'N', m, 2 * n, 2 * k, alpha, a2.data(), m, b2.data(), 2 * k, beta, c2.data(), m);
    }
    return c2;
  }
};

// dgemm on the real form with alpha = 1, beta = 0, then the complex alpha and beta as the complex
// epilogue states them (every product and sum one binary64 RN operation), restated here.
std::vector<Z> by_formula(BlasRoutines& h, const Operands<double>& o, Z alpha, Z beta) {
  const std::vector<double> s = o.real_routine(h, 1.0, 0.0);
  const auto times = [](Z x, double re, double im) {
    return Z{sub_rn(mul_rn(x.real(), re), mul_rn(x.imag(), im)),
             add_rn(mul_rn(x.real(), im), mul_rn(x.imag(), re))};
  };
  std::vector<Z> c = o.c0;
  for (std::int64_t j = 0; j < o.n; ++j) {
    for (std::int64_t i = 0; i < o.m; ++i) {
      Z r = times(alpha, s[j * o.m + i], s[(o.n + j) * o.m + i]);
      r = {r.real() == 0 ? 0.0 : r.real(), r.imag() == 0 ? 0.0 : r.imag()};
      if (beta != 0.0) {
        const Z u = times(beta, c[j * o.ldc + i].real(), c[j * o.ldc + i].imag());
        r = {add_rn(r.real(), u.real()), add_rn(r.imag(), u.imag())};
      }
      c[j * o.ldc + i] = r;
    }
  }
  return c;
}

TEST(Zgemm, IsDgemmOnTheRealFormForEveryOperationAndScheme) {
  for (const Scheme& s : schemes()) {
    const auto backend = backend_for(s);
    Handle h(*backend, s.products, {.mode = Mode::dp});
    for (char ta : kOps) {
      for (char tb : kOps) {
        SCOPED_TRACE(std::string(s.name) + " " + ta + tb);
        const Operands<double> o(ta, tb, 5, 4, 7, 1);
        // Real alpha and beta: dgemm's bits on the real form with the same alpha and beta.
        EXPECT_TRUE(same_parts(joined(o.real_routine(h, 1.5, -0.75), o.c0, o.ldc, o.m, o.n),
                               o.complex_routine(h, 1.5, -0.75), o.ldc, o.n));
        // Complex alpha and beta.
        const Z alpha{0.3, -1.25}, beta{-0.5, 2.0};
        EXPECT_TRUE(same_parts(by_formula(h, o, alpha, beta), o.complex_routine(h, alpha, beta),
                               o.ldc, o.n));
      }
    }
  }
}

TEST(Zgemm, CrGivesEachPartCorrectlyRoundedInEveryDirection) {
  const std::int64_t m = 4, n = 3, k = 9;
  for (const Scheme& s : schemes()) {
    for (const fp64::Direction d : {fp64::Direction::nearest_even, fp64::Direction::upward,
                                    fp64::Direction::downward, fp64::Direction::toward_zero}) {
      SCOPED_TRACE(std::string(s.name) + " " + rounding_name(d));
      const auto backend = backend_for(s);
      Handle h(*backend, s.products, {.mode = Mode::cr, .rounding = d});
      // phi = 2: parts spread over many binades, so the directions differ.
      const auto a = complex_matrix<double>(k, m, k, 2.0, 11);  // op(A) = A^H
      const auto b = complex_matrix<double>(k, n, k, 2.0, 12);
      std::vector<Z> c(static_cast<std::size_t>(m * n), {7.0, 7.0});
      h.zgemm('C', 'N', m, n, k, 1.0, a.data(), k, b.data(), k, 0.0, c.data(), m);
      const auto exact = reference::correctly_rounded_gemm(
          m, 2 * n, 2 * k, real_form_a(a, k, 'C', m, k), real_form_b(b, k, 'N', k, n), d);
      EXPECT_TRUE(same_parts(joined(exact, c, m, m, n), c, m, n));
    }
  }
}

TEST(Zgemm, HandleGemmOnComplexBuffersGivesZgemmsBits) {
  const std::int64_t m = 6, n = 5, k = 8, lda = k + 1, ldb = n + 2, ldc = m + 1;
  auto backend = host::make_emulator_backend(2);
  Handle h(*backend, CrtProducts{}, {.mode = Mode::dp});
  const auto a = complex_matrix<double>(k, m, lda, 1.0, 21);  // 'T'
  const auto b = complex_matrix<double>(n, k, ldb, 1.0, 22);  // 'C'
  const auto c0 = complex_matrix<double>(m, n, ldc, 1.0, 23);
  const Z alpha{-2.0, 0.5}, beta{0.25, 1.0};
  auto expected = c0;
  h.zgemm('T', 'C', m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, expected.data(), ldc);
  const auto buffer = [&](const std::vector<Z>& x) {
    Buffer out = backend->allocate(x.size() * sizeof(Z));
    backend->copy_in(x.data(), out, x.size() * sizeof(Z));
    return out;
  };
  Buffer ab = buffer(a), bb = buffer(b), cb = buffer(c0);
  h.gemm(alpha, {&ab, 0, Complex::c128, m, k, lda, Layout::row_major}, false,
         {&bb, 0, Complex::c128, k, n, ldb, Layout::row_major}, true, beta,
         {&cb, 0, Complex::c128, m, n, ldc, Layout::column_major});
  std::vector<Z> got(c0.size());
  backend->copy_out(cb, got.data(), got.size() * sizeof(Z));
  EXPECT_TRUE(same_parts(expected, got, ldc, n));
}

TEST(Cgemm, IsSgemmOnTheRealForm) {
  for (const Products& products : {kTensorCores, Products{CrtProducts{}}}) {
    for (const Options& options :
         {Options{.mode = Mode::sp}, Options{.mode = Mode::tunable, .splits = 3}}) {
      auto backend = host::make_emulator_backend(2);
      Handle h(*backend, products, options);
      for (char ta : kOps) {
        for (char tb : kOps) {
          SCOPED_TRACE(std::string(1, ta) + tb);
          const Operands<float> o(ta, tb, 5, 3, 6, 31);
          EXPECT_TRUE(same_parts(joined(o.real_routine(h, -1.5f, 0.5f), o.c0, o.ldc, o.m, o.n),
                                 o.complex_routine(h, -1.5f, 0.5f), o.ldc, o.n));
        }
      }
    }
  }
}

TEST(Cgemm, ComplexAlphaAndBetaAreAppliedInBinary64) {
  // The scheme's binary64 value of each part (sgemm's value before its epilogue), then alpha and
  // beta in binary64 and one rounding to binary32: the value is the exact product here (k = 2,
  // small integers), so the expected parts follow from exact arithmetic.
  auto backend = host::make_emulator_backend(2);
  Handle h(*backend, CrtProducts{}, {.mode = Mode::sp});
  const std::vector<C> a = {{1, 2}, {3, -1}};  // 1 x 2
  const std::vector<C> b = {{2, 1}, {-1, 4}};  // 2 x 1
  std::vector<C> c = {{1.0f / 3, 0.5f}};       // C's old value, read before the call
  const C alpha{0.1f, 1.0f}, beta{1.0f, -1.0f / 3};
  h.cgemm('N', 'N', 1, 1, 2, alpha, a.data(), 1, b.data(), 2, beta, c.data(), 1);
  // s = (1 + 2i)(2 + i) + (3 - i)(-1 + 4i) = (0 + 5i) + (1 + 13i) = 1 + 18i.
  const double ar = alpha.real(), ai = alpha.imag(), br = beta.real(), bi = beta.imag();
  const double cr0 = static_cast<double>(1.0f / 3), ci = 0.5;
  const double re =
      add_rn(sub_rn(mul_rn(ar, 1.0), mul_rn(ai, 18.0)), sub_rn(mul_rn(br, cr0), mul_rn(bi, ci)));
  const double im =
      add_rn(add_rn(mul_rn(ar, 18.0), mul_rn(ai, 1.0)), add_rn(mul_rn(br, ci), mul_rn(bi, cr0)));
  EXPECT_EQ(c[0].real(), static_cast<float>(re));
  EXPECT_EQ(c[0].imag(), static_cast<float>(im));
}

TEST(ComplexGemm, QuickReturnsAndBetaOnly) {
  auto backend = host::make_emulator_backend(2);
  Handle h(*backend, kTensorCores, {.mode = Mode::dp});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // m = 0: nothing touched, null pointers fine.
  h.zgemm('N', 'N', 0, 2, 2, 1.0, nullptr, 1, nullptr, 2, 0.0, nullptr, 1);
  // alpha = 0: C := beta C, A and B not read; beta = 0: +0, C not read.
  const std::vector<Z> nan_a = {{nan, nan}};
  std::vector<Z> c = {{2.0, -3.0}, {-0.0, 1.0}};
  h.zgemm('N', 'N', 2, 1, 1, 0.0, nan_a.data(), 2, nan_a.data(), 1, {0.0, 1.0}, c.data(), 2);
  EXPECT_EQ(c[0], Z(3.0, 2.0));
  EXPECT_EQ(c[1], Z(-1.0, -0.0));
  c = {{nan, nan}, {1.0, 1.0}};
  h.zgemm('N', 'N', 2, 1, 0, 1.0, nullptr, 2, nullptr, 1, 0.0, c.data(), 2);
  for (const Z& v : c) {
    EXPECT_FALSE(std::signbit(v.real()) || std::signbit(v.imag()));
    EXPECT_EQ(v, Z(0.0, 0.0));
  }
}

TEST(ComplexGemm, ARealAlphaScalesEachPartOnItsOwn) {
  // (1 + i) 2^600 squared: Re = 0 exactly, Im = 2^1201 overflows to Inf (mode cr). A real alpha
  // multiplies each part (Re stays +0, as dgemm on the real form gives); a complex one forms
  // alpha.im Im, and 0 * Inf in the product of a zero imaginary part would have made Re NaN.
  auto backend = host::make_emulator_backend(2);
  Handle h(*backend, kTensorCores, {.mode = Mode::cr});
  const double big = std::ldexp(1.0, 600);
  const std::vector<Z> a = {{big, big}}, b = {{big, big}};
  std::vector<Z> c(1);
  h.zgemm('N', 'N', 1, 1, 1, {2.0, 0.0}, a.data(), 1, b.data(), 1, 0.0, c.data(), 1);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(c[0].real()), 0u);
  EXPECT_EQ(c[0].imag(), INFINITY);
  h.zgemm('N', 'N', 1, 1, 1, {2.0, 1.0}, a.data(), 1, b.data(), 1, 0.0, c.data(), 1);
  EXPECT_EQ(c[0].real(), -INFINITY);  // 2 * 0 - 1 * Inf
  EXPECT_EQ(c[0].imag(), INFINITY);   // 2 * Inf + 1 * 0
}

TEST(ComplexGemm, BadArgumentsAndModesAreRefused) {
  auto backend = host::make_emulator_backend(2);
  Handle h(*backend, kTensorCores, {.mode = Mode::dp});
  std::vector<Z> x(100, 1.0);
  const Z* p = x.data();
  Z* c = x.data();
  expect_invalid_argument([&] { h.zgemm('X', 'N', 2, 2, 2, 1.0, p, 2, p, 2, 0.0, c, 2); },
                          "zgemm: parameter 1 (transa)");
  expect_invalid_argument([&] { h.zgemm('N', 'N', 2, 2, -1, 1.0, p, 2, p, 2, 0.0, c, 2); },
                          "zgemm: parameter 5 (k)");
  expect_invalid_argument([&] { h.zgemm('C', 'N', 5, 2, 3, 1.0, p, 2, p, 3, 0.0, c, 5); },
                          "zgemm: parameter 8 (lda)");
  expect_invalid_argument([&] { h.zgemm('N', 'C', 2, 3, 2, 1.0, p, 2, p, 2, 0.0, c, 2); },
                          "zgemm: parameter 10 (ldb)");
  expect_invalid_argument([&] { h.zgemm('N', 'N', 2, 2, 2, 1.0, p, 2, nullptr, 2, 0.0, c, 2); },
                          "zgemm: parameter 9 (b)");
  std::vector<C> y(100, 1.0f);
  expect_invalid_argument(
      [&] { h.cgemm('N', 'N', 2, 2, 2, 1.0f, y.data(), 2, y.data(), 2, 0.0f, y.data(), 2); },
      "cgemm: mode dp is for fp64 operands");
  Handle sp(*backend, kTensorCores, {.mode = Mode::sp});
  expect_invalid_argument([&] { sp.zgemm('N', 'N', 2, 2, 2, 1.0, p, 2, p, 2, 0.0, c, 2); },
                          "zgemm: mode sp is for fp32 operands");
  Handle up(*backend, kTensorCores, {.mode = Mode::cr, .rounding = fp64::Direction::upward});
  expect_invalid_argument(
      [&] {
        up.zgemm('N', 'N', 2, 2, 2, {1.0, 1.0}, p, 2, p, 2, 0.0, c, 2);
      },
      "rounding upward is for C := A B (alpha = 1, beta = 0), got alpha (1.000000, 1.000000)");
}

TEST(ComplexGemm, TheAccurateHandleGivesCorrectlyRoundedParts) {
  // The same real form serves every BlasRoutines: the accurate handle's exact inner products.
  const std::int64_t m = 3, n = 4, k = 5;
  auto backend = host::make_emulator_backend(2);
  accurate::Handle h(*backend, InnerProduct::exact);
  const auto a = complex_matrix<double>(m, k, m, 2.0, 41);
  const auto b = complex_matrix<double>(n, k, n, 2.0, 42);  // 'T'
  std::vector<Z> c(static_cast<std::size_t>(m * n));
  h.zgemm('N', 'T', m, n, k, 1.0, a.data(), m, b.data(), n, 0.0, c.data(), m);
  const auto exact = reference::correctly_rounded_gemm(
      m, 2 * n, 2 * k, real_form_a(a, m, 'N', m, k), real_form_b(b, n, 'T', k, n));
  EXPECT_TRUE(same_parts(joined(exact, c, m, m, n), c, m, n));
}

}  // namespace
}  // namespace tcemu::ozaki
