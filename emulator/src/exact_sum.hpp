// The correctly rounded sum of binary64 numbers: an exact fixed-point accumulator (Kulisch's long
// accumulator) over the whole binary64 range, rounded once to nearest even. The host's
// implementation of Backend::exact_sum (backend.hpp).
//
// Every finite binary64 number is an integer multiple of 2^-1074 below 2^1024, i.e. an integer
// below 2^2098 in units of 2^-1074. The accumulator holds a two's-complement integer of kLimbs
// 64-bit limbs (2176 bits): room for 2^77 terms of the largest magnitude before the sign bit
// could be reached, far more than any stack.
#pragma once

#include <array>
#include <cstdint>

namespace tcemu::detail {

class ExactAccumulator {
 public:
  void add(double x);
  // 2^shift times the accumulated sum, rounded once to nearest even (the rules of
  // Backend::exact_sum for zeros, overflow, Inf and NaN).
  double round(std::int64_t shift = 0) const;

 private:
  static constexpr int kLimbs = 34;
  std::array<std::uint64_t, kLimbs> limbs_{};
  bool any_term_ = false;
  bool all_negative_zero_ = true;
  bool nan_ = false;
  bool plus_inf_ = false;
  bool minus_inf_ = false;
};

}  // namespace tcemu::detail
