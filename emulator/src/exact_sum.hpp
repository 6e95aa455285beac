// The correctly rounded sum of binary64 numbers with the rules of Backend::exact_sum (backend.hpp):
// the host's implementation of that step, on the LongAccumulator (long_accumulator.hpp) that the
// accurate inner products use.
#pragma once

#include <cstdint>

#include <tcemu/emulator/exact_dot.hpp>
#include <tcemu/emulator/long_accumulator.hpp>

namespace tcemu::detail {

class ExactAccumulator {
 public:
  void add(double x);
  // 2^shift times the accumulated sum, rounded once to nearest even (the rules of
  // Backend::exact_sum for zeros, overflow, Inf and NaN).
  double round(std::int64_t shift = 0) const;

 private:
  LongAccumulator sum_;
  NonFiniteProducts special_;  // the terms x as products x * 1
  bool any_term_ = false;
  bool all_negative_zero_ = true;
};

}  // namespace tcemu::detail
