// Conversion of a bit pattern between formats under a chosen rounding (cvt.rn / cvt.rz).
#pragma once

#include <cstdint>

#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu {

// Converts `bits` of `from` to `to`. NaN becomes `to`'s canonical quiet NaN (all fraction bits
// set, positive), Inf stays Inf (E4M3, which has none, gives NaN), zeros keep their sign.
std::uint32_t convert(const FloatFormat& from, const FloatFormat& to, std::uint32_t bits,
                      Rounding rounding, Overflow overflow = Overflow::ieee);

// True when `bits` of `from` is exactly representable in `to` (NaN counts as representable).
bool converts_exactly(const FloatFormat& from, const FloatFormat& to, std::uint32_t bits);

}  // namespace tcemu
