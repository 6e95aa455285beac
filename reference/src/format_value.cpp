#include <stdexcept>
#include <string>

#include <tcemu/reference/format_value.hpp>

namespace tcemu::reference {
namespace {

// Every value of a format no wider than fp32 (24 significant bits) is exact at this precision.
constexpr Precision kValuePrecision{64};

// The bit fields of a stored pattern, low bit first: fraction, exponent, sign.
struct Fields {
  bool negative;
  std::uint32_t exponent_field;
  std::uint32_t fraction;
};

Fields fields_of(const FloatFormat& format, std::uint32_t bits) {
  const std::uint64_t container_mask = (std::uint64_t{1} << format.container_bits()) - 1;
  const std::uint64_t stored = (bits & container_mask) >> format.padding_bits;
  const std::uint64_t fraction_mask = (std::uint64_t{1} << format.fraction_bits) - 1;
  const std::uint64_t exponent_mask = (std::uint64_t{1} << format.exponent_bits) - 1;
  return Fields{
      .negative =
          format.is_signed && ((stored >> (format.exponent_bits + format.fraction_bits)) & 1) != 0,
      .exponent_field =
          static_cast<std::uint32_t>((stored >> format.fraction_bits) & exponent_mask),
      .fraction = static_cast<std::uint32_t>(stored & fraction_mask),
  };
}

std::uint32_t bits_of(const FloatFormat& format, bool negative, std::uint32_t exponent_field,
                      std::uint64_t fraction) {
  const std::uint64_t stored =
      (std::uint64_t{negative} << (format.exponent_bits + format.fraction_bits)) |
      (std::uint64_t{exponent_field} << format.fraction_bits) | fraction;
  return static_cast<std::uint32_t>(stored << format.padding_bits);
}

// Sets MPFR's exponent range for one scope and puts the previous range and flags back after it,
// so that no MPFR state leaks out of round_to_format.
class ExponentRangeScope {
 public:
  ExponentRangeScope(mpfr_exp_t emin, mpfr_exp_t emax)
      : old_emin_(mpfr_get_emin()), old_emax_(mpfr_get_emax()), old_flags_(mpfr_flags_save()) {
    if (mpfr_set_emin(emin) != 0 || mpfr_set_emax(emax) != 0) {
      throw std::logic_error("MPFR rejected the exponent range");
    }
  }
  ExponentRangeScope(const ExponentRangeScope&) = delete;
  ExponentRangeScope& operator=(const ExponentRangeScope&) = delete;
  ~ExponentRangeScope() {
    mpfr_set_emin(old_emin_);
    mpfr_set_emax(old_emax_);
    mpfr_flags_restore(old_flags_, MPFR_FLAGS_ALL);
  }

