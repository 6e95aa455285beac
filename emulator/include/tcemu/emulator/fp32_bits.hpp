// IEEE 754 binary32 arithmetic on bit patterns, the same bits on the host and on the device
// (TCEMU_HOST_DEVICE): the RN add, multiply, fused multiply-add and power-of-two scaling of an
// NVIDIA GPU's fp32 units without .ftz, every NaN result written as the GPU writes it. The emulated
// GEMM's take-out adds (gemm.cpp) and the fp32 split steps of the backends
// (tcemu/backend/fp32_split_elements.hpp) are built on these.
//
// Adds, multiplies and fused multiply-adds are the host's IEEE 754 binary32 operations under the
// default round-to-nearest-even with subnormals (the GPU's .rn operations without .ftz); only the
// NaN payload is made the GPU's. Power-of-two scaling is exact integer arithmetic on the decoded
// bit fields and one call of the round-and-pack routine (round.hpp); device code scales by a
// normal power of two with the one RN multiply that gives the same bits.
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
