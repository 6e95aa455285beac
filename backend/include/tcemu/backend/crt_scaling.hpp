// The element functions of the CRT scaling steps (crt_steps.hpp: crt_scale, crt_norm_scale): the
// summary of a vector that gives its exact shift, and the bound of its Euclidean norm that gives
// the norm scaling's shift. crt_moduli.hpp describes the scheme.
#pragma once

#include <bit>
#include <cstdint>

#include <tcemu/emulator/fp64_bits.hpp>
#include <tcemu/emulator/host_device.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu::crt_elements {

// The number of trailing zero bits of x != 0.
TCEMU_HOST_DEVICE inline int trailing_zeros(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __ffsll(static_cast<long long>(x)) - 1;
#else
  return std::countr_zero(x);
#endif
}

// The vector summary of crt_scale: |v_p| < 2^top for every finite v_p, and every finite v_p is
// a multiple of 2^low (the exponent of its lowest set bit); empty when no element is nonzero;
// nonfinite when some v_p is an Inf or a NaN.
struct VectorBits {
  int top = -100000;
  int low = 100000;
  bool nonfinite = false;
  TCEMU_HOST_DEVICE bool empty() const { return top == -100000; }
  TCEMU_HOST_DEVICE void add(double x) {
    const std::uint64_t b = fp64::bits(x);
    if (!fp64::is_finite(b)) {
      nonfinite = true;
      return;
    }
    if (fp64::is_zero(b)) return;
    const fp64::Fields f = fp64::fields(x);
    const int trailing = trailing_zeros(f.significand);
    const int lead = fp64::leading_exponent(b & ~fp64::kSignBit) + 1;
    top = lead > top ? lead : top;
    low = f.exponent + trailing < low ? f.exponent + trailing : low;
  }
  // The shift of the vector: the least that holds every element exactly (-low), or fewer so
  // that |v 2^shift| < 2^max_bits; 0 for an empty vector.
  TCEMU_HOST_DEVICE int shift(int max_bits) const {
    if (empty()) return 0;
    return -low < max_bits - top ? -low : max_bits - top;
  }
  // Bits of the largest scaled integer when held exactly: top - low (0 when empty).
  TCEMU_HOST_DEVICE int exact_bits() const { return empty() ? 0 : top - low; }
};

// The norm scaling (crt_steps.hpp, crt_norm_scale): a bound on |x| 2^shift by an integer,
// ceil(|x| 2^shift) for finite nonzero x (0 for zeros, Inf and NaN), given |x| 2^shift < 2^20
// (VectorBits::shift(bits) with bits <= 20 gives it): |x| = s 2^f (fields), so it is s 2^g for
// g = f + shift >= 0 and s shifted right by -g, plus one when a nonzero bit is shifted out.
inline constexpr int kNormBoundBits = 20;

TCEMU_HOST_DEVICE inline std::uint64_t bound_magnitude(double x, int shift) {
  const std::uint64_t b = fp64::bits(x);
  if (!fp64::is_finite(b) || fp64::is_zero(b)) return 0;
  const fp64::Fields f = fp64::fields(x);
  const int g = f.exponent + shift;
  if (g >= 0) return f.significand << g;
  if (g <= -64) return 1;
  const std::uint64_t q = f.significand >> -g;
  return (f.significand & ((std::uint64_t{1} << -g) - 1)) != 0 ? q + 1 : q;
}

// The sums of a vector's bound magnitudes X_p = bound_magnitude(x_p, bound_shift) (X_p <=
// 2^20, fewer than 2^24 elements: exact in uint64 in any order): sum X_p, sum X_p^2, max X_p.
struct MagnitudeSums {
  std::uint64_t sum = 0;
  std::uint64_t squares = 0;
  std::uint64_t largest = 0;
  TCEMU_HOST_DEVICE void add(double x, int bound_shift) {
    const std::uint64_t b = bound_magnitude(x, bound_shift);
    sum += b;
    squares += b * b;
    largest = b > largest ? b : largest;
  }
};

// What the norm scaling learns of a vector (its MagnitudeSums at bound_shift), as exponents of
// x's own scale: ||x||_2 <= 2^-rho, ||x||_1 <= 2^log2_norm1 and |x_p| < 2^top. |x_p| <= X_p
// 2^-bound_shift (bound_magnitude rounds up), so rho = bound_shift - ceil(log2(N) / 2) with N =
// sum X_p^2 (ceil(log2(N) / 2) = ceil(bit_width(N - 1) / 2)), log2_norm1 = ceil(log2 sum X_p) -
// bound_shift and top = bit_width(max X_p) - bound_shift. A vector without a nonzero finite
// element (N = 0) is kEmptyVector in every field.
inline constexpr int kEmptyVector = -(1 << 30);
struct VectorNorm {
  int rho = kEmptyVector;
  int log2_norm1 = kEmptyVector;
  int top = kEmptyVector;
  TCEMU_HOST_DEVICE bool empty() const { return rho == kEmptyVector; }
};

TCEMU_HOST_DEVICE inline VectorNorm vector_norm(const MagnitudeSums& s, int bound_shift) {
  VectorNorm v;
  if (s.squares == 0) return v;
  v.rho = bound_shift - (tcemu::detail::bit_width(s.squares - 1) + 1) / 2;
  v.log2_norm1 = tcemu::detail::bit_width(s.sum - 1) - bound_shift;  // sum >= 1
  v.top = tcemu::detail::bit_width(s.largest) - bound_shift;
  return v;
}

// The shift of a vector under the norm scaling, gamma + rho (0 for an empty vector): with the
// bound shift s and t = gamma - ceil(log2(N) / 2) >= 0 (the largest integer with N 4^t <=
// 4^gamma), every integer x_p 2^(s + t) rounded to nearest has magnitude at most 2^t X_p (an
// integer at least |x_p| 2^(s + t)), so the vector's integers have Euclidean norm at most 2^t
// sqrt(N) <= 2^gamma.
TCEMU_HOST_DEVICE inline int norm_shift(const VectorNorm& v, int gamma) {
  return v.empty() ? 0 : gamma + v.rho;
}

}  // namespace tcemu::crt_elements
