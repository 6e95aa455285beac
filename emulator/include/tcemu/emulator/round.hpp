// The one round-and-pack routine: an exact value (sign, integer magnitude, exponent, sticky) to
// the bits of a format, under a chosen rounding. Every result the emulator produces goes through
// it. No global rounding mode and no host floating point is involved.
#pragma once

#include <cstdint>

#include <algorithm>
#include <bit>
#include <cassert>

#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/host_device.hpp>

namespace tcemu {

enum class Rounding {
  toward_zero,   // truncate the magnitude (RZ)
  nearest_even,  // round to nearest, ties to even (RN)
};

// What a result too large for the format becomes.
enum class Overflow {
  ieee,      // RN gives Inf, RZ gives the largest finite value (IEEE 754 rules)
  infinity,  // always Inf, whatever the rounding
  saturate,  // always the largest finite value
};

// Magnitude = significand * 2^lsb_exponent (+ something in (0, 2^lsb_exponent) if sticky).
struct ExactMagnitude {
  std::uint64_t significand;
  int lsb_exponent;
  // True when nonzero bits lie below lsb_exponent. Only meaningful when lsb_exponent is below
  // the output's last kept bit, which holds whenever the significand has precision + 2 bits.
  bool sticky;
};

namespace detail {

// Number of bits needed to write x (0 for 0). Device code uses the device's own count of leading
// zeros: libstdc++'s std::bit_width, compiled for the device through --expt-relaxed-constexpr,
// gave wrong conversions on an H200 (2026-11-22).
TCEMU_HOST_DEVICE inline int bit_width(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return 64 - __clzll(static_cast<long long>(x));
#else
  return static_cast<int>(std::bit_width(x));
#endif
}

// The stored fields, shifted into the container.
TCEMU_HOST_DEVICE constexpr std::uint32_t pack(const FloatFormat& format, bool negative,
                                               std::uint32_t exponent_field,
                                               std::uint64_t fraction) {
  const std::uint32_t stored = (negative ? format.sign_mask() : 0) |
                               (exponent_field << format.fraction_bits) |
                               static_cast<std::uint32_t>(fraction);
  return stored << format.padding_bits;
}

}  // namespace detail

TCEMU_HOST_DEVICE constexpr std::uint32_t encode_zero(const FloatFormat& format, bool negative) {
  return detail::pack(format, negative, 0, 0);
}

TCEMU_HOST_DEVICE constexpr std::uint32_t encode_max_finite(const FloatFormat& format,
                                                            bool negative) {
  const std::uint64_t significand = format.max_significand();
  return detail::pack(format, negative,
                      static_cast<std::uint32_t>(format.max_exponent() + format.bias()),
                      significand & ((std::uint64_t{1} << format.fraction_bits) - 1));
}

TCEMU_HOST_DEVICE constexpr std::uint32_t encode_infinity(const FloatFormat& format,
                                                          bool negative) {
  const std::uint32_t all_ones = (std::uint32_t{1} << format.exponent_bits) - 1;
  switch (format.special) {
    case SpecialEncoding::fn_e4m3:
      // E4M3 has no Inf: an infinite result is NaN (S.1111.111), as cvt without .satfinite gives.
      return detail::pack(format, negative, all_ones,
                          (std::uint64_t{1} << format.fraction_bits) - 1);
    case SpecialEncoding::finite:
      // FP6 and FP4 have neither Inf nor NaN: the largest finite value (cvt.satfinite's clamp).
      return encode_max_finite(format, negative);
    case SpecialEncoding::e8m0:
      return detail::pack(format, false, all_ones, 0);  // E8M0 has no Inf: its NaN, 0xFF
    case SpecialEncoding::ieee:
      break;
  }
  return detail::pack(format, negative, all_ones, 0);
}

// Rounds (-1)^negative * magnitude to `format`, keeping at most `precision` significant bits
// (format.fraction_bits + 1 when precision <= 0; fewer models datapaths that keep a narrower block
// result inside a wider register). Exact zero gives a zero of the given sign.
//
// Bit diagram for a normal result with p = precision significant bits:
//
//   significand:  1 x x ... x | r | s s s ... s        (plus the incoming sticky)
//                 <- p bits -> ^round bit  ^ the rest
//
// `kept` is the leading p bits (fewer if the result is subnormal: then the last kept bit sits at
// the format's smallest subnormal weight). RZ drops r and the rest; RN adds one ulp when r is set
// and either the rest is nonzero or the last kept bit is odd. The addition can carry kept to
// 2^p, which is still exact and is renormalised by the encoding step below.
TCEMU_HOST_DEVICE inline std::uint32_t round_pack(const FloatFormat& format, bool negative,
                                                  ExactMagnitude magnitude, Rounding rounding,
                                                  Overflow overflow, int precision = 0) {
  const int f = format.fraction_bits;
  const int p = precision > 0 ? std::min(precision, f + 1) : f + 1;
  // A zero significand with sticky set lies below half of every representable bit (the caller's
  // promise), so it rounds to zero under both roundings.
  if (magnitude.significand == 0) return encode_zero(format, negative);
  const int subnormal_lsb = format.min_exponent() - f;
  const int msb = detail::bit_width(magnitude.significand) - 1;
  const int leading_exponent = magnitude.lsb_exponent + msb;
  const int result_lsb = std::max(leading_exponent - (p - 1), subnormal_lsb);
  const int shift = result_lsb - magnitude.lsb_exponent;

  std::uint64_t kept;
  bool round_bit;
  bool rest;
  if (shift <= 0) {
    // Every bit is kept; the sticky bits (if any) lie below result_lsb only when shift == 0.
    assert(!magnitude.sticky || shift == 0);
    kept = magnitude.significand << -shift;
    round_bit = false;
    rest = magnitude.sticky;
  } else if (shift > 64) {
    kept = 0;
    round_bit = false;
    rest = magnitude.significand != 0 || magnitude.sticky;
  } else {
    kept = shift == 64 ? 0 : magnitude.significand >> shift;
    round_bit = ((magnitude.significand >> (shift - 1)) & 1) != 0;
    const std::uint64_t below = shift == 1 ? 0 : magnitude.significand << (65 - shift);
    rest = below != 0 || magnitude.sticky;
  }
  if (rounding == Rounding::nearest_even && round_bit && (rest || (kept & 1) != 0)) ++kept;

  if (kept == 0) return encode_zero(format, negative);
  // Encode kept * 2^result_lsb. kept < 2^(p+1) after the carry, so its leading exponent is at
  // most leading_exponent + 1.
  const int kept_msb = detail::bit_width(kept) - 1;
  const int exponent = result_lsb + kept_msb;
  // kept_msb <= f + 1; a carry to 2^(f+1) is a power of two, so the right shift is exact.
  const std::uint64_t significand = kept_msb <= f ? kept << (f - kept_msb) : kept >> (kept_msb - f);
  const bool overflowed =
      exponent > format.max_exponent() ||
      (exponent == format.max_exponent() && significand > format.max_significand());
  if (overflowed) {
    const bool to_infinity = overflow == Overflow::infinity ||
                             (overflow == Overflow::ieee && rounding == Rounding::nearest_even);
    return to_infinity ? encode_infinity(format, negative) : encode_max_finite(format, negative);
  }
  if (exponent < format.min_exponent()) {
    // Subnormal: result_lsb == subnormal_lsb here, so kept is the stored fraction.
    return detail::pack(format, negative, 0, kept << (result_lsb - subnormal_lsb));
  }
  return detail::pack(format, negative, static_cast<std::uint32_t>(exponent + format.bias()),
                      significand & ((std::uint64_t{1} << f) - 1));
}

}  // namespace tcemu
