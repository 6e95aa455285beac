// Host matrices for the markidis tests: fp32 inputs, an FP64 reference product, a plain float
// SGEMM, the relative residual, a run of a scheme through the emulator backend, and a bit-for-bit
// comparison of two results.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <tcemu/backend/backend.hpp>
#include <tcemu/host/host_backends.hpp>
#include <tcemu/markidis/gemm.hpp>
#include <tcemu/reference/relative_residual.hpp>
#include <tcemu/test/same_bits.hpp>

namespace tcemu::markidis::testing {

// rows x cols, column major (ld = rows).
struct Matrix {
  std::int64_t rows = 0, cols = 0;
  std::vector<float> v;
  float& operator()(std::int64_t i, std::int64_t j) { return v[j * rows + i]; }
  float operator()(std::int64_t i, std::int64_t j) const { return v[j * rows + i]; }
};

// Uniform in [-1, 1] times 2^e with e uniform in [-spread, spread].
inline Matrix random_matrix(std::int64_t rows, std::int64_t cols, std::uint32_t seed,
                            int spread = 0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-spread, spread);
  Matrix m{rows, cols, std::vector<float>(static_cast<std::size_t>(rows * cols))};
  for (float& x : m.v) x = std::ldexp(uniform(rng), exponent(rng));
  return m;
}

// A B in binary64: every product of two floats is exact, and k <= 2^12 sums lose at most
// k 2^-53 relative to the sum of magnitudes, far below the fp32 effects measured against it.
inline std::vector<double> reference_product(const Matrix& a, const Matrix& b) {
  std::vector<double> c(static_cast<std::size_t>(a.rows * b.cols), 0.0);
  for (std::int64_t j = 0; j < b.cols; ++j) {
    for (std::int64_t p = 0; p < a.cols; ++p) {
      const double bv = b(p, j);
      for (std::int64_t i = 0; i < a.rows; ++i) c[j * a.rows + i] += a(i, p) * bv;
    }
  }
  return c;
}

// The plain fp32 SGEMM of a CPU: each element a float sum in k order (no fma).
inline Matrix float_sgemm(const Matrix& a, const Matrix& b) {
  Matrix c{a.rows, b.cols, std::vector<float>(static_cast<std::size_t>(a.rows * b.cols), 0.0f)};
  for (std::int64_t i = 0; i < a.rows; ++i) {
    for (std::int64_t j = 0; j < b.cols; ++j) {
      float sum = 0.0f;
      for (std::int64_t p = 0; p < a.cols; ++p) {
        const float product = a(i, p) * b(p, j);
        sum += product;
      }
      c(i, j) = sum;
    }
  }
  return c;
}

// ||C - Cref||_F / ||Cref||_F.
inline double relative_residual(const Matrix& c, const std::vector<double>& reference) {
  return reference::relative_residual(c.v, reference);
}

// C = A B by `scheme` on `datapath`, through the emulator backend's sgemm.
inline Matrix run(const Scheme& scheme, const Datapath& datapath, const Matrix& a, const Matrix& b,
                  int threads = 0) {
  auto backend = host::make_emulator_backend();
  Matrix c{a.rows, b.cols, std::vector<float>(static_cast<std::size_t>(a.rows * b.cols))};
  sgemm(*backend, scheme, datapath, 'N', 'N', a.rows, b.cols, a.cols, 1.0f, a.v.data(), a.rows,
        b.v.data(), b.rows, 0.0f, c.v.data(), c.rows, threads);
  return c;
}

// `got` has the bits of `expected`, element by element; a failure lists the first differing
// elements with what row i of A and column j of B span, where C = A B is what they hold.
inline ::testing::AssertionResult same_bits(const Matrix& expected, const Matrix& got,
                                            const Matrix& a, const Matrix& b) {
  if (got.rows != expected.rows || got.cols != expected.cols) {
    return ::testing::AssertionFailure()
           << "got is " << got.rows << " x " << got.cols << ", expected " << expected.rows << " x "
           << expected.cols;
  }
  return test::same_bits(expected.v, got.v, expected.rows, expected.cols,
                         {.inputs = test::gemm_inputs(a.rows, a.cols, a.v.data(), b.v.data())});
}

}  // namespace tcemu::markidis::testing
