#include "exact_sum.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace tcemu::detail {

void ExactAccumulator::add(double x) {
  any_term_ = true;
  if (!std::isfinite(x)) {
    special_.add(x, 1.0);
    return;
  }
  if (!(x == 0 && std::signbit(x))) all_negative_zero_ = false;
  sum_.add(x);
}

double ExactAccumulator::round(std::int64_t shift) const {
  if (special_.any()) return special_.value();
  // The sum is an integer below 2^(4288) times 2^-2148: a shift beyond +-2^14 rounds every
  // nonzero sum to Inf or to zero, as a shift of +-2^14 does, and keeps the int arithmetic of
  // magnitude() far from overflow.
  constexpr std::int64_t kLimit = std::int64_t{1} << 14;
  const double r = sum_.round_to_double(static_cast<int>(std::clamp(shift, -kLimit, kLimit)));
  if (r == 0 && any_term_ && all_negative_zero_) return -0.0;
  return r;
}

}  // namespace tcemu::detail
