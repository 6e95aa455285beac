// The papers' test matrices, plain DGEMM on the host, and the accuracy of a computed product
// against the correctly rounded one as the Ozaki papers measure it: the largest relative error over
// the elements whose reference is nonzero, and the number of elements whose bits differ from the
// correctly rounded result.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace tcemu::experiments {

// `count` values (rand - 0.5) exp(phi randn) (Mukunoki et al.; phi sets the exponent range) from
// a Mersenne twister seeded with `seed`.
inline std::vector<double> phi_matrix(std::int64_t count, double phi, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::normal_distribution<double> normal;
  std::vector<double> x(static_cast<std::size_t>(count));
  for (double& v : x) v = (uniform(rng) - 0.5) * std::exp(phi * normal(rng));
  return x;
}

// Plain DGEMM, A (m x k) and B (k x n) column major: each element summed in k order in binary64,
// no FMA (the reference BLAS order).
inline std::vector<double> plain_dgemm(std::int64_t m, std::int64_t n, std::int64_t k,
                                       const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> at(static_cast<std::size_t>(m * k));
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t p = 0; p < k; ++p) at[i * k + p] = a[p * m + i];
  }
  std::vector<double> c(static_cast<std::size_t>(m * n));
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = 0; i < m; ++i) {
      double s = 0.0;
      for (std::int64_t p = 0; p < k; ++p) {
        const double t = at[i * k + p] * b[j * k + p];
        s = s + t;
      }
      c[j * m + i] = s;
    }
  }
  return c;
}

struct Accuracy {
  double max_relative_error = 0;
  std::int64_t not_correctly_rounded = 0;
};

inline Accuracy accuracy(const std::vector<double>& x, const std::vector<double>& exact) {
  Accuracy a;
  for (std::size_t e = 0; e < x.size(); ++e) {
    if (std::bit_cast<std::uint64_t>(x[e]) != std::bit_cast<std::uint64_t>(exact[e])) {
      ++a.not_correctly_rounded;
    }
    if (exact[e] != 0.0) {
      a.max_relative_error =
          std::fmax(a.max_relative_error, std::fabs(x[e] - exact[e]) / std::fabs(exact[e]));
    }
  }
  return a;
}

}  // namespace tcemu::experiments
