// The IEEE 754 binary32 and binary64 operations rounded to nearest, ties to even, with subnormals
// (no flush to zero), the same bits on the host and on the device: the arithmetic that the shared
// element functions of the backends (tcemu/backend/error_free.hpp, dot2.hpp, blas_epilogue.hpp,
// ozaki_elements.hpp) are built from.
//
// Host code is plain C++ arithmetic: the libraries are compiled with -ffp-contract=off, so no
// a * b + c is fused behind our back. nvcc fuses by default (--fmad=true), which would change the
// bits of a + b * c, so device code calls the explicit _rn intrinsics, which it never contracts.
// fma_rn is the one fused operation, asked for by name.
#pragma once

#include <cmath>

#include <tcemu/emulator/host_device.hpp>

namespace tcemu {

TCEMU_HOST_DEVICE inline double add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
TCEMU_HOST_DEVICE inline float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
TCEMU_HOST_DEVICE inline double sub_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}
TCEMU_HOST_DEVICE inline float sub_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
TCEMU_HOST_DEVICE inline double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
TCEMU_HOST_DEVICE inline float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
// a * b + c with one rounding.
TCEMU_HOST_DEVICE inline double fma_rn(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
TCEMU_HOST_DEVICE inline float fma_rn(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

}  // namespace tcemu
