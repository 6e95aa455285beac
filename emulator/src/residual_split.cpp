#include <bit>
#include <cassert>
#include <cmath>
#include <cstdlib>

#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/residual_split.hpp>

namespace tcemu {
namespace {

constexpr std::uint32_t kFp32Nan = 0x7FFFFFFFu;

std::uint32_t canonical(float value) {
  return std::isnan(value) ? kFp32Nan : std::bit_cast<std::uint32_t>(value);
}

}  // namespace

bool is_split_format(const FloatFormat& format) {
  // Precision <= 24 and min_exponent >= -126 make every finite value of the format an fp32 value
  // (its smallest spacing 2^(min_exponent - fraction_bits) >= 2^-149); max_exponent <= 127 keeps
  // the largest one finite in fp32.
  return format.special == SpecialEncoding::ieee && format.fraction_bits <= 23 &&
         format.min_exponent() >= -126 && format.max_exponent() <= 127;
}

SplitElement split_fp32_element(std::uint32_t x, const FloatFormat& format, Rounding rounding,
                                int scale_exponent) {
  const Decoded d = decode(formats::fp32, x);
  switch (d.value_class) {
    case ValueClass::nan:
    case ValueClass::infinity:
      return {convert(formats::fp32, format, x, rounding), 0, false};
    case ValueClass::zero:
      return {encode_zero(format, d.negative), 0, false};
    case ValueClass::finite:
      break;
  }
  const int leading = d.lsb_exponent + static_cast<int>(std::bit_width(d.significand)) - 1;
  const std::uint32_t part =
      round_pack(format, d.negative, {d.significand, d.lsb_exponent + scale_exponent, false},
                 rounding, Overflow::ieee);
  const Decoded q = decode(format, part);
  // Rounding with an unbounded exponent reaches 2^(max_exponent + 1) exactly when RN gives Inf,
  // or (RZ, which never rounds up a binade) when x * 2^e already lies at or above it.
  if (q.value_class == ValueClass::infinity || leading + scale_exponent > format.max_exponent()) {
    return {part, 0, true};
  }
  if (q.value_class == ValueClass::zero) return {part, x, false};  // nothing taken: residual x
  // part * 2^-e = q.significand * 2^(q.lsb_exponent - e), a multiple of x's quantum 2^lsb (proof
  // in backend.hpp), no larger than 2 |x| < 2^(lsb + 25): the shift is in [0, 25) and the
  // difference of the two integers is exact in int64 with magnitude below 2^24.
  const int shift = q.lsb_exponent - scale_exponent - d.lsb_exponent;
  assert(shift >= 0 && shift < 25);
  const std::int64_t taken = static_cast<std::int64_t>(q.significand) << shift;
  const std::int64_t difference = static_cast<std::int64_t>(d.significand) - taken;
  if (difference == 0) return {part, 0, false};
  // x and part have the same sign, so the residual has x's sign when |x| > |part * 2^-e|.
  const bool negative = d.negative != (difference < 0);
  const std::uint32_t residual =
      round_pack(formats::fp32, negative,
                 {static_cast<std::uint64_t>(std::llabs(difference)), d.lsb_exponent, false},
                 Rounding::nearest_even, Overflow::ieee);
  return {part, residual, false};
}

std::uint32_t fp32_scale_rn(std::uint32_t y, int exponent) {
  const Decoded d = decode(formats::fp32, y);
  switch (d.value_class) {
    case ValueClass::nan:
      return kFp32Nan;
    case ValueClass::infinity:
    case ValueClass::zero:
      return y;
    case ValueClass::finite:
      break;
  }
  return round_pack(formats::fp32, d.negative, {d.significand, d.lsb_exponent + exponent, false},
                    Rounding::nearest_even, Overflow::ieee);
}

std::uint32_t fp32_add_rn(std::uint32_t a, std::uint32_t b) {
  return canonical(std::bit_cast<float>(a) + std::bit_cast<float>(b));
}

std::uint32_t fp32_mul_rn(std::uint32_t a, std::uint32_t b) {
  return canonical(std::bit_cast<float>(a) * std::bit_cast<float>(b));
}

std::uint32_t fp32_fma_rn(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  return canonical(
      std::fma(std::bit_cast<float>(a), std::bit_cast<float>(b), std::bit_cast<float>(c)));
}

}  // namespace tcemu
