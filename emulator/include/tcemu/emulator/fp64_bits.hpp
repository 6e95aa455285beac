// IEEE 754 binary64 by its bit fields, the same code on the host and on the device
// (TCEMU_HOST_DEVICE): the element functions of the Ozaki steps (ozaki_elements.hpp) are built on
// these, so that the emulator backend and the GPU backend compute the same bits.
//
// Rounded operations are the IEEE 754 binary64 operations with round to nearest, ties to even,
// no flush of subnormals and never a fused multiply-add: device code calls the __d*_rn
// intrinsics, which nvcc never contracts; host code is compiled without contraction (ISO C++
// mode, -ffp-contract=off). Power-of-two scaling and the fp32 widening are integer arithmetic on
// the fields.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

#include <tcemu/emulator/host_device.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu::fp64 {

inline constexpr std::uint64_t kSignBit = std::uint64_t{1} << 63;
inline constexpr std::uint64_t kExponentMask = std::uint64_t{0x7FF} << 52;
inline constexpr std::uint64_t kFractionMask = (std::uint64_t{1} << 52) - 1;
// The NaN every Ozaki step writes (IEEE 754 leaves a NaN result's payload to the hardware).
inline constexpr std::uint64_t kCanonicalNan = 0x7FF8000000000000ULL;
inline constexpr std::uint32_t kCanonicalNan32 = 0x7FC00000u;

TCEMU_HOST_DEVICE inline std::uint64_t bits(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(x));
#else
  return std::bit_cast<std::uint64_t>(x);
#endif
}

TCEMU_HOST_DEVICE inline double value(std::uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(b));
#else
  return std::bit_cast<double>(b);
#endif
}

TCEMU_HOST_DEVICE constexpr bool is_finite(std::uint64_t b) {
  return (b & kExponentMask) != kExponentMask;
}
TCEMU_HOST_DEVICE constexpr bool is_nan(std::uint64_t b) {
  return (b & ~kSignBit) > kExponentMask;
}
TCEMU_HOST_DEVICE constexpr bool is_infinite(std::uint64_t b) {
  return (b & ~kSignBit) == kExponentMask;
}
TCEMU_HOST_DEVICE constexpr bool is_zero(std::uint64_t b) {
  return (b & ~kSignBit) == 0;
}

// The bits of |x| for a finite x, 0 for Inf and NaN. For finite numbers these order as the
// magnitudes do, so the largest finite magnitude of a vector is the integer maximum.
TCEMU_HOST_DEVICE constexpr std::uint64_t finite_magnitude(std::uint64_t b) {
  return is_finite(b) ? b & ~kSignBit : 0;
}

// The exponent of the leading bit of a finite nonzero magnitude (bits of |x|): x in
// [2^E, 2^(E+1)), E in [-1074, 1023]; a subnormal's leading fraction bit counts.
TCEMU_HOST_DEVICE inline int leading_exponent(std::uint64_t magnitude) {
  const auto field = static_cast<int>(magnitude >> 52);
  if (field != 0) return field - 1023;
  return detail::bit_width(magnitude) - 1 - 1074;
}

