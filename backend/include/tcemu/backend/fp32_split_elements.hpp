// The elementwise arithmetic of the fp32 split steps (fp32_split_steps.hpp: split_fp32 and
// combine_fp32), one fp32 element at a time, for host and device: the host backends apply these
// to every element and the GPU kernels give the same bits (fp32_split_steps.hpp states the
// semantics they implement).
//
// Splits are exact integer arithmetic on decoded bit fields followed by one call of the
// round-and-pack routine (round.hpp); the fp32 operations are those of fp32_bits.hpp, whose NaN
// is the GPU's (nan.hpp).
#pragma once

#include <bit>
#include <cassert>
#include <cstdint>

#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/fp32_bits.hpp>
#include <tcemu/emulator/host_device.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu {

// A format a part of an fp32 split can have: IEEE specials, at most 24 significant bits, and a
// normal range inside fp32's (fp16, bf16, tf32, e5m2), so that every part value is an fp32 value
// and the residual of a split is exact (proof at split_fp32_element).
inline bool is_split_format(const FloatFormat& format) {
  // Precision <= 24 and min_exponent >= -126 make every finite value of the format an fp32 value
  // (its smallest spacing 2^(min_exponent - fraction_bits) >= 2^-149); max_exponent <= 127 keeps
  // the largest one finite in fp32.
  return format.special == SpecialEncoding::ieee && format.fraction_bits <= 23 &&
         format.min_exponent() >= -126 && format.max_exponent() <= 127;
}

// One element of a split: part = round(x * 2^scale_exponent) in `format`, residual = x - part *
// 2^-scale_exponent in fp32. `overflow` is set when the rounding of x * 2^scale_exponent with an
// unbounded exponent range reaches 2^(format.max_exponent() + 1) in magnitude (IEEE 754's overflow:
// under RN the part is then +-Inf, under RZ +-max finite, and the split cannot represent x).
struct SplitElement {
  std::uint32_t part;      // bits of `format`
  std::uint32_t residual;  // fp32 bits
  bool overflow;
};

// x is fp32 bits. NaN gives the part format's canonical NaN, +-Inf gives +-Inf; both with
// residual +0 (the special value travels in the part alone). A zero gives a zero part of its sign
// and residual +0. An overflowing x gives the IEEE part and residual x - part when the part is
// finite (RZ), +0 when it is infinite (RN). Requires is_split_format(format).
TCEMU_HOST_DEVICE inline SplitElement split_fp32_element(std::uint32_t x, const FloatFormat& format,
                                                         Rounding rounding, int scale_exponent) {
  constexpr FloatFormat fp32 = formats::fp32;  // a local copy: device code reads it
  const Decoded d = decode(fp32, x);
  switch (d.value_class) {
    case ValueClass::nan:
    case ValueClass::infinity:
      return {convert(fp32, format, x, rounding), 0, false};
    case ValueClass::zero:
      return {encode_zero(format, d.negative), 0, false};
    case ValueClass::finite:
      break;
  }
  const int leading = d.lsb_exponent + detail::bit_width(d.significand) - 1;
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
  // part * 2^-e = q.significand * 2^(q.lsb_exponent - e), a multiple of x's quantum 2^lsb
  // (proof in fp32_split_steps.hpp), no larger than 2 |x| < 2^(lsb + 25): measured in x's quanta
  // it is an integer below 2^25, and the difference of the two integers is exact in int64 with
  // magnitude below 2^24. The shift to x's quantum is negative only when q.significand carries
  // trailing zeros below it (a subnormal part such as 2 x 2^-24 for x = 2^-149, e = 126): those
  // bits are zero, so the right shift is exact.
  const int shift = q.lsb_exponent - scale_exponent - d.lsb_exponent;
  assert(shift > -25 && shift < 25);
  const std::int64_t taken = shift >= 0 ? static_cast<std::int64_t>(q.significand) << shift
                                        : static_cast<std::int64_t>(q.significand >> -shift);
  const std::int64_t difference = static_cast<std::int64_t>(d.significand) - taken;
  if (difference == 0) return {part, 0, false};
  // x and part have the same sign, so the residual has x's sign when |x| > |part * 2^-e|.
  const bool negative = d.negative != (difference < 0);
  const std::uint32_t residual =
      round_pack(fp32, negative,
                 {static_cast<std::uint64_t>(difference < 0 ? -difference : difference),
                  d.lsb_exponent, false},
                 Rounding::nearest_even, Overflow::ieee);
  return {part, residual, false};
}

// One element of Fp32SplitSteps::combine_fp32 (fp32_split_steps.hpp has the order of operations): y
// and c are read only when has_y, and when beta != 0.
TCEMU_HOST_DEVICE inline std::uint32_t combine_fp32_element(std::uint32_t x, bool has_y,
                                                            std::uint32_t y, std::uint32_t c,
                                                            int y_exponent, int scale_exponent,
                                                            float alpha, float beta) {
  std::uint32_t s = x;
  if (has_y) s = fp32_add_rn(s, fp32_scale_rn(y, y_exponent));
  const std::uint32_t v = fp32_scale_rn(s, scale_exponent);
#if defined(__CUDA_ARCH__)
  const std::uint32_t alpha_bits = __float_as_uint(alpha), beta_bits = __float_as_uint(beta);
#else
  const auto alpha_bits = std::bit_cast<std::uint32_t>(alpha);
  const auto beta_bits = std::bit_cast<std::uint32_t>(beta);
#endif
  return beta == 0.0f ? fp32_mul_rn(alpha_bits, v)
                      : fp32_fma_rn(alpha_bits, v, fp32_mul_rn(beta_bits, c));
}

}  // namespace tcemu
