// The elementwise arithmetic of the error-corrected SGEMM steps of backend.hpp (split_fp32 and
// combine_fp32), one fp32 element at a time. The emulator backend applies these to every element;
// a GPU backend must give the same bits (backend.hpp states the semantics it implements).
//
// Splits and power-of-two scalings are exact integer arithmetic on decoded bit fields followed by
// one call of the round-and-pack routine (round.hpp). Adds, multiplies and fused multiply-adds are
// the host's IEEE 754 binary32 operations under the default round-to-nearest-even with subnormals
// (the GPU's .rn operations without .ftz); only the NaN payload is made canonical.
#pragma once

#include <cstdint>

#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu {

// A format a part of an fp32 split can have: IEEE specials, at most 24 significant bits, and a
// normal range inside fp32's (fp16, bf16, tf32, e5m2), so that every part value is an fp32 value
// and the residual of a split is exact (proof at split_fp32_element).
bool is_split_format(const FloatFormat& format);

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
SplitElement split_fp32_element(std::uint32_t x, const FloatFormat& format, Rounding rounding,
                                int scale_exponent);

// The fp32 value y * 2^exponent rounded once to nearest even (IEEE scalbn / ldexpf), for any
// integer exponent. NaN gives 0x7FFFFFFF, Inf and zeros keep their sign.
std::uint32_t fp32_scale_rn(std::uint32_t y, int exponent);

// The fp32 operations of the GPU without .ftz, on bits, every NaN result 0x7FFFFFFF:
// round-to-nearest-even add, multiply and fused multiply-add (a * b + c rounded once).
std::uint32_t fp32_add_rn(std::uint32_t a, std::uint32_t b);
std::uint32_t fp32_mul_rn(std::uint32_t a, std::uint32_t b);
std::uint32_t fp32_fma_rn(std::uint32_t a, std::uint32_t b, std::uint32_t c);

}  // namespace tcemu
