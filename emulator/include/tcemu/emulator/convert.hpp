// Conversion of a bit pattern between formats under a chosen rounding (cvt.rn / cvt.rz).
#pragma once

#include <cstdint>

#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/host_device.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu {

namespace detail {

// The canonical quiet NaN of a format: positive, every fraction bit set.
TCEMU_HOST_DEVICE constexpr std::uint32_t canonical_nan(const FloatFormat& f) {
  const std::uint32_t exponent = (std::uint32_t{1} << f.exponent_bits) - 1;
  const std::uint32_t fraction = (std::uint32_t{1} << f.fraction_bits) - 1;
  return ((exponent << f.fraction_bits) | fraction) << f.padding_bits;
}

}  // namespace detail

// Converts `bits` of `from` to `to`. NaN becomes `to`'s canonical quiet NaN (all fraction bits
// set, positive), Inf stays Inf (E4M3, which has none, gives NaN), zeros keep their sign.
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

// True when `bits` of `from` is exactly representable in `to` (NaN counts as representable).
bool converts_exactly(const FloatFormat& from, const FloatFormat& to, std::uint32_t bits);

}  // namespace tcemu
