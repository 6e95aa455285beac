// Exact MPFR values of format bit patterns, and correct rounding of MPFR values back to bits.
//
// Written from the field layout of FloatFormat alone (it shares no code with the emulator's
// decode and round_pack): the bit fields are extracted here, and rounding is MPFR's own (mpfr_set
// at the target precision, then mpfr_check_range and mpfr_subnormalize in the format's exponent
// range).
#pragma once

#include <cstdint>

#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/round.hpp>
#include <tcemu/reference/mpfr_number.hpp>

namespace tcemu::reference {

struct ExactValue {
  enum class Kind { zero, finite, infinity, nan };
  Kind kind;
  // Zero (signed) and finite: the exact value. Infinity: a signed infinity. NaN: NaN.
  MpfrNumber value;
  // Finite: the exponent the datapath aligns on, that of the leading bit of a normal number, the
  // format's minimum exponent for a subnormal. Zero otherwise.
  int alignment_exponent;
};

// The value of the low container_bits() of `bits` in `format`. TF32's padding bits are ignored.
ExactValue exact_value(const FloatFormat& format, std::uint32_t bits);

// The bits of `x` (finite or infinite, not NaN) rounded once to `format` in direction `rounding`,
// keeping at most `precision` significant bits (0: the format's fraction_bits + 1). The last kept
// bit of a result is never below the format's smallest subnormal. Overflow, decided as in IEEE 754
// on the result rounded with an unbounded exponent, gives what `overflow` says. A zero rounds to a
// zero of its sign; a nonzero value that rounds to zero keeps its sign. Formats with an IEEE
// special encoding only (the accumulators); throws std::invalid_argument otherwise.
std::uint32_t round_to_format(const FloatFormat& format, const MpfrNumber& x, Rounding rounding,
                              Overflow overflow, int precision = 0);

}  // namespace tcemu::reference
