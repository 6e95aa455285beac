// Exact decoding of a bit pattern into sign, integer significand and exponent.
#pragma once

#include <cstdint>

#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/host_device.hpp>

namespace tcemu {

enum class ValueClass { zero, finite, infinity, nan };

// value = (-1)^negative * significand * 2^lsb_exponent for zero and finite values.
// `lsb_exponent` is the weight of the significand's last bit, so a normal number of a format with
// f fraction bits has significand in [2^f, 2^(f+1)) and leading-bit exponent lsb_exponent + f.
// A subnormal has significand < 2^f and the format's minimum exponent, as the hardware keeps it.
struct Decoded {
  ValueClass value_class;
  bool negative;
  std::uint64_t significand;
  int lsb_exponent;

  // Exponent of the leading bit position of a normal number of `f`, also for subnormals
  // (they keep min_exponent()). This is the exponent the datapath aligns on.
  TCEMU_HOST_DEVICE constexpr int alignment_exponent(const FloatFormat& f) const {
    return lsb_exponent + f.fraction_bits;
  }
};

// Decodes the low container_bits() of `bits`. TF32's padding bits are dropped (truncation), as the
// hardware ignores them. Formats with SpecialEncoding::finite (FP6, FP4) never decode to Inf or
// NaN.
TCEMU_HOST_DEVICE constexpr Decoded decode(const FloatFormat& format, std::uint32_t bits) {
  const std::uint32_t stored = bits >> format.padding_bits;
  const int f = format.fraction_bits;
  const std::uint32_t fraction = stored & ((std::uint32_t{1} << f) - 1);
  const std::uint32_t exponent_field =
      (stored >> f) & ((std::uint32_t{1} << format.exponent_bits) - 1);
  // An unsigned format (ue8m0, ue4m3) ignores the bit above its fields, as the PTX ISA reads them.
  const bool negative = format.is_signed && ((stored >> (f + format.exponent_bits)) & 1) != 0;
  const std::uint32_t all_ones = (std::uint32_t{1} << format.exponent_bits) - 1;

  if (format.special == SpecialEncoding::e8m0) {
    // Every field but all ones is 2^(field - bias): significand 1, no zero, no subnormal.
    if (exponent_field == all_ones) return {ValueClass::nan, false, 0, 0};
    return {ValueClass::finite, false, 1, static_cast<int>(exponent_field) - format.bias()};
  }
  if (format.special == SpecialEncoding::ieee && exponent_field == all_ones) {
    return {fraction == 0 ? ValueClass::infinity : ValueClass::nan, negative, 0, 0};
  }
  if (format.special == SpecialEncoding::fn_e4m3 && exponent_field == all_ones &&
      fraction == (std::uint32_t{1} << f) - 1) {
    return {ValueClass::nan, negative, 0, 0};
  }
  if (exponent_field == 0) {
    // Subnormal or zero: no implicit bit, minimum exponent.
    return {fraction == 0 ? ValueClass::zero : ValueClass::finite, negative, fraction,
            format.min_exponent() - f};
  }
  return {ValueClass::finite, negative, (std::uint64_t{1} << f) | fraction,
          static_cast<int>(exponent_field) - format.bias() - f};
}

}  // namespace tcemu
