// IEEE 754 binary32 arithmetic on bit patterns, the same bits on the host and on the device
// (TCEMU_HOST_DEVICE): the RN add, multiply, fused multiply-add, division and power-of-two scaling
// of an NVIDIA GPU's fp32 units without .ftz, every NaN result written as the GPU writes it. The
// emulated GEMM's take-out adds (gemm.cpp), the fp32 split steps of the backends
// (tcemu/backend/fp32_split_elements.hpp) and the NVFP4 quantization recipe (quantize.cpp) are
// built on these.
//
// Adds, multiplies and fused multiply-adds are the host's IEEE 754 binary32 operations under the
// default round-to-nearest-even with subnormals (the GPU's .rn operations without .ftz); only the
// NaN payload is made the GPU's. Division and power-of-two scaling are exact integer arithmetic on
// the decoded bit fields and one call of the round-and-pack routine (round.hpp); device code
// scales by a normal power of two with the one RN multiply that gives the same bits.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/host_device.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu {

// The NaN an NVIDIA GPU's fp32 arithmetic writes for every NaN result, whatever the operands'
// payloads (sign clear, every fraction bit set), and the fp32 NaN of every MMA preset
// (presets.cpp, docs/presets.md). tcemu/backend/nan.hpp says which steps write it.
inline constexpr std::uint32_t kGpuFp32Nan = 0x7FFFFFFFu;

namespace detail {

TCEMU_HOST_DEVICE inline float as_float(std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  return std::bit_cast<float>(bits);
#endif
}

// The bits of a binary32 number as they are (a NaN keeps its payload).
TCEMU_HOST_DEVICE inline std::uint32_t as_bits(float value) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(value);
#else
  return std::bit_cast<std::uint32_t>(value);
#endif
}

// The bits of an fp32 result, NaN made canonical.
TCEMU_HOST_DEVICE inline std::uint32_t canonical_bits(float value) {
#if defined(__CUDA_ARCH__)
  return isnan(value) ? kGpuFp32Nan : __float_as_uint(value);
#else
  return std::isnan(value) ? kGpuFp32Nan : std::bit_cast<std::uint32_t>(value);
#endif
}

}  // namespace detail

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

// The fp32 quotient a / b rounded once to nearest even (IEEE 754 division with subnormals, the
// GPU's div.rn.f32 without .ftz), every NaN result 0x7FFFFFFF: exact integer division and one
// round-and-pack, so no host floating point is involved. 0/0 and Inf/Inf are NaN, x/0 is Inf and
// x/Inf is zero, each with the sign of a times the sign of b.
TCEMU_HOST_DEVICE inline std::uint32_t fp32_div_rn(std::uint32_t a, std::uint32_t b) {
  constexpr FloatFormat fp32 = formats::fp32;  // a local copy: device code reads it
  const Decoded x = decode(fp32, a);
  const Decoded y = decode(fp32, b);
  const bool negative = x.negative != y.negative;
  const bool x_inf = x.value_class == ValueClass::infinity;
  const bool y_inf = y.value_class == ValueClass::infinity;
  const bool x_zero = x.value_class == ValueClass::zero;
  const bool y_zero = y.value_class == ValueClass::zero;
  if (x.value_class == ValueClass::nan || y.value_class == ValueClass::nan || (x_inf && y_inf) ||
      (x_zero && y_zero)) {
    return kGpuFp32Nan;
  }
  if (x_inf || y_zero) return encode_infinity(fp32, negative);
  if (y_inf || x_zero) return encode_zero(fp32, negative);
  // Both finite and nonzero. With each significand shifted to [2^23, 2^24) (a subnormal has fewer
  // bits), (sx << 40) < 2^64 and the quotient (sx << 40) / sy lies in (2^39, 2^41): at least 40
  // significant bits, more than the 24 + 2 round_pack needs below its last kept bit, and a nonzero
  // remainder is the sticky bit.
  const int shift_x = 24 - detail::bit_width(x.significand);
  const int shift_y = 24 - detail::bit_width(y.significand);
  const std::uint64_t dividend = (x.significand << shift_x) << 40;
  const std::uint64_t divisor = y.significand << shift_y;
  const int lsb = (x.lsb_exponent - shift_x) - (y.lsb_exponent - shift_y) - 40;
  return round_pack(fp32, negative, {dividend / divisor, lsb, dividend % divisor != 0},
                    Rounding::nearest_even, Overflow::ieee);
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
      return kGpuFp32Nan;
    case ValueClass::infinity:
    case ValueClass::zero:
      return y;
    case ValueClass::finite:
      break;
  }
  return round_pack(fp32, d.negative, {d.significand, d.lsb_exponent + exponent, false},
                    Rounding::nearest_even, Overflow::ieee);
}

}  // namespace tcemu
