// The fraction field the case generators give a finite value (case_generator.cpp,
// mmasim_evidence.cpp): the patterns where rounding and alignment bugs show, each generator
// drawing from its own random source.
#pragma once

#include <cstdint>

#include <tcemu/emulator/format.hpp>

namespace tcemu::detail {

// The fraction field of `f` (which has one: fraction_bits >= 1) for `choice` in 0..9: 0, all
// ones, the lowest bit, the top bit alone, or (choices 4 to 9) random_bits(fraction_bits), called
// only then, so a generator's random stream is what it was with its own copy of this switch.
template <typename RandomBits>
std::uint32_t fraction_pattern(const FloatFormat& f, int choice, RandomBits&& random_bits) {
  switch (choice) {
    case 0:
      return 0;
    case 1:
      return (1u << f.fraction_bits) - 1;
    case 2:
      return 1;
    case 3:
      return 1u << (f.fraction_bits - 1);
    default:
      return random_bits(f.fraction_bits);
  }
}

}  // namespace tcemu::detail
