// The IEEE value of a sum of products whose factors include NaN or Inf, for host and device: fed
// with the products x * y that have a non-finite factor (in any order; the finite products do not
// change the result), it gives what IEEE arithmetic gives for the whole sum: NaN when a factor is
// NaN, a product is 0 * Inf or both infinite signs occur, otherwise the Inf of the products' sign.
// A sum of terms x is the sum of the products x * 1. The NaN is the canonical quiet NaN
// 0x7FF8000000000000 (IEEE 754 leaves a NaN result's payload to the hardware).
//
// Users: the exact inner product (exact_dot.hpp), Backend::exact_sum and the epilogue's special
// sums (ozaki_elements.hpp).
#pragma once

#include <cstdint>

#include <tcemu/emulator/fp64_bits.hpp>
#include <tcemu/emulator/host_device.hpp>

namespace tcemu {

struct NonFiniteProducts {
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
  TCEMU_HOST_DEVICE void add(const NonFiniteProducts& other) {
    nan = nan || other.nan;
    plus_infinity = plus_infinity || other.plus_infinity;
    minus_infinity = minus_infinity || other.minus_infinity;
  }
  // True when a product had a non-finite factor: the sum is value().
  TCEMU_HOST_DEVICE bool any() const { return nan || plus_infinity || minus_infinity; }
  // The NaN or the Inf; only when any().
  TCEMU_HOST_DEVICE double value() const {
    if (nan || (plus_infinity && minus_infinity)) return fp64::value(fp64::kCanonicalNan);
    return fp64::value(fp64::kExponentMask | (minus_infinity ? fp64::kSignBit : 0));
  }
};

}  // namespace tcemu
