// Inputs and references for the Ozaki tests: the papers' matrices, the correctly rounded product
// from MPFR, and the plain DGEMM the papers compare against.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <tcemu/reference/exact_gemm.hpp>

namespace tcemu::ozaki::testing {

// (rand - 0.5) * exp(phi * randn), the inputs of Mukunoki et al.
inline std::vector<double> phi_matrix(std::int64_t rows, std::int64_t cols, double phi,
                                      std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> x(static_cast<std::size_t>(rows * cols));
  for (double& v : x) v = (uniform(rng) - 0.5) * std::exp(phi * normal(rng));
  return x;
}

// The correctly rounded product (reference/exact_gemm.hpp).
inline std::vector<double> correctly_rounded_product(std::int64_t m, std::int64_t n, std::int64_t k,
                                                     const std::vector<double>& a,
                                                     const std::vector<double>& b) {
  return reference::correctly_rounded_gemm(m, n, k, a, b);
}

// Plain DGEMM: every element summed in k order with binary64 round to nearest.
inline std::vector<double> plain_dgemm(std::int64_t m, std::int64_t n, std::int64_t k,
                                       const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> c(static_cast<std::size_t>(m * n), 0.0);
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = 0; i < m; ++i) {
      double s = 0.0;
      for (std::int64_t p = 0; p < k; ++p) {
        const double t = a[p * m + i] * b[j * k + p];
        s = s + t;
      }
      c[j * m + i] = s;
    }
  }
  return c;
}

// max |x - r| / |r| over the elements with r != 0 (elements with r == 0 count when x != 0).
inline double max_relative_error(const std::vector<double>& x, const std::vector<double>& r) {
  double worst = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (r[i] == 0.0) {
      if (x[i] != 0.0) worst = INFINITY;
      continue;
    }
    worst = std::fmax(worst, std::fabs(x[i] - r[i]) / std::fabs(r[i]));
  }
  return worst;
}

}  // namespace tcemu::ozaki::testing
