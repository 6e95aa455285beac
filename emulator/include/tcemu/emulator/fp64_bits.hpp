// IEEE 754 binary64 by its bit fields, the same code on the host and on the device
// (TCEMU_HOST_DEVICE): the element functions of the Ozaki steps and the long accumulator
// (tcemu/backend/ozaki_elements.hpp, long_accumulator.hpp) are built on these, so that the host
// backends and the GPU backend compute the same bits. Power-of-two scaling, the fp32 widening and
// the rounding of an exact value to binary64 are integer arithmetic on the fields; the rounded
// operations are rounded_arithmetic.hpp's.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

#include <tcemu/emulator/host_device.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu::fp64 {

inline constexpr std::uint64_t kSignBit = std::uint64_t{1} << 63;
inline constexpr std::uint64_t kExponentMask = std::uint64_t{0x7FF} << 52;
inline constexpr std::uint64_t kFractionMask = (std::uint64_t{1} << 52) - 1;
// The NaN every Ozaki step writes (IEEE 754 leaves a NaN result's payload to the hardware).
inline constexpr std::uint64_t kCanonicalNan = 0x7FF8000000000000ULL;
inline constexpr std::uint32_t kCanonicalNan32 = 0x7FC00000u;

TCEMU_HOST_DEVICE inline std::uint64_t bits(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(x));
#else
  return std::bit_cast<std::uint64_t>(x);
#endif
}

TCEMU_HOST_DEVICE inline double value(std::uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(b));
#else
  return std::bit_cast<double>(b);
#endif
}

TCEMU_HOST_DEVICE constexpr bool is_finite(std::uint64_t b) {
  return (b & kExponentMask) != kExponentMask;
}
TCEMU_HOST_DEVICE constexpr bool is_nan(std::uint64_t b) {
  return (b & ~kSignBit) > kExponentMask;
}
TCEMU_HOST_DEVICE constexpr bool is_infinite(std::uint64_t b) {
  return (b & ~kSignBit) == kExponentMask;
}
TCEMU_HOST_DEVICE constexpr bool is_zero(std::uint64_t b) {
  return (b & ~kSignBit) == 0;
}

// |x| = significand * 2^exponent for a finite x, from its bit fields: a subnormal (or zero) has
// field 0 and exponent -1074, a normal number the implicit bit and exponent field - 1075.
struct Fields {
  bool negative;
  std::uint64_t significand;  // < 2^53
  int exponent;               // of the significand's last bit, in [-1074, 971]
};
TCEMU_HOST_DEVICE inline Fields fields(double x) {
  const std::uint64_t raw = bits(x);
  const auto field = static_cast<int>((raw >> 52) & 0x7FF);
  const std::uint64_t fraction = raw & kFractionMask;
  if (field == 0) return {(raw & kSignBit) != 0, fraction, -1074};
  return {(raw & kSignBit) != 0, fraction | (std::uint64_t{1} << 52), field - 1075};
}

// IEEE 754's rounding-direction attributes for a binary64 result: roundTiesToEven,
// roundTowardPositive, roundTowardNegative, roundTowardZero. The Ozaki schemes' correctly rounded
// mode (ozaki::Options::rounding) rounds the exact product in any of them; every other binary64
// result of the libraries is rounded to nearest even.
//
// to_odd is internal, never a user's direction (ozaki::rounding_by_name does not name it,
// ozaki::Options refuses it): round to odd (RO), the truncation with its last kept bit set when
// any dropped bit is nonzero, and the largest finite magnitude of the sign beyond it. It carries
// an exact value to a binary32 result correctly rounded in any direction: narrow_bits(RO_53(x),
// d) = RD_24(x) for every real x and every direction d (Boldo and Melquiond, "Emulation of FMA
// and correctly rounded sums: proved algorithms using rounding to odd", IEEE Trans. Computers
// 57(4), 2008, Theorem 1: rounding to odd at p bits, then to q <= p - 2 bits in any direction,
// is the rounding of x to q bits; here p = 53, q = 24). Its premises, checked at the edges:
// - binary32's overflow, 2^128 <= |x| < 2^1024: IEEE decides it from the rounding with an
//   unbounded exponent, which the theorem gives equal for RO(x) and x.
// - binary32's subnormal range, 2^-1022 <= |x| < 2^-126: binary64 is normal there, so RO(x)
//   keeps 53 bits of x where binary32's grid 2^-149 keeps at most 24: the theorem holds with
//   q <= 24.
// - |x| < 2^-1022 (binary64's subnormals, fewer than 53 bits): RO(x) is 0 exactly when x is 0
//   and otherwise keeps x's sign with |RO(x)| <= 2^-1022 < 2^-150, as |x|: both lie strictly
//   between 0 and half binary32's least subnormal, where every direction gives the same result
//   (nearest and toward zero: a zero of the sign; away from zero: the least subnormal of the
//   sign), so the rounding of RO(x) is that of x.
// - |x| beyond binary64's range: RO gives the largest finite binary64 of the sign, 2^1024 -
//   2^971, itself beyond binary32's largest 2^128 - 2^104 and off the binary32 grid, so every
//   direction rounds it as it rounds x (Inf, or the largest finite binary32 of the sign).
// Any later scaling by a power of two would round again where it leaves the normal range, so a
// value rounded to odd goes straight to narrow_bits.
enum class Direction : std::uint8_t { nearest_even, upward, downward, toward_zero, to_odd };

