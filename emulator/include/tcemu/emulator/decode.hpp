// Exact decoding of a bit pattern into sign, integer significand and exponent.
#pragma once

#include <cstdint>

#include <tcemu/emulator/format.hpp>

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
  constexpr int alignment_exponent(const FloatFormat& f) const {
    return lsb_exponent + f.fraction_bits;
  }
};

// Decodes the low container_bits() of `bits`. TF32's padding bits are dropped (truncation), as the
// hardware ignores them.
Decoded decode(const FloatFormat& format, std::uint32_t bits);

}  // namespace tcemu
