#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include <tcemu/reference/mpfr_number.hpp>

namespace tcemu::reference {
namespace {

// Prints with mpfr_asprintf and frees MPFR's buffer.
template <typename... Args>
std::string format_mpfr(const char* pattern, Args... args) {
  char* buffer = nullptr;
  if (mpfr_asprintf(&buffer, pattern, args...) < 0 || buffer == nullptr) return "<mpfr_asprintf>";
  std::string text(buffer);
  mpfr_free_str(buffer);
  return text;
}

}  // namespace

MpfrNumber::MpfrNumber(Precision precision) {
  mpfr_init2(value_, precision.bits);
  mpfr_set_zero(value_, 1);
}

MpfrNumber::MpfrNumber(double value, Precision precision) : MpfrNumber(precision) {
  mpfr_set_d(value_, value, MPFR_RNDN);
}

MpfrNumber MpfrNumber::scaled(bool negative, std::uint64_t significand, long exponent,
                              Precision precision) {
  MpfrNumber x(precision);
  x.set_scaled(negative, significand, exponent);
  return x;
}

int MpfrNumber::set_scaled(bool negative, std::uint64_t significand, long exponent) {
  static_assert(sizeof(unsigned long) >= sizeof(std::uint64_t), "mpfr_set_ui takes unsigned long");
  const int ternary = mpfr_set_ui(value_, static_cast<unsigned long>(significand), MPFR_RNDN);
  mpfr_mul_2si(value_, value_, exponent, MPFR_RNDN);  // exact inside the exponent range
  if (negative) mpfr_neg(value_, value_, MPFR_RNDN);  // also turns +0 into -0
  return negative ? -ternary : ternary;
}

MpfrNumber::MpfrNumber(MpfrNumber&& other) noexcept : owns_(other.owns_) {
  // Take over the limbs: the struct copy is what mpfr_swap does.
  *value_ = *other.value_;
  other.owns_ = false;
}

MpfrNumber& MpfrNumber::operator=(MpfrNumber&& other) noexcept {
  std::swap(*value_, *other.value_);
  std::swap(owns_, other.owns_);
  return *this;
}

MpfrNumber::~MpfrNumber() {
  if (owns_) mpfr_clear(value_);
}

MpfrNumber MpfrNumber::copy() const {
  MpfrNumber x(precision());
  mpfr_set(x.value_, value_, MPFR_RNDN);  // same precision: exact
  return x;
}

int MpfrNumber::set_precision(Precision precision, mpfr_rnd_t rounding) {
  return mpfr_prec_round(value_, precision.bits, rounding);
}

int MpfrNumber::set(const MpfrNumber& x, mpfr_rnd_t rounding) {
  return mpfr_set(value_, x.value_, rounding);
}

int MpfrNumber::add(const MpfrNumber& x, const MpfrNumber& y, mpfr_rnd_t rounding) {
  return mpfr_add(value_, x.value_, y.value_, rounding);
}

int MpfrNumber::sub(const MpfrNumber& x, const MpfrNumber& y, mpfr_rnd_t rounding) {
  return mpfr_sub(value_, x.value_, y.value_, rounding);
}

int MpfrNumber::mul(const MpfrNumber& x, const MpfrNumber& y, mpfr_rnd_t rounding) {
  return mpfr_mul(value_, x.value_, y.value_, rounding);
}

int MpfrNumber::fma(const MpfrNumber& x, const MpfrNumber& y, const MpfrNumber& z,
                    mpfr_rnd_t rounding) {
  return mpfr_fma(value_, x.value_, y.value_, z.value_, rounding);
}

void MpfrNumber::scale_by_power_of_two(long exponent) {
  mpfr_mul_2si(value_, value_, exponent, MPFR_RNDN);
}

int MpfrNumber::truncate_to_integer() {
  return mpfr_trunc(value_, value_);
}

long MpfrNumber::leading_exponent() const {
  if (!mpfr_regular_p(value_)) {
    throw std::domain_error("MpfrNumber::leading_exponent of " + to_string());
  }
  // MPFR's exponent e puts the value in [2^(e-1), 2^e).
  return static_cast<long>(mpfr_get_exp(value_)) - 1;
}

std::uint64_t MpfrNumber::to_uint64() const {
  static_assert(sizeof(unsigned long) >= sizeof(std::uint64_t),
                "mpfr_get_ui returns unsigned long");
  if (!is_integer() || mpfr_sgn(value_) < 0 || !mpfr_fits_ulong_p(value_, MPFR_RNDN)) {
    throw std::domain_error("MpfrNumber::to_uint64 of " + to_string());
  }
  return static_cast<std::uint64_t>(mpfr_get_ui(value_, MPFR_RNDN));
}

std::string MpfrNumber::to_string() const {
  if (is_nan()) return "nan";
  // Decimal: enough digits to tell neighbours apart at this precision, capped so that a wide
  // exact accumulator stays readable; the binary form after it is always exact.
  const int digits =
      static_cast<int>(std::min<std::size_t>(mpfr_get_str_ndigits(10, mpfr_get_prec(value_)), 40));
  return format_mpfr("%.*Rg (%Ra, %ld bits)", digits, value_, value_,
                     static_cast<long>(mpfr_get_prec(value_)));
}

}  // namespace tcemu::reference
