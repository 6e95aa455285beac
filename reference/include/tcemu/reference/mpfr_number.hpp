// An owned MPFR number of an explicitly chosen precision.
//
// Modelled on llvm-libc's MPFRNumber (libc/utils/MPFRWrapper): the object owns its mpfr_t (RAII,
// move-only, so no two objects share limbs and no copy happens by accident), its precision is
// chosen by the caller, every operation names its rounding direction (no global rounding mode is
// read or set), and to_string() prints the value both in decimal and exactly in binary for
// failure messages.
//
// Operations that write a result round it to the precision of the object written and return
// MPFR's ternary value: 0 when the result is exact, negative (positive) when the written value is
// below (above) the exact one. Callers that rely on exactness check it.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>

#include <mpfr.h>

namespace tcemu::reference {

// A precision in bits. A distinct type, so that MpfrNumber(3, Precision{64}) cannot be mistaken for
// a number of precision 3.
struct Precision {
  mpfr_prec_t bits;
};

// Integers other than bool (which would otherwise convert silently).
template <typename T>
concept Integer = std::integral<T> && !std::same_as<T, bool>;

class MpfrNumber {
 public:
  // Exact for double and for every value of the formats tcemu models, with room to spare.
  static constexpr Precision kDefaultPrecision{128};

  // +0 of the given precision.
  explicit MpfrNumber(Precision precision = kDefaultPrecision);
  // `value` rounded to nearest even to `precision` bits (exact when precision >= 53).
  explicit MpfrNumber(double value, Precision precision = kDefaultPrecision);
  // `value` rounded to nearest even to `precision` bits (exact when precision >= 64).
  template <Integer T>
  explicit MpfrNumber(T value, Precision precision = kDefaultPrecision) : MpfrNumber(precision) {
    if constexpr (std::signed_integral<T>) {
      static_assert(sizeof(T) <= sizeof(long), "mpfr_set_si takes a long");
      mpfr_set_si(value_, static_cast<long>(value), MPFR_RNDN);
    } else {
      static_assert(sizeof(T) <= sizeof(unsigned long), "mpfr_set_ui takes an unsigned long");
      mpfr_set_ui(value_, static_cast<unsigned long>(value), MPFR_RNDN);
    }
  }
  // (-1)^negative * significand * 2^exponent, rounded to nearest even to `precision` bits (exact
  // when precision >= 64 and the exponent is in MPFR's range). A zero significand gives a zero of
  // the given sign.
  static MpfrNumber scaled(bool negative, std::uint64_t significand, long exponent,
                           Precision precision = kDefaultPrecision);
  // *this = (-1)^negative * significand * 2^exponent, rounded to nearest even to this precision.
  int set_scaled(bool negative, std::uint64_t significand, long exponent);

  MpfrNumber(const MpfrNumber&) = delete;
  MpfrNumber& operator=(const MpfrNumber&) = delete;
  // A move takes over the limbs without allocating. A number moved from by construction may
  // only be destroyed or assigned to; one moved from by assignment holds the other's old value.
  MpfrNumber(MpfrNumber&& other) noexcept;
  MpfrNumber& operator=(MpfrNumber&& other) noexcept;
  ~MpfrNumber();

  // An explicit copy: same precision, same value.
  MpfrNumber copy() const;

  mpfr_ptr get() { return value_; }
  mpfr_srcptr get() const { return value_; }
  Precision precision() const { return Precision{mpfr_get_prec(value_)}; }

  // Changes the precision, rounding the value in direction `rounding`.
  int set_precision(Precision precision, mpfr_rnd_t rounding);

  // *this = x, rounded to this number's precision.
  int set(const MpfrNumber& x, mpfr_rnd_t rounding);
  // *this = x op y, rounded to this number's precision. Aliasing (x or y being *this) is allowed.
  int add(const MpfrNumber& x, const MpfrNumber& y, mpfr_rnd_t rounding);
  int sub(const MpfrNumber& x, const MpfrNumber& y, mpfr_rnd_t rounding);
  int mul(const MpfrNumber& x, const MpfrNumber& y, mpfr_rnd_t rounding);
  // *this = x * y + z with a single rounding.
  int fma(const MpfrNumber& x, const MpfrNumber& y, const MpfrNumber& z, mpfr_rnd_t rounding);

  // *this *= 2^exponent (exact inside MPFR's exponent range).
  void scale_by_power_of_two(long exponent);
  // *this = its integer part, rounded toward zero: the magnitude is truncated, the sign kept
  // (a negative number above -1 becomes -0). Exact when the precision holds the integer part.
  int truncate_to_integer();
  void negate() { mpfr_neg(value_, value_, MPFR_RNDN); }  // exact
  void set_zero(bool negative) { mpfr_set_zero(value_, negative ? -1 : 1); }

  bool is_nan() const { return mpfr_nan_p(value_) != 0; }
  bool is_inf() const { return mpfr_inf_p(value_) != 0; }
  bool is_zero() const { return mpfr_zero_p(value_) != 0; }
  bool is_integer() const { return mpfr_integer_p(value_) != 0; }
  // The sign bit, also of zeros and infinities (false for NaN).
  bool is_negative() const { return !is_nan() && mpfr_signbit(value_) != 0; }
  // The exponent of the leading bit: |value| is in [2^e, 2^(e+1)). Finite nonzero values only.
  long leading_exponent() const;

  // Three-way comparison of values (NaN compares unordered and gives 0; check is_nan first).
  int compare(const MpfrNumber& other) const { return mpfr_cmp(value_, other.value_); }
  int compare_magnitude(const MpfrNumber& other) const { return mpfr_cmpabs(value_, other.value_); }

  double to_double(mpfr_rnd_t rounding = MPFR_RNDN) const { return mpfr_get_d(value_, rounding); }
  // The value as an unsigned integer; throws std::domain_error unless it is a nonnegative integer
  // below 2^64.
  std::uint64_t to_uint64() const;

  // For failure messages: the value in decimal with enough digits to identify it at this
  // precision, then exactly in binary, e.g. "1.5 (0x1.8p+0, 128 bits)".
  std::string to_string() const;

 private:
  mpfr_t value_;
  bool owns_ = true;  // false once moved from by construction
};

}  // namespace tcemu::reference