 private:
  mpfr_exp_t old_emin_;
  mpfr_exp_t old_emax_;
  mpfr_flags_t old_flags_;
};

mpfr_rnd_t mpfr_rounding(Rounding rounding) {
  return rounding == Rounding::toward_zero ? MPFR_RNDZ : MPFR_RNDN;
}

}  // namespace

ExactValue exact_value(const FloatFormat& format, std::uint32_t bits) {
  const Fields x = fields_of(format, bits);
  const std::uint32_t all_ones = (std::uint32_t{1} << format.exponent_bits) - 1;
  const std::uint32_t all_fraction = (std::uint32_t{1} << format.fraction_bits) - 1;
  const int bias = (1 << (format.exponent_bits - 1)) - 1;
  const int f = format.fraction_bits;

  MpfrNumber value(kValuePrecision);
  if (format.special == SpecialEncoding::e8m0) {
    // OCP E8M0: 2^(field - bias) for every field but all ones (NaN); no zero, no subnormal.
    if (x.exponent_field == all_ones) {
      mpfr_set_nan(value.get());
      return {ExactValue::Kind::nan, std::move(value), 0};
    }
    const int exponent = static_cast<int>(x.exponent_field) - bias;
    value.set_scaled(false, 1, exponent);
    return {ExactValue::Kind::finite, std::move(value), exponent};
  }
  // FP6 and FP4 (SpecialEncoding::finite) have no special patterns.
  if (x.exponent_field == all_ones && format.special != SpecialEncoding::finite) {
    if (format.special == SpecialEncoding::ieee) {
      if (x.fraction == 0) {
        mpfr_set_inf(value.get(), x.negative ? -1 : 1);
        return {ExactValue::Kind::infinity, std::move(value), 0};
      }
      mpfr_set_nan(value.get());
      return {ExactValue::Kind::nan, std::move(value), 0};
    }
    // OCP E4M3 (fn): only S.1111.111 is NaN; the rest of the top binade is finite.
    if (x.fraction == all_fraction) {
      mpfr_set_nan(value.get());
      return {ExactValue::Kind::nan, std::move(value), 0};
    }
  }
  if (x.exponent_field == 0) {
    // Zero or subnormal: fraction * 2^(1 - bias - f), aligned on the minimum exponent 1 - bias.
    value.set_scaled(x.negative, x.fraction, 1 - bias - f);
    if (x.fraction == 0) return {ExactValue::Kind::zero, std::move(value), 0};
    return {ExactValue::Kind::finite, std::move(value), 1 - bias};
  }
  // Normal: (2^f + fraction) * 2^(E - bias - f), leading bit at E - bias.
  const int exponent = static_cast<int>(x.exponent_field) - bias;
  value.set_scaled(x.negative, (std::uint64_t{1} << f) | x.fraction, exponent - f);
  return {ExactValue::Kind::finite, std::move(value), exponent};
}

// MPFR writes a finite nonzero value as m * 2^E with m in [1/2, 1), so with our leading-bit
// exponent e the MPFR exponent is e + 1. For a format with minimum exponent emin_f, f fraction
// bits and largest exponent emax_f:
//
//   smallest subnormal 2^(emin_f - f)       -> MPFR emin = emin_f - f + 1
//   everything below 2^(emax_f + 1)         -> MPFR emax = emax_f + 1
//
// mpfr_subnormalize with that emin rounds a value of MPFR exponent E to E - emin + 1 bits when
// that is fewer than its precision, which puts its last bit at 2^(emin_f - f): the subnormal grid.
// A result of precision p therefore keeps max(leading - (p - 1), emin_f - f) as its last bit.
//
// Steps (the first rounding and the later ones share the ternary value, so there is no double
// rounding error; MPFR documents this use of mpfr_check_range and mpfr_subnormalize):
//   1. y = x rounded to p bits with MPFR's huge default exponent range (nothing over/underflows).
//   2. Overflow iff y >= 2^(emax_f + 1) (IEEE 754: the result rounded with an unbounded exponent
//      exceeds the largest finite number; for an IEEE format of p <= f + 1 bits every p-bit value
//      below 2^(emax_f + 1) is finite).
//   3. Otherwise, in the format's range: mpfr_check_range rounds a y below the smallest subnormal
//      to 0 or to it (ties to even at half of it, using the ternary value), mpfr_subnormalize
//      rounds to the subnormal grid.
std::uint32_t round_to_format(const FloatFormat& format, const MpfrNumber& x, Rounding rounding,
                              Overflow overflow, int precision) {
  if (format.special != SpecialEncoding::ieee) {
    throw std::invalid_argument("round_to_format: " + std::string(format.name) +
                                " is not an IEEE-style format");
  }
  if (x.is_nan()) throw std::invalid_argument("round_to_format: NaN has no rounding");
  const int f = format.fraction_bits;
  const int bias = (1 << (format.exponent_bits - 1)) - 1;
  const int min_exponent = 1 - bias;
  const int max_exponent = (1 << format.exponent_bits) - 2 - bias;
  const std::uint32_t all_ones = (std::uint32_t{1} << format.exponent_bits) - 1;
  const std::uint64_t all_fraction = (std::uint64_t{1} << f) - 1;
  const int p = precision > 0 && precision < f + 1 ? precision : f + 1;
  const bool negative = x.is_negative();
  const mpfr_rnd_t rnd = mpfr_rounding(rounding);

  const auto overflowed = [&] {
    const bool infinite = overflow == Overflow::infinity ||
                          (overflow == Overflow::ieee && rounding == Rounding::nearest_even);
    return infinite ? bits_of(format, negative, all_ones, 0)
                    : bits_of(format, negative, all_ones - 1, all_fraction);
  };
  if (x.is_inf()) return bits_of(format, negative, all_ones, 0);
  if (x.is_zero()) return bits_of(format, negative, 0, 0);

  MpfrNumber y(Precision{p});
  int ternary = y.set(x, rnd);                                   // step 1
  if (y.leading_exponent() > max_exponent) return overflowed();  // step 2
  {
    const ExponentRangeScope range(min_exponent - f + 1, max_exponent + 1);  // step 3
    ternary = mpfr_check_range(y.get(), ternary, rnd);
    mpfr_subnormalize(y.get(), ternary, rnd);
  }
  if (y.is_zero()) return bits_of(format, negative, 0, 0);

  // Encode. The scalings below are by powers of two, hence exact, and to_uint64() checks that
  // the result is the integer the encoding needs.
  const long leading = y.leading_exponent();
  mpfr_abs(y.get(), y.get(), MPFR_RNDN);  // exact
  if (leading < min_exponent) {
    // Subnormal: |y| = fraction * 2^(min_exponent - f) with fraction < 2^f.
    y.scale_by_power_of_two(f - min_exponent);
    return bits_of(format, negative, 0, y.to_uint64());
  }
  // Normal: |y| = significand * 2^(leading - f) with significand in [2^f, 2^(f+1)).
  y.scale_by_power_of_two(f - leading);
  const std::uint64_t significand = y.to_uint64();
  if ((significand >> f) != 1) throw std::logic_error("round_to_format: bad normalisation");
  return bits_of(format, negative, static_cast<std::uint32_t>(leading + bias),
                 significand & all_fraction);
}

}  // namespace tcemu::reference
