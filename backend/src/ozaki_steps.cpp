// The checks of the Ozaki steps (ozaki_steps.hpp); the arithmetic is each backend's.
#include <string>

#include <tcemu/backend/ozaki_steps.hpp>
#include <tcemu/emulator/floating_point_scope.hpp>

#include "step_checks.hpp"

namespace tcemu {

using detail::refuse;
using detail::require_fp64;
using detail::same_shape;
using detail::shape;

void OzakiSteps::check_exponents(const ExponentVector& v, std::int64_t size,
                                 const char* name_of) const {
  const std::string what = name() + ": exponent vector " + name_of;
  if (v.buffer == nullptr || v.buffer->owner() != this) {
    throw std::invalid_argument(what + " is not in a buffer of this backend");
  }
  if (v.size != size) {
    throw std::invalid_argument(what + " has " + std::to_string(v.size) + " elements, expected " +
                                std::to_string(size));
  }
  if (v.offset_bytes + static_cast<std::size_t>(size) * 4 > v.buffer->bytes()) {
    throw std::out_of_range(what + " runs past its buffer of " + std::to_string(v.buffer->bytes()));
  }
}

void OzakiSteps::copy_real(const RealMatrix& src, const RealMatrix& dst) {
  const FloatingPointScope scope;
  check(src, "source");
  check(dst, "destination");
  same_shape(name(), dst, "destination", src.rows, src.cols);
  if (src.format == Real::fp64 && dst.format == Real::fp32) {
    refuse(name(), "copy_real does not narrow fp64 to fp32");
  }
  copy_real_checked(src, dst);
}

void OzakiSteps::check_split(const RealMatrix& x, SplitAxis axis, int bits,
                             const SliceMatrix& slice, const ExponentVector& exponents) const {
  if (const auto* tc = std::get_if<BufferMatrix>(&slice)) {
    check(*tc, "slice");
    if (tc->rows != x.rows || tc->cols != x.cols) {
      refuse(name(),
             "slice is " + shape(tc->rows, tc->cols) + ", expected " + shape(x.rows, x.cols));
    }
    const FloatFormat& f = tc->format;
    // Integers below 2^bits need at most `bits` significant bits (fraction_bits + 1 >= bits);
    // 2^bits itself needs only its exponent (max_exponent() >= bits).
    if (f.fraction_bits + 1 < bits || f.max_exponent() < bits) {
      refuse(name(), "slice format " + std::string(f.name) + " cannot hold integers up to 2^" +
                         std::to_string(bits));
    }
  } else if (const auto* s8 = std::get_if<IntegerMatrix>(&slice)) {
    check(*s8, "slice");
    same_shape(name(), *s8, "slice", x.rows, x.cols);
    // int8 holds -128 .. 127: every integer of magnitude <= 2^bits for bits <= 6.
    if (s8->format != Integer::s8 || bits > 6) {
      refuse(name(), "an integer slice must be int8 (s8) and bits <= 6, got bits = " +
                         std::to_string(bits));
    }
  } else {
    const RealMatrix& r = std::get<RealMatrix>(slice);
    check(r, "slice");
    require_fp64(name(), r, "the slice");
    same_shape(name(), r, "slice", x.rows, x.cols);
  }
  check_exponents(exponents, axis == SplitAxis::rows ? x.rows : x.cols, "of the split");
}

void OzakiSteps::split_level(const RealMatrix& x, SplitAxis axis, int bits,
                             const SliceMatrix& slice, const ExponentVector& exponents) {
  const FloatingPointScope scope;
  check(x, "remainder");
  require_fp64(name(), x, "the remainder");
  if (bits < 1 || bits > 51) refuse(name(), "split_level: bits = " + std::to_string(bits));
  check_split(x, axis, bits, slice, exponents);
  split_level_checked(x, axis, bits, slice, exponents);
}

int OzakiSteps::split(const RealMatrix& x, SplitAxis axis, int bits, int levels,
                      std::span<const SliceMatrix> slices,
                      std::span<const ExponentVector> exponents) {
  const FloatingPointScope scope;
  check(x, "remainder");
  require_fp64(name(), x, "the remainder");
  if (bits < 1 || bits > 51) refuse(name(), "split: bits = " + std::to_string(bits));
  if (levels < 1) refuse(name(), "split: levels = " + std::to_string(levels) + " must be >= 1");
  if (slices.size() != exponents.size() || slices.size() > static_cast<std::size_t>(levels)) {
    refuse(name(), "split: " + std::to_string(slices.size()) + " slices and " +
                       std::to_string(exponents.size()) + " exponent vectors for " +
                       std::to_string(levels) + " levels");
  }
  for (std::size_t s = 0; s < slices.size(); ++s) {
    check_split(x, axis, bits, slices[s], exponents[s]);
  }
  return split_checked(x, axis, bits, levels, slices, exponents);
}

bool OzakiSteps::all_zero(const RealMatrix& x) {
  const FloatingPointScope scope;
  check(x, "tested");
  require_fp64(name(), x, "the tested matrix");
  return all_zero_checked(x);
}

void OzakiSteps::fp64_gemm(const RealMatrix& a, const RealMatrix& b, const RealMatrix& c) {
  const FloatingPointScope scope;
  check(a, "A");
  check(b, "B");
  check(c, "C");
  require_fp64(name(), a, "A");
  require_fp64(name(), b, "B");
  require_fp64(name(), c, "C");
  same_shape(name(), b, "B", a.cols, b.cols);
  same_shape(name(), c, "C", a.rows, b.cols);
  fp64_gemm_checked(a, b, c);
}

void OzakiSteps::check_scale(const OuterExponents& e, std::int64_t rows, std::int64_t cols,
                             const char* name_of) const {
  check_exponents(e.rows, rows, name_of);
  check_exponents(e.columns, cols, name_of);
}

void OzakiSteps::accumulate_scaled(const RealMatrixStack& products,
                                   std::span<const OuterExponents> scales,
                                   const OuterExponents& base, const RealMatrix& dst,
                                   bool overwrite) {
  const FloatingPointScope scope;
  if (products.count < 1 || scales.size() != static_cast<std::size_t>(products.count)) {
    refuse(name(), "accumulate_scaled: " + std::to_string(products.count) + " products and " +
                       std::to_string(scales.size()) + " scales");
  }
  RealMatrix last = products.first;
  last.offset_bytes += static_cast<std::size_t>(products.count - 1) * products.stride_bytes;
  check(products.first, "product");
  check(last, "product (last)");
  check(dst, "destination");
  require_fp64(name(), dst, "the destination");
  same_shape(name(), dst, "destination", products.first.rows, products.first.cols);
  for (const OuterExponents& scale : scales) check_scale(scale, dst.rows, dst.cols, "of the scale");
  check_scale(base, dst.rows, dst.cols, "of the base");
  accumulate_scaled_checked(products, scales, base, dst, overwrite);
}

void OzakiSteps::exact_sum(const RealMatrixStack& stack, const OuterExponents& scale,
                           const RealMatrix& dst, fp64::Direction d) {
  const FloatingPointScope scope;
  if (stack.count < 1) refuse(name(), "exact_sum of an empty stack");
  RealMatrix last = stack.first;
  last.offset_bytes += static_cast<std::size_t>(stack.count - 1) * stack.stride_bytes;
  check(stack.first, "stack");
  check(last, "stack (last)");
  require_fp64(name(), stack.first, "the stack");
  check(dst, "sum");
  require_fp64(name(), dst, "the sum");
  same_shape(name(), dst, "sum", stack.first.rows, stack.first.cols);
  check_scale(scale, dst.rows, dst.cols, "of the sum");
  exact_sum_checked(stack, scale, dst, d);
}

void OzakiSteps::epilogue(const std::optional<RealMatrix>& v,
                          const std::optional<OuterExponents>& v_scale, double alpha, double beta,
                          const std::optional<RealMatrix>& c, const std::optional<RealMatrix>& a,
                          const std::optional<RealMatrix>& b, const RealMatrix& out,
                          fp64::Direction d) {
  const FloatingPointScope scope;
  check(out, "out");
  if (d == fp64::Direction::to_odd) refuse(name(), "epilogue: no output rounds to odd");
  if (v) {
    check(*v, "value");
    require_fp64(name(), *v, "the value");
    same_shape(name(), *v, "value", out.rows, out.cols);
  }
  if (v_scale) {
    if (!v) refuse(name(), "epilogue: a scale without a value");
    check_scale(*v_scale, out.rows, out.cols, "of the value");
  }
  if (beta != 0.0) {
    if (!c) refuse(name(), "epilogue: beta != 0 needs C");
    check(*c, "C");
    same_shape(name(), *c, "C", out.rows, out.cols);
  }
  if (a.has_value() != b.has_value()) refuse(name(), "epilogue: give both A and B or neither");
  if (a) {
    check(*a, "A");
    check(*b, "B");
    if (a->rows != out.rows || b->cols != out.cols || a->cols != b->rows) {
      refuse(name(), "epilogue: A " + shape(a->rows, a->cols) + " and B " +
                         shape(b->rows, b->cols) + " do not give " + shape(out.rows, out.cols));
    }
  }
  epilogue_checked(v, v_scale, alpha, beta, c, a, b, out, d);
}

}  // namespace tcemu
