// The element-level arithmetic of the Ozaki steps (ozaki_steps.hpp: split, accumulate_scaled,
// exact_sum, epilogue), one element at a time, host and device
// (TCEMU_HOST_DEVICE). The host backends and the GPU kernels run these same functions over
// their matrices, so the two give the same bits; ozaki_steps.hpp states the semantics.
#pragma once

#include <cstdint>

#include <tcemu/backend/blas_epilogue.hpp>
#include <tcemu/backend/long_accumulator.hpp>
#include <tcemu/backend/nonfinite_products.hpp>
#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/fp64_bits.hpp>
#include <tcemu/emulator/host_device.hpp>
#include <tcemu/emulator/round.hpp>
#include <tcemu/emulator/rounded_arithmetic.hpp>

namespace tcemu::ozaki_elements {

// ---- split (Algorithm 1 of Mukunoki et al., one level; Backend::split_level) -------------------

// One level's constants for a vector whose largest finite magnitude has bits mu != 0:
// u = 2^unit is the slice's unit, sigma = 1.5 * 2^t.
struct SplitLevel {
  int unit;
  int t;
};

// ceil(log2 mu) for the bits of a finite nonzero magnitude: the leading exponent E (mu in
// [2^E, 2^(E+1))), plus one unless mu is exactly 2^E (a normal with a zero fraction field, or a
// subnormal with a single bit set).
TCEMU_HOST_DEVICE inline int ceil_log2_magnitude(std::uint64_t mu) {
  const bool normal = (mu >> 52) != 0;
  const bool power_of_two = normal ? (mu & fp64::kFractionMask) == 0 : (mu & (mu - 1)) == 0;
  return fp64::leading_exponent(mu) + (power_of_two ? 0 : 1);
}

// Algorithm 1 of Mukunoki et al. (ISC 2020), one level: tau = ceil(log2 mu) and sigma =
// 0.75 * 2^(rho + tau) with rho = 53 - bits (the slice keeps `bits` bits below 2^tau), so
// sigma = 1.5 * 2^(tau + 52 - bits), whose spacing is u = 2^(tau - bits). With tau =
// ceil(log2 mu) rather than the leading exponent + 1, a vector whose largest magnitude is
// exactly 2^E gets the unit 2^(E - bits), one bit finer: its first slice holds 2^E as 2^bits
// units (OzBLAS's ozblasSplitCKernel does the same).
TCEMU_HOST_DEVICE inline SplitLevel split_level_of(std::uint64_t mu, int bits) {
  const int tau = ceil_log2_magnitude(mu);
  return {tau - bits, tau + 52 - bits};
}

// The usual level: sigma = 1.5 * 2^t and 2^-unit both normal binary64 numbers.
struct NormalSplitLevel {
  double sigma;
  double inverse_unit;  // 2^-unit
};

TCEMU_HOST_DEVICE inline bool is_normal(SplitLevel level) {
  return level.t >= -1022 && level.t <= 1023 && -level.unit >= -1022 && -level.unit <= 1023;
}

TCEMU_HOST_DEVICE inline NormalSplitLevel normal_level(SplitLevel level) {
  return {
      fp64::value((static_cast<std::uint64_t>(level.t + 1023) << 52) | (std::uint64_t{1} << 51)),
      fp64::power_of_two(-level.unit)};
}

// split_element on a normal level for a finite v.
TCEMU_HOST_DEVICE inline double split_finite_normal_element(double& v, NormalSplitLevel level) {
  const double slice = sub_rn(add_rn(v, level.sigma), level.sigma);
  v = sub_rn(v, slice);
  // q = slice / u, an integer: exact as a product by 2^-unit, a normal power. Never -0: v + sigma
  // is positive, and when slice is zero it is the RN difference of two equal values, +0.
  return mul_rn(slice, level.inverse_unit);
}

// split_element on a normal level.
TCEMU_HOST_DEVICE inline double split_normal_element(double& v, NormalSplitLevel level) {
  if (!fp64::is_finite(fp64::bits(v))) return 0.0;
  return split_finite_normal_element(v, level);
}

// The largest finite magnitude of some values (as bits; finite_magnitude orders as the
// magnitudes do), all that split_level_of reads: value() is its bits, 0 when every value was
// zero. The largest value() of several such bounds is the value() of their union. (Algorithm 1's
// tau = ceil(log2 mu) needs the whole magnitude: whether mu is exactly a power of two depends on
// every fraction bit.)
class LeadingMagnitude {
 public:
  TCEMU_HOST_DEVICE void add(double finite) {
    const std::uint64_t m = fp64::finite_magnitude(fp64::bits(finite));
    largest_ = m > largest_ ? m : largest_;
  }
  TCEMU_HOST_DEVICE std::uint64_t value() const { return largest_; }

