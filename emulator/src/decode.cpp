#include <tcemu/emulator/decode.hpp>

namespace tcemu {

Decoded decode(const FloatFormat& format, std::uint32_t bits) {
  const std::uint32_t stored = bits >> format.padding_bits;
  const int f = format.fraction_bits;
  const std::uint32_t fraction = stored & ((std::uint32_t{1} << f) - 1);
  const std::uint32_t exponent_field =
      (stored >> f) & ((std::uint32_t{1} << format.exponent_bits) - 1);
  const bool negative = ((stored >> (f + format.exponent_bits)) & 1) != 0;
  const std::uint32_t all_ones = (std::uint32_t{1} << format.exponent_bits) - 1;

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
