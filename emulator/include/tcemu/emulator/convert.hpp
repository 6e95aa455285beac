// Conversion of a bit pattern between formats under a chosen rounding (cvt.rn / cvt.rz).
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/fp64_bits.hpp>
#include <tcemu/emulator/host_device.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu {

namespace detail {

// The canonical quiet NaN of a format: positive, every fraction bit set (E8M0: 0xFF). FP6 and FP4
// hold no NaN: a NaN becomes their largest positive value.
TCEMU_HOST_DEVICE constexpr std::uint32_t canonical_nan(const FloatFormat& f) {
  if (f.special == SpecialEncoding::finite) return encode_max_finite(f, false);
  const std::uint32_t exponent = (std::uint32_t{1} << f.exponent_bits) - 1;
  const std::uint32_t fraction = (std::uint32_t{1} << f.fraction_bits) - 1;
  return ((exponent << f.fraction_bits) | fraction) << f.padding_bits;
}

}  // namespace detail

// Converts `bits` of `from` to `to`. NaN becomes `to`'s canonical quiet NaN (all fraction bits
// set, positive), Inf stays Inf (E4M3 and E8M0, which have none, give NaN; FP6 and FP4 their
// largest value), zeros keep their sign. The unsigned formats (ue8m0, ue4m3) take the magnitude;
// E8M0 has no zero, so a zero (or a value rounding below 2^-127) gives its field 0, 2^-127.
TCEMU_HOST_DEVICE inline std::uint32_t convert(const FloatFormat& from, const FloatFormat& to,
                                               std::uint32_t bits, Rounding rounding,
                                               Overflow overflow = Overflow::ieee) {
  const Decoded x = decode(from, bits);
  switch (x.value_class) {
    case ValueClass::nan:
      return detail::canonical_nan(to);
    case ValueClass::infinity:
      return encode_infinity(to, x.negative);
    case ValueClass::zero:
      return encode_zero(to, x.negative);
    case ValueClass::finite:
      break;
  }
  return round_pack(to, x.negative, {x.significand, x.lsb_exponent, false}, rounding, overflow);
}

// The value of `bits` of `f` as a binary64 number, exactly: every format here has at most 24
// significand bits and exponents within binary64's normal range. NaN is the quiet NaN
// 0x7FF8000000000000.
TCEMU_HOST_DEVICE inline double to_double(const FloatFormat& f, std::uint32_t bits) {
  const Decoded x = decode(f, bits);
  switch (x.value_class) {
    case ValueClass::zero:
      return fp64::value(x.negative ? fp64::kSignBit : 0);
    case ValueClass::infinity:
      return fp64::value((x.negative ? fp64::kSignBit : 0) | fp64::kExponentMask);
    case ValueClass::nan:
      return fp64::value(fp64::kCanonicalNan);
    case ValueClass::finite:
      break;
  }
  // 2^lsb_exponent from its bit fields: lsb_exponent >= -149 - 23 lies in binary64's normal range.
  const double unit = fp64::value(static_cast<std::uint64_t>(x.lsb_exponent + 1023) << 52);
  const double magnitude = static_cast<double>(x.significand) * unit;
  return x.negative ? -magnitude : magnitude;
}

// True when `bits` of `from` is exactly representable in `to` (NaN counts as representable).
bool converts_exactly(const FloatFormat& from, const FloatFormat& to, std::uint32_t bits);

}  // namespace tcemu