// (-1)^negative * m rounded in direction d to binary64, as round_pack (round.hpp) does for the
// formats of at most 32 bits: p = 53 kept bits, or fewer on the subnormal grid 2^-1074; a carry out
// of the kept bits renormalises; a zero significand: a zero of the sign. When m.sticky is set,
// m.significand must hold at least 55 bits (then the round bit and the sticky bit both lie below
// the kept bits). The kept bits are incremented: to nearest, when the round bit is set and the
// rest or the last kept bit is (ties to even); upward (downward), when the value is positive
// (negative) and any dropped bit is set; toward zero and to odd, never; to odd sets the last kept
// bit when any dropped bit is set (no carry: kept stays below 2^53, on the subnormal grid too,
// where a nonzero value below 2^-1074 gives 2^-1074). Beyond the largest finite value
// (IEEE 754, 7.4): Inf of the sign to nearest and where the direction points away from zero
// (upward for a positive value, downward for a negative one), otherwise (to odd included) the
// largest finite magnitude of the sign. A nonzero value rounded to a zero keeps its sign.
TCEMU_HOST_DEVICE inline double round(bool negative, ExactMagnitude m, Direction d) {
  const std::uint64_t sign = negative ? kSignBit : 0;
  if (m.significand == 0) return value(sign);
  const int msb = detail::bit_width(m.significand) - 1;
  const int lsb = m.lsb_exponent + msb - 52 > -1074 ? m.lsb_exponent + msb - 52 : -1074;
  const int shift = lsb - m.lsb_exponent;
  std::uint64_t kept = 0;
  bool round_bit = false, rest = m.sticky;
  if (shift <= 0) {
    kept = m.significand << -shift;  // every bit kept (msb - shift <= 52)
  } else if (shift <= 64) {
    kept = shift == 64 ? 0 : m.significand >> shift;
    round_bit = ((m.significand >> (shift - 1)) & 1) != 0;
    rest = rest || (shift > 1 && (m.significand << (65 - shift)) != 0);
  } else {
    rest = true;
  }
  const bool away = d == Direction::nearest_even || (d == Direction::upward && !negative) ||
                    (d == Direction::downward && negative);
  if (d == Direction::nearest_even ? round_bit && (rest || (kept & 1) != 0)
                                   : away && (round_bit || rest)) {
    ++kept;
  }
  if (d == Direction::to_odd && (round_bit || rest)) kept |= 1;
  // value = kept * 2^lsb with kept <= 2^53. On the subnormal grid (lsb = -1074) kept is its own
  // encoding (a carry into 2^52 is the smallest normal); above it kept is in [2^52, 2^53] and the
  // field is (lsb + 1074) + kept / 2^52, the sum below carrying a rounding overflow into the
  // exponent.
  const auto units = static_cast<std::uint64_t>(lsb + 1074);
  const std::uint64_t field = units + (kept >> 52);
  // kExponentMask - 1 is 0x7FEF...F, the largest finite magnitude.
  if (field >= 0x7FF) return value(sign | (away ? kExponentMask : kExponentMask - 1));
  return value(sign | ((units << 52) + kept));
}

// round(negative, m, Direction::nearest_even).
TCEMU_HOST_DEVICE inline double round_nearest_even(bool negative, ExactMagnitude m) {
  return round(negative, m, Direction::nearest_even);
}

// The bits of |x| for a finite x, 0 for Inf and NaN. For finite numbers these order as the
// magnitudes do, so the largest finite magnitude of a vector is the integer maximum.
TCEMU_HOST_DEVICE constexpr std::uint64_t finite_magnitude(std::uint64_t b) {
  return is_finite(b) ? b & ~kSignBit : 0;
}

// The exponent of the leading bit of a finite nonzero magnitude (bits of |x|): x in
// [2^E, 2^(E+1)), E in [-1074, 1023]; a subnormal's leading fraction bit counts.
TCEMU_HOST_DEVICE inline int leading_exponent(std::uint64_t magnitude) {
  const auto field = static_cast<int>(magnitude >> 52);
  if (field != 0) return field - 1023;
  return detail::bit_width(magnitude) - 1 - 1074;
}

