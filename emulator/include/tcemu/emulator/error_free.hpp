// Error-free transformations (Knuth's TwoSum, TwoProd with a fused multiply-add) and the
// correctly rounded binary32/binary64 operations they are built from, for host and device.
//
// Every operation below is one IEEE 754 operation rounded to nearest even with subnormals (no
// flush to zero). On the host that is plain C++ arithmetic: the library is compiled with
// -ffp-contract=off, so no a * b + c is fused behind our back. On the device nvcc fuses by
// default (--fmad=true), which would change the bits of a + b * c, so device code uses the
// explicit _rn intrinsics.
#pragma once

#include <cmath>
#include <type_traits>

#include <tcemu/emulator/host_device.hpp>

namespace tcemu {

// The floating-point types of the accurate inner products.
template <typename T>
concept RealType = std::is_same_v<T, float> || std::is_same_v<T, double>;

TCEMU_HOST_DEVICE inline double add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
TCEMU_HOST_DEVICE inline float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
TCEMU_HOST_DEVICE inline double sub_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}
TCEMU_HOST_DEVICE inline float sub_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
TCEMU_HOST_DEVICE inline double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
TCEMU_HOST_DEVICE inline float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
// a * b + c with one rounding.
TCEMU_HOST_DEVICE inline double fma_rn(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
TCEMU_HOST_DEVICE inline float fma_rn(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

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
