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

#include <tcemu/reference/phi_values.hpp>
#include <tcemu/reference/plain_gemm.hpp>

namespace tcemu::experiments {

using reference::phi_values;
using reference::plain_dgemm;

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
