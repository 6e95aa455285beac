// Inputs and references for the Ozaki tests: the papers' matrices, the correctly rounded product
// from MPFR, and the plain DGEMM the papers compare against.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <tcemu/reference/exact_gemm.hpp>
#include <tcemu/reference/phi_values.hpp>
#include <tcemu/reference/plain_gemm.hpp>

namespace tcemu::ozaki::testing {

// A rows x cols matrix of (rand - 0.5) exp(phi randn), the inputs of Mukunoki et al.
inline std::vector<double> phi_matrix(std::int64_t rows, std::int64_t cols, double phi,
                                      std::uint64_t seed) {
  return reference::phi_values(rows * cols, phi, seed);
}

// The correctly rounded product (reference/exact_gemm.hpp).
inline std::vector<double> correctly_rounded_product(std::int64_t m, std::int64_t n, std::int64_t k,
                                                     const std::vector<double>& a,
                                                     const std::vector<double>& b) {
  return reference::correctly_rounded_gemm(m, n, k, a, b);
}

using reference::plain_dgemm;

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