// x * 2^e rounded once to nearest even (IEEE 754 scaleB, C's scalbn): exact unless the result
// is subnormal (rounded once) or overflows (+-Inf). Zeros and Inf come back unchanged, NaN too
// (payload kept). Any e (sums of exponents in 64-bit integers): beyond +-4000 every finite
// nonzero x overflows or rounds to a zero, so e is clamped there, which changes no result.
//
// For finite nonzero x = sig * 2^lsb (sig < 2^53), the result's leading bit is at
// lead = lsb + e + (bit_width(sig) - 1). Normal range (lead >= -1022): the significand is kept
// whole, only the exponent field changes. Below it the result lives on the subnormal grid 2^-1074:
// sig is shifted right by `shift` = -1074 - (lsb + e) bits and rounded to nearest even on the
// dropped bits; a carry into 2^52 is the smallest normal number, which the same encoding gives.
TCEMU_HOST_DEVICE inline double scale(double x, std::int64_t e) {
  const std::uint64_t b = bits(x);
  const auto field = static_cast<int>((b >> 52) & 0x7FF);
  const std::uint64_t fraction = b & kFractionMask;
  if (field == 0x7FF || (field == 0 && fraction == 0)) return x;
  const auto shift_by = static_cast<int>(std::clamp<std::int64_t>(e, -4000, 4000));
  // A normal x whose result is normal: only the exponent field changes (the common case).
  if (field != 0 && field + shift_by >= 1 && field + shift_by <= 2046) {
    return value(b + (static_cast<std::uint64_t>(static_cast<std::int64_t>(shift_by)) << 52));
  }
  const std::uint64_t sign = b & kSignBit;
  const std::uint64_t sig = field == 0 ? fraction : fraction | (std::uint64_t{1} << 52);
  const int lsb = (field == 0 ? -1074 : field - 1075) + shift_by;
  const int msb = detail::bit_width(sig) - 1;
  const int lead = lsb + msb;
  if (lead > 1023) return value(sign | kExponentMask);
  if (lead >= -1022) {
    return value(sign | (static_cast<std::uint64_t>(lead + 1023) << 52) |
                 ((sig << (52 - msb)) & kFractionMask));
  }
  const int shift = -1074 - lsb;
  // lead < -1022: sig * 2^lsb < 2^-1022, so without a shift it is the subnormal encoding itself.
  if (shift <= 0) return value(sign | (sig << -shift));
  // sig < 2^53 <= 2^(shift - 1) for shift >= 54: below half the smallest subnormal.
  if (shift >= 54) return value(sign);
  std::uint64_t kept = sig >> shift;
  const std::uint64_t dropped = sig & ((std::uint64_t{1} << shift) - 1);
  const std::uint64_t half = std::uint64_t{1} << (shift - 1);
  if (dropped > half || (dropped == half && (kept & 1) != 0)) ++kept;
  return value(sign | kept);
}

// 2^e for e in [-1022, 1023], from the fields.
TCEMU_HOST_DEVICE inline double power_of_two(int e) {
  return value(static_cast<std::uint64_t>(e + 1023) << 52);
}

// The binary64 value of fp32 bits, exactly: what a C++ float-to-double conversion gives on x86,
// a NaN included (its payload shifted up, the quiet bit set).
TCEMU_HOST_DEVICE inline double widen(std::uint32_t f) {
  const std::uint64_t sign = static_cast<std::uint64_t>(f >> 31) << 63;
  const std::uint32_t field = (f >> 23) & 0xFF;
  const std::uint64_t fraction = f & 0x7FFFFF;
  if (field == 0xFF) {
    return value(sign | kExponentMask | (fraction == 0 ? 0 : (std::uint64_t{1} << 51)) |
                 (fraction << 29));
  }
  if (field == 0) {
    if (fraction == 0) return value(sign);
    // fraction * 2^-149, normal in binary64.
    const int msb = detail::bit_width(fraction) - 1;
    return value(sign | (static_cast<std::uint64_t>(msb - 149 + 1023) << 52) |
                 ((fraction << (52 - msb)) & kFractionMask));
  }
  return value(sign | (static_cast<std::uint64_t>(field - 127 + 1023) << 52) | (fraction << 29));
}

// x rounded to nearest even to binary32 (IEEE overflow to Inf), as bits; NaN gives 0x7FC00000.
TCEMU_HOST_DEVICE inline std::uint32_t narrow_bits(double x) {
  if (is_nan(bits(x))) return kCanonicalNan32;
#if defined(__CUDA_ARCH__)
  return __float_as_uint(__double2float_rn(x));
#else
  return std::bit_cast<std::uint32_t>(static_cast<float>(x));
#endif
}

// x with every NaN made kCanonicalNan.
TCEMU_HOST_DEVICE inline double canonical(double x) {
  return is_nan(bits(x)) ? value(kCanonicalNan) : x;
}

TCEMU_HOST_DEVICE inline double add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
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

TCEMU_HOST_DEVICE inline double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

}  // namespace tcemu::fp64
