// The one round-and-pack routine: an exact value (sign, integer magnitude, exponent, sticky) to
// the bits of a format, under a chosen rounding. Every result the emulator produces goes through
// it. No global rounding mode and no host floating point is involved.
#pragma once

#include <cstdint>

#include <tcemu/emulator/format.hpp>

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

// Rounds (-1)^negative * magnitude to `format`, keeping at most `precision` significant bits
// (format.fraction_bits + 1 when negative; fewer models datapaths that keep a narrower block
// result inside a wider register). Exact zero gives a zero of the given sign.
std::uint32_t round_pack(const FloatFormat& format, bool negative, ExactMagnitude magnitude,
                         Rounding rounding, Overflow overflow, int precision = 0);

std::uint32_t encode_zero(const FloatFormat& format, bool negative);
std::uint32_t encode_infinity(const FloatFormat& format, bool negative);
std::uint32_t encode_max_finite(const FloatFormat& format, bool negative);

}  // namespace tcemu