// x * 2^e rounded once to nearest even (IEEE 754 scaleB, C's scalbn): exact unless the result
// is subnormal (rounded once) or overflows (+-Inf). Zeros and Inf come back unchanged, NaN too
// (payload kept). Any e (sums of exponents in 64-bit integers): beyond +-4000 every finite
// nonzero x overflows or rounds to a zero, so e is clamped there, which changes no result.
//
// A normal x whose result is normal changes only its exponent field (the common case). Any other
// finite nonzero x = significand * 2^exponent (fields) is significand * 2^(exponent + e) exactly,
// rounded once by round_nearest_even: onto the subnormal grid 2^-1074, or to Inf.
TCEMU_HOST_DEVICE inline double scale(double x, std::int64_t e) {
  const std::uint64_t b = bits(x);
  const auto field = static_cast<int>((b >> 52) & 0x7FF);
  const std::uint64_t fraction = b & kFractionMask;
  if (field == 0x7FF || (field == 0 && fraction == 0)) return x;
  const auto shift_by = static_cast<int>(std::clamp<std::int64_t>(e, -4000, 4000));
  if (field != 0 && field + shift_by >= 1 && field + shift_by <= 2046) {
    return value(b + (static_cast<std::uint64_t>(static_cast<std::int64_t>(shift_by)) << 52));
  }
  const Fields f = fields(x);
  return round_nearest_even(f.negative, {f.significand, f.exponent + shift_by, false});
}

// 2^e for e in [-1022, 1023], from the fields.
TCEMU_HOST_DEVICE inline double power_of_two(int e) {
  return value(static_cast<std::uint64_t>(e + 1023) << 52);
}

// The binary64 value of fp32 bits, exactly: what a C++ float-to-double conversion gives on x86,
// a NaN included (its payload shifted up, the quiet bit set).
TCEMU_HOST_DEVICE inline double widen(std::uint32_t f) {
  const std::uint64_t sign = static_cast<std::uint64_t>(f >> 31) << 63;
  const std::uint32_t field = (f >> 23) & 0xFF;
  const std::uint64_t fraction = f & 0x7FFFFF;
  if (field == 0xFF) {
    return value(sign | kExponentMask | (fraction == 0 ? 0 : (std::uint64_t{1} << 51)) |
                 (fraction << 29));
  }
  if (field == 0) {
    if (fraction == 0) return value(sign);
    // fraction * 2^-149, normal in binary64.
    const int msb = detail::bit_width(fraction) - 1;
    return value(sign | (static_cast<std::uint64_t>(msb - 149 + 1023) << 52) |
                 ((fraction << (52 - msb)) & kFractionMask));
  }
  return value(sign | (static_cast<std::uint64_t>(field - 127 + 1023) << 52) | (fraction << 29));
}

// x rounded to nearest even to binary32 (IEEE overflow to Inf), as bits; NaN gives 0x7FC00000.
TCEMU_HOST_DEVICE inline std::uint32_t narrow_bits(double x) {
  if (is_nan(bits(x))) return kCanonicalNan32;
#if defined(__CUDA_ARCH__)
  return __float_as_uint(__double2float_rn(x));
#else
  return std::bit_cast<std::uint32_t>(static_cast<float>(x));
#endif
}

// x rounded to binary32 in direction d (not to_odd), as bits; IEEE overflow (Inf where d points
// away from zero or is to nearest, otherwise the largest finite magnitude of the sign); NaN gives
// 0x7FC00000. A directed result is the truncation t = RZ(x) (round_pack: it gives the largest
// finite magnitude beyond it), plus one unit in the last place of t's magnitude when d points
// away from zero for x's sign and t is not x. Adding 1 to the bits of a finite binary32
// magnitude gives its successor: the next subnormal, the next normal across the binade (the
// fraction's carry increments the exponent field) or, from the largest finite, Inf.
TCEMU_HOST_DEVICE inline std::uint32_t narrow_bits(double x, Direction d) {
  if (d == Direction::nearest_even || !is_finite(bits(x))) return narrow_bits(x);
  constexpr FloatFormat fp32 = formats::fp32;  // a local copy: device code reads it
  const Fields f = fields(x);
  std::uint32_t t = round_pack(fp32, f.negative, {f.significand, f.exponent, false},
                               Rounding::toward_zero, Overflow::ieee);
  const bool away =
      (d == Direction::upward && !f.negative) || (d == Direction::downward && f.negative);
  if (away && widen(t) != x) ++t;
  return t;
}

// x with every NaN made kCanonicalNan.
TCEMU_HOST_DEVICE inline double canonical(double x) {
  return is_nan(bits(x)) ? value(kCanonicalNan) : x;
}

}  // namespace tcemu::fp64