 private:
  std::uint64_t largest_ = 0;
};

// One element: returns q = round_half_even(v / u) (+0 when it is zero) and replaces v by
// v - q u, exactly (ozaki_steps.hpp, split_level, has the proof). A non-finite v gives +0 and
// stays.
TCEMU_HOST_DEVICE inline double split_element(double& v, SplitLevel level) {
  if (is_normal(level)) return split_normal_element(v, normal_level(level));
  if (!fp64::is_finite(fp64::bits(v))) return 0.0;
  double q;
  if (level.t < -1022) {
    q = fp64::scale(v, -level.unit);  // an integer: v is a multiple of u < 2^-1074
    v = 0.0;
  } else if (level.t <= 1023) {
    // 2^-unit is not normal: q = slice / u by scaling.
    const double sigma =
        fp64::value((static_cast<std::uint64_t>(level.t + 1023) << 52) | (std::uint64_t{1} << 51));
    const double slice = sub_rn(add_rn(v, sigma), sigma);
    v = sub_rn(v, slice);
    q = fp64::scale(slice, -level.unit);
  } else {
    // sigma would overflow: the same in units 2^128 smaller.
    const double s = fp64::value((static_cast<std::uint64_t>(level.t - 128 + 1023) << 52) |
                                 (std::uint64_t{1} << 51));
    const double w = mul_rn(v, fp64::power_of_two(-128));
    const double slice = sub_rn(add_rn(w, s), s);
    if (slice != 0.0) v = mul_rn(sub_rn(w, slice), fp64::power_of_two(128));
    q = fp64::scale(slice, 128 - level.unit);
  }
  return q == 0.0 ? 0.0 : q;
}

// The bits of a slice element q, an integer of magnitude <= 2^bits (q is never -0), in a
// tensor-core format that holds every such integer exactly (Backend::split_level checks that
// fraction_bits + 1 >= bits and max_exponent() >= bits). With m = |q| in [2^e, 2^(e+1)), e <=
// bits: for e <= fraction_bits the fraction is m shifted up; otherwise m = 2^bits is a power of
// two and its fraction is zero. Exact, so it equals the rounding of q by convert().
TCEMU_HOST_DEVICE inline std::uint32_t slice_bits(double q, const FloatFormat& format) {
  const bool negative = q < 0.0;
  const auto m = static_cast<std::uint64_t>(negative ? -q : q);
  if (m == 0) return encode_zero(format, false);
  const int e = detail::bit_width(m) - 1;
  const int f = format.fraction_bits;
  const std::uint64_t fraction =
      (e <= f ? m << (f - e) : m >> (e - f)) & ((std::uint64_t{1} << f) - 1);
  return detail::pack(format, negative, static_cast<std::uint32_t>(e + format.bias()), fraction);
}

// ---- accumulate_scaled ------------------------------------------------------------------------

// dst + p * 2^e (or p * 2^e alone when `overwrite`), the scaling rounded once and the sum one
// RN addition; a NaN result is step_nan::ozaki_fp64 (nan.hpp).
TCEMU_HOST_DEVICE inline double accumulate_element(double dst, double p, std::int64_t e,
                                                   bool overwrite) {
  const double t = fp64::scale(p, e);
  return fp64::canonical(overwrite ? t : add_rn(dst, t));
}

// fp64::scale(p, e) for a binary32 value p (a tensor-core product), up to a NaN's payload: for
// e in [-873, 896] one multiplication by 2^e, which is exact: a nonzero finite binary32 has |p|
// in [2^-149, 2^128) and at most 24 significant bits, so |p| 2^e lies in [2^-1022, 2^1024), a
// normal binary64, and 2^e itself is normal; zeros and Inf keep their sign.
TCEMU_HOST_DEVICE inline double scale_binary32(double p, std::int64_t e) {
  return e >= -873 && e <= 896 ? mul_rn(p, fp64::power_of_two(static_cast<int>(e)))
                               : fp64::scale(p, e);
}

// Whether scale_binary32(p, e) is the one exact multiplication: e in [-873, 896].
TCEMU_HOST_DEVICE constexpr bool binary32_scaling_is_exact(std::int32_t e) {
  return static_cast<std::uint32_t>(e + 873) <= 1769u;
}

// accumulate_element (without overwrite) for a binary32 p, less its last step: the caller
// applies fp64::canonical once to the finished sum. A NaN stays a NaN through every later RN
// addition, so that gives the bits of canonicalising after each addition, as accumulate_element
// does. (Overwriting is the addition to -0: -0 + t is t, zeros' signs included.)
TCEMU_HOST_DEVICE inline double accumulate_binary32_term(double dst, double p, std::int64_t e) {
  return add_rn(dst, scale_binary32(p, e));
}

// accumulate_binary32_term(dst, p, e) where binary32_scaling_is_exact(e), with power = 2^e: p *
// 2^e is exact there, so the single rounding of a fused multiply-add rounds the same exact sum
// as the addition does (Inf and NaN p propagate alike; a NaN's payload may differ, which the
// caller's fp64::canonical removes).
TCEMU_HOST_DEVICE inline double accumulate_exact_binary32_term(double dst, double p, double power) {
  return fma_rn(p, power, dst);
}

// ---- exact_sum ---------------------------------------------------------------------------------

// One element of Backend::exact_sum: the finite terms summed exactly in a long accumulator
// (long_accumulator.hpp; binary64 terms only, so its short range), the non-finite terms and the
// signs of zeros on the side, rounded once at the end. Storage: where the limbs live (the
// accumulator's ArrayLimbs or StridedLimbs); constructing the element zeroes them.
template <class Storage = ArrayLimbs<Binary64Accumulator<>::kLimbs>>
class ExactSum {
 public:
  ExactSum() = default;
  TCEMU_HOST_DEVICE explicit ExactSum(Storage storage) : sum_(storage) {}

