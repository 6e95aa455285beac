// The norm-wise relative residual ||C - Cref||_F / ||Cref||_F of an fp32 result against a binary64
// reference of the same shape and element order: the accuracy figure of the error-corrected
// SGEMM experiments, benchmarks and tests. Summed in binary64.
#pragma once

#include <cassert>
#include <cmath>
#include <span>

namespace tcemu::reference {

inline double relative_residual(std::span<const float> c, std::span<const double> reference) {
  assert(c.size() == reference.size());
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    const double d = static_cast<double>(c[i]) - reference[i];
    num += d * d;
    den += reference[i] * reference[i];
  }
  return std::sqrt(num / den);
}

}  // namespace tcemu::reference
