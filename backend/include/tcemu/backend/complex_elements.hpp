// The element functions of the complex steps (complex_steps.hpp), for host and device.
#pragma once

#include <cstdint>

#include <tcemu/backend/error_free.hpp>
#include <tcemu/emulator/fp64_bits.hpp>
#include <tcemu/emulator/host_device.hpp>

namespace tcemu::complex_elements {

// Where element (r, c) of the real form of a rows x cols complex x comes from (complex_steps.hpp,
// complex_real_form): x's element (i, j), its imaginary part or not, and whether its sign flips.
struct RealFormSource {
  std::int64_t i, j;
  bool imaginary;
  bool flip;
};

TCEMU_HOST_DEVICE inline RealFormSource real_form_source(std::int64_t r, std::int64_t c,
                                                         std::int64_t rows, std::int64_t cols,
                                                         bool conjugate) {
  const bool u = r >= rows, v = c >= cols;
  return {u ? r - rows : r, v ? c - cols : c, u != v, u != v && (!v != conjugate)};
}

// The stored bits of a part with its sign bit flipped when `flip` (fp64: bit 63, fp32: bit 31).
TCEMU_HOST_DEVICE inline std::uint64_t flip_sign(std::uint64_t bits, bool fp64, bool flip) {
  return flip ? bits ^ (fp64 ? std::uint64_t{1} << 63 : std::uint64_t{1} << 31) : bits;
}

template <RealType T>
struct Pair {
  T re, im;
};

// x s for a complex scalar x: a real x (x.im == 0) multiplies each part once, rounded; any other
// x is (x.re s.re - x.im s.im) + i (x.re s.im + x.im s.re), each product and the difference or
// sum rounded once (as the reference BLAS's complex arithmetic, without C99 Annex G's recovery
// of infinities).
template <RealType T>
TCEMU_HOST_DEVICE inline Pair<T> scale(Pair<T> x, Pair<T> s) {
  if (x.im == 0) return {mul_rn(x.re, s.re), mul_rn(x.re, s.im)};
  return {sub_rn(mul_rn(x.re, s.re), mul_rn(x.im, s.im)),
          add_rn(mul_rn(x.re, s.im), mul_rn(x.im, s.re))};
}

// The epilogue of one element in T (complex_steps.hpp): alpha s with zero parts made +0, plus
// beta c when beta != 0 (c not read otherwise). A real alpha and beta make it, part by part,
// blas_epilogue(alpha, s, beta, c): the real epilogue of the real form.
template <RealType T>
TCEMU_HOST_DEVICE inline Pair<T> complex_epilogue(Pair<T> alpha, Pair<T> s, Pair<T> beta,
                                                  Pair<T> c) {
  Pair<T> r = scale(alpha, s);
  if (r.re == 0) r.re = 0;
  if (r.im == 0) r.im = 0;
  if (beta.re != 0 || beta.im != 0) {
    const Pair<T> u = scale(beta, c);
    r = {add_rn(r.re, u.re), add_rn(r.im, u.im)};
  }
  return r;
}

// The element without a value (k = 0 or alpha = 0): +0, or beta c.
template <RealType T>
TCEMU_HOST_DEVICE inline Pair<T> complex_epilogue_without_value(Pair<T> beta, Pair<T> c) {
  if (beta.re == 0 && beta.im == 0) return {T(0), T(0)};
  return scale(beta, c);
}

// The bits stored for a result part r: binary64 or binary32 (rounded in direction d from a
// binary64 r, fp64::narrow_bits; exact from a binary32 one), every NaN canonical.
TCEMU_HOST_DEVICE inline std::uint64_t part_bits(double r, bool fp64_out, fp64::Direction d) {
  return fp64_out ? fp64::bits(fp64::canonical(r)) : fp64::narrow_bits(r, d);
}

}  // namespace tcemu::complex_elements
