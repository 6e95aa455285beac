// Ill-conditioned dot products with a chosen condition number: GenDot of Ogita, Rump and Oishi
// (SISC 26(6), 2005, Algorithm 6.1). The first half of x and y are random numbers with exponents
// spread up to b/2 (b = log2 of the target condition); each element of the second half is chosen
// so that the exact dot product so far cancels to a number of decreasing size; the elements are
// then shuffled. The exact dot products along the way are the long accumulator's (exact_dot.hpp).
#pragma once

#include <cstdint>
#include <vector>

namespace tcemu::reference {

struct IllConditionedDot {
  std::vector<double> x, y;
  double exact;      // x'y correctly rounded
  double condition;  // 2 |x|'|y| / |x'y|, as Ogita, Rump and Oishi define it
};

// n >= 6, target_condition >= 1. The condition reached is close to the target (within a few
// orders of magnitude), as with the original generator.
IllConditionedDot ill_conditioned_dot(std::int64_t n, double target_condition, std::uint64_t seed);

}  // namespace tcemu::reference
