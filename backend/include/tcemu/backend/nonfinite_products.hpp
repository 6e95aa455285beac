// The IEEE value of a sum of products whose factors include NaN or Inf, for host and device: fed
// with the products x * y that have a non-finite factor (in any order; the finite products do not
// change the result), it gives what IEEE arithmetic gives for the whole sum: NaN when a factor is
// NaN, a product is 0 * Inf or both infinite signs occur, otherwise the Inf of the products' sign.
// A sum of terms x is the sum of the products x * 1.
//
// Users: propagate_nonfinite_fp32 (fp32_split_steps.hpp, fp32 factors, result fp32_bits()), the
// exact inner product (exact_dot.hpp), OzakiSteps::exact_sum and the epilogue's special sums
// (ozaki_elements.hpp), all with value(). The NaN is the one its step family writes (nan.hpp).
#pragma once

#include <cstdint>
#include <type_traits>

#include <tcemu/backend/nan.hpp>
#include <tcemu/emulator/fp64_bits.hpp>
#include <tcemu/emulator/host_device.hpp>

namespace tcemu {

struct NonfiniteProducts {
  bool nan = false;
  bool plus_infinity = false;
  bool minus_infinity = false;

  // Records x * y when x or y is not finite; nothing otherwise.
  TCEMU_HOST_DEVICE void add(double x, double y) {
    const std::uint64_t a = fp64::bits(x), b = fp64::bits(y);
    if (fp64::is_finite(a) && fp64::is_finite(b)) return;
    if (fp64::is_nan(a) || fp64::is_nan(b) || fp64::is_zero(a) || fp64::is_zero(b)) {
      nan = true;  // a NaN factor, or 0 times the other factor, which is infinite
    } else {
      (((a ^ b) & fp64::kSignBit) != 0 ? minus_infinity : plus_infinity) = true;
    }
  }
  // The same for fp32 factors (bit patterns), widened exactly: the class and sign of each factor
  // are kept, which is all add() reads.
  TCEMU_HOST_DEVICE void add_fp32(std::uint32_t x, std::uint32_t y) {
    add(fp64::widen(x), fp64::widen(y));
  }
  // Bit patterns must go through add_fp32: no implicit conversion of their integers to double.
  template <class X, class Y>
  requires(std::is_integral_v<X> || std::is_integral_v<Y>) void add(X, Y) = delete;
  TCEMU_HOST_DEVICE void add(const NonfiniteProducts& other) {
    nan = nan || other.nan;
    plus_infinity = plus_infinity || other.plus_infinity;
    minus_infinity = minus_infinity || other.minus_infinity;
  }
  // True when a product had a non-finite factor: the sum is value().
  TCEMU_HOST_DEVICE bool any() const { return nan || plus_infinity || minus_infinity; }
  TCEMU_HOST_DEVICE bool is_nan() const { return nan || (plus_infinity && minus_infinity); }
  // The binary64 NaN (step_nan::ozaki_fp64) or Inf; only when any().
  TCEMU_HOST_DEVICE double value() const {
    if (is_nan()) return fp64::value(step_nan::ozaki_fp64);
    return fp64::value(fp64::kExponentMask | (minus_infinity ? fp64::kSignBit : 0));
  }
  // The binary32 NaN (step_nan::fp32_split) or Inf, as bits; only when any().
  TCEMU_HOST_DEVICE std::uint32_t fp32_bits() const {
    if (is_nan()) return step_nan::fp32_split;
    return minus_infinity ? 0xFF800000u : 0x7F800000u;
  }
};

}  // namespace tcemu