  TCEMU_HOST_DEVICE void add(double x) {
    const std::uint64_t b = fp64::bits(x);
    any_term_ = true;
    if (!fp64::is_finite(b)) {
      special_.add(x, 1.0);
      return;
    }
    if (b != fp64::kSignBit) all_negative_zero_ = false;
    sum_.add(x);
  }

  // 2^shift times the sum, rounded once in direction d, by the rules of Backend::exact_sum: a
  // NaN term or both infinite signs give step_nan::ozaki_fp64, otherwise an Inf term gives that
  // Inf; beyond the largest finite magnitude: fp64::round's overflow; an exact zero is -0 when
  // every term is -0, +0 otherwise.
  TCEMU_HOST_DEVICE double round(std::int64_t shift,
                                 fp64::Direction d = fp64::Direction::nearest_even) const {
    if (special_.any()) return special_.value();
    if (any_term_ && all_negative_zero_) return fp64::value(fp64::kSignBit);
    return sum_.round_to_double(shift, d);
  }

 private:
  Binary64Accumulator<Storage> sum_;
  NonfiniteProducts special_;  // the terms x as the products x * 1
  bool any_term_ = false;
  bool all_negative_zero_ = true;
};

// ---- epilogue ----------------------------------------------------------------------------------
// An element with the scheme's value s (replaced by NonfiniteProducts::value() of its products
// where a factor is not finite) is blas_epilogue(alpha, s, beta, c) (blas_epilogue.hpp, binary64):
// a zero alpha * s made +0, each product and the sum rounded once.

// The element when there is no product (k = 0 or alpha = 0): +0, or beta * c.
TCEMU_HOST_DEVICE inline double epilogue_without_value(double beta, double c) {
  return beta == 0.0 ? 0.0 : mul_rn(beta, c);
}

// What the epilogue writes for r: binary64 bits, or binary32 bits rounded in direction d
// (fp64::narrow_bits), every NaN canonical.
TCEMU_HOST_DEVICE inline std::uint64_t output_bits(double r, bool fp64_out, fp64::Direction d) {
  return fp64_out ? fp64::bits(fp64::canonical(r)) : fp64::narrow_bits(r, d);
}

}  // namespace tcemu::ozaki_elements
