#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/decode.hpp>

#include <utility>

namespace tcemu {

bool converts_exactly(const FloatFormat& from, const FloatFormat& to, std::uint32_t bits) {
  const Decoded x = decode(from, bits);
  if (x.value_class != ValueClass::finite) {
    return x.value_class != ValueClass::infinity || to.special == SpecialEncoding::ieee;
  }
  const std::uint32_t there = convert(from, to, bits, Rounding::toward_zero, Overflow::saturate);
  const Decoded back = decode(to, there);
  // Compare values: significand * 2^lsb, normalised by stripping trailing zeros.
  auto normal = [](std::uint64_t s, int e) {
    while (s != 0 && (s & 1) == 0) {
      s >>= 1;
      ++e;
    }
    return std::pair{s, e};
  };
  return back.value_class == ValueClass::finite && back.negative == x.negative &&
         normal(back.significand, back.lsb_exponent) == normal(x.significand, x.lsb_exponent);
}

}  // namespace tcemu
