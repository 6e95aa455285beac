// The correctly rounded inner product, ExBLAS-style (Collange, Defour, Graillat, Iakymchuk 2015),
// for host and device: sum_i x_i y_i exactly, rounded once to nearest even.
//
// Each product enters as p + e (TwoProd, exact) into a short floating-point expansion of kSlots
// binary64 numbers held in registers: the term x passes through the slots, each slot keeping
// TwoSum(slot, x).sum and passing the error on, and whatever is left after the last slot goes into
// a LongAccumulator (long_accumulator.hpp). TwoSum is exact, so at every moment
//   sum(slots) + accumulator = the exact sum of the terms so far,
// whatever the order of the terms: the result (the slots flushed into the accumulator, then one
// rounding) is the same bits for every order, thread count and backend.
//
// Conditions of exactness (binary64 operands): TwoProd is exact when 2^-969 <= |p| (then
// e_x + e_y >= -970, error-free.hpp) and p does not overflow; TwoSum is exact unless a sum
// overflows. Terms with |p| < 2^960 keep every slot below n 2^962, finite for n < 2^61. Products
// outside [2^-969, 2^960) (tiny, zero or huge, including products that overflow binary64) are
// added to the accumulator exactly as 106-bit integer products instead. binary32 operands: the
// product of two binary32 numbers is exact in binary64 (48 bits, exponents in [-298, 256]), so it
// enters the slots directly.
//
// Special operands (handled as BLAS would see them, nonfinite_products.hpp): any NaN, a product
// 0 * Inf, or products of both infinite signs give NaN; otherwise an Inf product gives that Inf.
// Finite products never overflow here: a finite exact sum whose rounding exceeds the largest
// finite number gives Inf.
#pragma once

#include <cstdint>

#include <tcemu/backend/error_free.hpp>
#include <tcemu/backend/long_accumulator.hpp>
#include <tcemu/backend/nonfinite_products.hpp>

namespace tcemu {

template <RealType T>
class ExactDot {
 public:
  static constexpr int kSlots = 4;

  TCEMU_HOST_DEVICE void add(T x, T y) {
    if constexpr (sizeof(T) == 4) {
      const double p = mul_rn(static_cast<double>(x), static_cast<double>(y));  // exact
      if (p - p == 0) {                                                         // finite
        push(p);
      } else {
        special_.add(x, y);
      }
    } else {
      const SumAndError<double> p = two_prod(x, y);
      const double magnitude = p.sum < 0 ? -p.sum : p.sum;  // false comparisons for NaN
      if (magnitude >= 0x1p-969 && magnitude < 0x1p960) {
        push(p.sum);
        push(p.error);
      } else if (x - x != 0 || y - y != 0) {  // an operand is Inf or NaN
        special_.add(x, y);
      } else {
        accumulator_.add_product(x, y);  // exact; zero products add nothing
      }
    }
  }

  // += other, exactly.
  TCEMU_HOST_DEVICE void add(ExactDot& other) {
    other.flush();
    flush();
    accumulator_.add(other.accumulator_);
    special_.add(other.special_);
  }

  // The exact sum rounded once to T; +0 for an exact zero.
  TCEMU_HOST_DEVICE T result() {
    flush();
    return round(accumulator_, special_);
  }

  // The whole sum in the accumulator (the slots emptied into it), for merging outside.
  TCEMU_HOST_DEVICE const LongAccumulator& flushed() {
    flush();
    return accumulator_;
  }
  TCEMU_HOST_DEVICE const NonfiniteProducts& special() const { return special_; }

  // The value of a sum held as an accumulator and its non-finite products, rounded once to T.
  TCEMU_HOST_DEVICE static T round(const LongAccumulator& sum, const NonfiniteProducts& special) {
    if (special.any()) return static_cast<T>(special.value());
    if constexpr (sizeof(T) == 4) {
      return sum.round_to_float();
    } else {
      return sum.round_to_double();
    }
  }

 private:
  TCEMU_HOST_DEVICE void push(double x) {
    for (int i = 0; i < kSlots; ++i) {
      const SumAndError<double> s = two_sum(slots_[i], x);
      slots_[i] = s.sum;
      x = s.error;
      if (x == 0) return;  // the later slots would be unchanged
    }
    accumulator_.add(x);
  }
  TCEMU_HOST_DEVICE void flush() {
    for (double& s : slots_) {
      accumulator_.add(s);
      s = 0;
    }
  }

  double slots_[kSlots] = {};
  LongAccumulator accumulator_;
  NonfiniteProducts special_;
};

}  // namespace tcemu
