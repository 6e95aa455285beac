// Error-free transformations, for host and device: Knuth's TwoSum and TwoProd with a fused
// multiply-add, on the correctly rounded operations of rounded_arithmetic.hpp (one IEEE 754
// operation each, rounded to nearest even with subnormals, never contracted).
#pragma once

#include <type_traits>

#include <tcemu/emulator/host_device.hpp>
#include <tcemu/emulator/rounded_arithmetic.hpp>

namespace tcemu {

// The floating-point types of the accurate inner products.
template <typename T>
concept RealType = std::is_same_v<T, float> || std::is_same_v<T, double>;

// s + e = a + b exactly, s = RN(a + b) (Knuth's TwoSum, 6 operations, no branch). Exact for all
// finite a, b whose sum does not overflow: the error of a rounded addition is representable.
template <RealType T>
struct SumAndError {
  T sum;
  T error;
};
template <RealType T>
TCEMU_HOST_DEVICE inline SumAndError<T> two_sum(T a, T b) {
  const T s = add_rn(a, b);
  const T bb = sub_rn(s, a);
  const T e = add_rn(sub_rn(a, sub_rn(s, bb)), sub_rn(b, bb));
  return {s, e};
}

// p + e = a * b exactly, p = RN(a b), e = fma(a, b, -p). Exact when p does not overflow and
// e_a + e_b >= emin + precision - 1 (e_x the exponent of x's leading bit; binary64: -970,
// binary32: -103), i.e. when the product's error is not below the subnormal grid (Boldo and
// Muller). The callers state how they guarantee it.
template <RealType T>
TCEMU_HOST_DEVICE inline SumAndError<T> two_prod(T a, T b) {
  const T p = mul_rn(a, b);
  return {p, fma_rn(a, b, -p)};
}

}  // namespace tcemu
