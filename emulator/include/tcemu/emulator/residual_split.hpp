// The elementwise arithmetic of the error-corrected SGEMM steps of backend.hpp (split_fp32 and
// combine_fp32), one fp32 element at a time. The emulator backend applies these to every element;
// a GPU backend must give the same bits (backend.hpp states the semantics it implements).
//
// Splits and power-of-two scalings are exact integer arithmetic on decoded bit fields followed by
// one call of the round-and-pack routine (round.hpp); device code scales by a normal power of two
// with the one RN multiply that gives the same bits (fp32_scale_rn). Adds, multiplies and fused
// multiply-adds are the host's IEEE 754 binary32 operations under the default round-to-nearest-even
// with subnormals (the GPU's .rn operations without .ftz); only the NaN payload is made canonical.
#pragma once

#include <cstdint>

#include <bit>
#include <cassert>
#include <cmath>

#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/host_device.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu {

namespace detail {

inline constexpr std::uint32_t kFp32Nan = 0x7FFFFFFFu;

TCEMU_HOST_DEVICE inline float as_float(std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  return std::bit_cast<float>(bits);
#endif
}

// The bits of an fp32 result, NaN made canonical.
TCEMU_HOST_DEVICE inline std::uint32_t canonical_bits(float value) {
#if defined(__CUDA_ARCH__)
  return isnan(value) ? kFp32Nan : __float_as_uint(value);
#else
  return std::isnan(value) ? kFp32Nan : std::bit_cast<std::uint32_t>(value);
#endif
}

}  // namespace detail

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
  // part * 2^-e = q.significand * 2^(q.lsb_exponent - e), a multiple of x's quantum 2^lsb (proof
  // in backend.hpp), no larger than 2 |x| < 2^(lsb + 25): measured in x's quanta it is an integer
  // below 2^25, and the difference of the two integers is exact in int64 with magnitude below
  // 2^24. The shift to x's quantum is negative only when q.significand carries trailing zeros
  // below it (a subnormal part such as 2 x 2^-24 for x = 2^-149, e = 126): those bits are zero,
  // so the right shift is exact.
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

// The fp32 operations of the GPU without .ftz, on bits, every NaN result 0x7FFFFFFF:
// round-to-nearest-even add, multiply and fused multiply-add (a * b + c rounded once).
// Device code calls the .rn intrinsics, which the compiler never contracts into an fma; host code
// is compiled without floating-point contraction (ISO C++ mode, -ffp-contract=off).
TCEMU_HOST_DEVICE inline std::uint32_t fp32_add_rn(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  return detail::canonical_bits(__fadd_rn(detail::as_float(a), detail::as_float(b)));
#else
  return detail::canonical_bits(detail::as_float(a) + detail::as_float(b));
#endif
}

TCEMU_HOST_DEVICE inline std::uint32_t fp32_mul_rn(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  return detail::canonical_bits(__fmul_rn(detail::as_float(a), detail::as_float(b)));
#else
  return detail::canonical_bits(detail::as_float(a) * detail::as_float(b));
#endif
}

TCEMU_HOST_DEVICE inline std::uint32_t fp32_fma_rn(std::uint32_t a, std::uint32_t b,
                                                   std::uint32_t c) {
#if defined(__CUDA_ARCH__)
  return detail::canonical_bits(
      __fmaf_rn(detail::as_float(a), detail::as_float(b), detail::as_float(c)));
#else
  return detail::canonical_bits(
      std::fma(detail::as_float(a), detail::as_float(b), detail::as_float(c)));
#endif
}

// The fp32 value y * 2^exponent rounded once to nearest even (IEEE scalbn / ldexpf), for any
// integer exponent. NaN gives 0x7FFFFFFF, Inf and zeros keep their sign.
TCEMU_HOST_DEVICE inline std::uint32_t fp32_scale_rn(std::uint32_t y, int exponent) {
#if defined(__CUDA_ARCH__)
  // For -126 <= exponent <= 127, 2^exponent is a normal fp32 (bits (127 + exponent) << 23) and
  // the RN multiply y * 2^exponent rounds the exact product once, subnormal results and the
  // overflow to +-Inf included (no .ftz): the value computed below. +-0 and +-Inf keep their
  // sign, and fp32_mul_rn makes a NaN canonical.
  if (exponent >= -126 && exponent <= 127) {
    return fp32_mul_rn(y, static_cast<std::uint32_t>(127 + exponent) << 23);
  }
#endif
  constexpr FloatFormat fp32 = formats::fp32;  // a local copy: device code reads it
  const Decoded d = decode(fp32, y);
  switch (d.value_class) {
    case ValueClass::nan:
      return detail::kFp32Nan;
    case ValueClass::infinity:
    case ValueClass::zero:
      return y;
    case ValueClass::finite:
      break;
  }
  return round_pack(fp32, d.negative, {d.significand, d.lsb_exponent + exponent, false},
                    Rounding::nearest_even, Overflow::ieee);
}

// One element of Backend::combine_fp32 (backend.hpp has the order of operations): y and c are
// read only when has_y, and when beta != 0.
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

// The special value of a sum of products that holds NaN or Inf factors (propagate_nonfinite_fp32
// in backend.hpp): fed with every product whose factor is NaN or Inf, in any order.
struct NonfiniteProducts {
  bool nan = false, positive = false, negative = false;

  TCEMU_HOST_DEVICE void add(std::uint32_t a, std::uint32_t b) {
    constexpr FloatFormat fp32 = formats::fp32;
    const Decoded x = decode(fp32, a), y = decode(fp32, b);
    if (x.value_class == ValueClass::nan || y.value_class == ValueClass::nan ||
        x.value_class == ValueClass::zero || y.value_class == ValueClass::zero) {
      nan = true;  // a NaN factor, or 0 times the other factor, which is infinite
    } else {
      (x.negative != y.negative ? negative : positive) = true;
    }
  }
  TCEMU_HOST_DEVICE std::uint32_t result() const {
    return nan || (positive && negative) ? detail::kFp32Nan
                                         : (negative ? 0xFF800000u : 0x7F800000u);
  }
};

}  // namespace tcemu
