// Kulisch's long accumulator over the whole binary64 range, for host and device: an exact
// fixed-point sum of binary64 numbers and of exact products of two binary64 numbers, rounded once
// at the end to binary64 or binary32 (to nearest, ties to even).
//
// Invariant: the value is the two's-complement integer held in limbs_ (kLimbs little-endian
// 64-bit limbs) times 2^kLsbExponent. Widths: a finite binary64 is M 2^e with M < 2^53 and
// e >= -1074, so the exact product of two is a 106-bit integer times 2^(e_a + e_b) with
// e_a + e_b >= -2148 = kLsbExponent, and below 2^2048. The limbs hold 67 * 64 = 4288 bits: the sign
// bit is reached only after 2^(4287 - 2048 - 2148) = 2^91 terms of the largest magnitude, far more
// than any sum we form. Every add is therefore exact (no bit falls off either end).
#pragma once

#include <cstdint>

#include <tcemu/emulator/host_device.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu {

namespace detail {

// hi:lo = a * b, the exact 128-bit product.
TCEMU_HOST_DEVICE inline void multiply_64x64(std::uint64_t a, std::uint64_t b, std::uint64_t& hi,
                                             std::uint64_t& lo) {
#if defined(__CUDA_ARCH__)
  lo = a * b;
  hi = __umul64hi(a, b);
#else
  __extension__ using Uint128 = unsigned __int128;
  const Uint128 p = static_cast<Uint128>(a) * b;
  lo = static_cast<std::uint64_t>(p);
  hi = static_cast<std::uint64_t>(p >> 64);
#endif
}

TCEMU_HOST_DEVICE inline std::uint64_t double_bits(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(x));
#else
  return std::bit_cast<std::uint64_t>(x);
#endif
}

TCEMU_HOST_DEVICE inline double bits_double(std::uint64_t bits) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(bits));
#else
  return std::bit_cast<double>(bits);
#endif
}

// |x| = significand * 2^exponent for a finite binary64 x, from its bit fields: a subnormal has
// field 0 and exponent -1074, a normal number the implicit bit and exponent field - 1075.
struct Binary64Fields {
  bool negative;
  std::uint64_t significand;
  int exponent;
};
TCEMU_HOST_DEVICE inline Binary64Fields binary64_fields(double x) {
  const std::uint64_t raw = double_bits(x);
  const auto field = static_cast<int>((raw >> 52) & 0x7FF);
  const std::uint64_t fraction = raw & ((std::uint64_t{1} << 52) - 1);
  if (field == 0) return {(raw >> 63) != 0, fraction, -1074};
  return {(raw >> 63) != 0, fraction | (std::uint64_t{1} << 52), field - 1075};
}

// (-1)^negative * magnitude rounded to nearest even to binary64, as round_pack (round.hpp) does
// for the formats of at most 32 bits: p = 53 kept bits, or fewer on the subnormal grid 2^-1074;
// a carry out of the kept bits renormalises; beyond the largest finite value: Inf. The
// significand must hold at least 55 bits when sticky is set (then the round bit and the sticky
// bit are both below the kept bits).
TCEMU_HOST_DEVICE inline double round_to_binary64(bool negative, ExactMagnitude m) {
  const std::uint64_t sign = negative ? std::uint64_t{1} << 63 : 0;
  if (m.significand == 0) return bits_double(sign);
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
  if (round_bit && (rest || (kept & 1) != 0)) ++kept;
  // value = kept * 2^lsb with kept <= 2^53. On the subnormal grid (lsb = -1074) kept is its own
  // encoding (a carry into 2^52 is the smallest normal); above it kept is in [2^52, 2^53] and the
  // field is (lsb + 1074) + kept / 2^52, the sum below carrying a rounding overflow into the
  // exponent.
  const std::uint64_t units = static_cast<std::uint64_t>(lsb + 1074);
  const std::uint64_t field = units + (kept >> 52);
  if (field >= 0x7FF) return bits_double(sign | (std::uint64_t{0x7FF} << 52));
  return bits_double(sign | ((units << 52) + kept));
}

}  // namespace detail

class LongAccumulator {
 public:
  static constexpr int kLimbs = 67;
  static constexpr int kLsbExponent = -2148;

  // += x (finite). Zeros change nothing.
  TCEMU_HOST_DEVICE void add(double x) {
    const detail::Binary64Fields f = detail::binary64_fields(x);
    add_shifted(f.negative, f.significand, 0, f.exponent - kLsbExponent);
  }

  // += a * b exactly (a, b finite).
  TCEMU_HOST_DEVICE void add_product(double a, double b) {
    const detail::Binary64Fields fa = detail::binary64_fields(a), fb = detail::binary64_fields(b);
    std::uint64_t hi = 0, lo = 0;
    detail::multiply_64x64(fa.significand, fb.significand, hi, lo);  // < 2^106
    add_shifted(fa.negative != fb.negative, lo, hi, fa.exponent + fb.exponent - kLsbExponent);
  }

  // += other (exact: two's-complement addition of the limbs).
  TCEMU_HOST_DEVICE void add(const LongAccumulator& other) {
    std::uint64_t carry = 0;
    for (int i = 0; i < kLimbs; ++i) {
      const std::uint64_t sum = limbs_[i] + other.limbs_[i];
      const std::uint64_t out = sum + carry;
      carry =
          static_cast<std::uint64_t>(sum < other.limbs_[i]) + static_cast<std::uint64_t>(out < sum);
      limbs_[i] = out;
    }
  }

  // Limb i of the two's-complement integer (for merging many accumulators limb by limb).
  TCEMU_HOST_DEVICE std::uint64_t limb(int i) const { return limbs_[i]; }

  // The accumulator whose integer is sum_i (low[i] + high[i] 2^64) 2^(64 i) modulo 2^(64
  // kLimbs): the sum of accumulators whose limbs i were added up column by column as 128-bit
  // numbers. Two's-complement addition is addition modulo 2^(64 kLimbs), and the true sum fits.
  TCEMU_HOST_DEVICE static LongAccumulator from_limb_sums(const std::uint64_t* low,
                                                          const std::uint64_t* high) {
    LongAccumulator out;
    std::uint64_t carry = 0;  // < 2^64: high[i] + 1 never wraps for the counts we merge
    for (int i = 0; i < kLimbs; ++i) {
      out.limbs_[i] = low[i] + carry;
      carry = high[i] + static_cast<std::uint64_t>(out.limbs_[i] < carry);
    }
    return out;
  }

  TCEMU_HOST_DEVICE bool negative() const { return (limbs_[kLimbs - 1] >> 63) != 0; }

  // |value| * 2^shift as its leading 64 bits, the weight of their last bit and a sticky flag for
  // the bits below; exact (sticky clear) when fewer than 64 bits are significant. The exponent
  // arithmetic stays in int: |shift| must be below 2^30.
  TCEMU_HOST_DEVICE ExactMagnitude magnitude(int shift = 0) const {
    std::uint64_t m[kLimbs];
    const bool neg = negative();
    std::uint64_t carry = 1;
    for (int i = 0; i < kLimbs; ++i) {  // two's-complement negation when negative
      m[i] = neg ? ~limbs_[i] + carry : limbs_[i];
      if (neg) carry = (carry != 0 && m[i] == 0) ? 1 : 0;
    }
    int top = kLimbs - 1;
    while (top > 0 && m[top] == 0) --top;
    const int lsb = kLsbExponent + shift;
    if (top == 0) return {m[0], lsb, false};
    const int lead = detail::bit_width(m[top]) - 1;
    const int low_bit = top * 64 + lead - 63;  // the last of the 64 bits taken
    const int limb = low_bit / 64, bit = low_bit % 64;
    const std::uint64_t taken = bit == 0 ? m[limb] : (m[limb] >> bit) | (m[limb + 1] << (64 - bit));
    bool sticky = bit != 0 && (m[limb] & ((std::uint64_t{1} << bit) - 1)) != 0;
    for (int i = 0; i < limb && !sticky; ++i) sticky = m[i] != 0;
    return {taken, lsb + low_bit, sticky};
  }

  // The value times 2^shift rounded once to nearest even; an exact zero gives +0.
  TCEMU_HOST_DEVICE double round_to_double(int shift = 0) const {
    return detail::round_to_binary64(negative(), magnitude(shift));
  }
  TCEMU_HOST_DEVICE float round_to_float() const {
    constexpr FloatFormat fp32 = formats::fp32;  // a local copy: device code reads it
    const std::uint32_t bits =
        round_pack(fp32, negative(), magnitude(), Rounding::nearest_even, Overflow::ieee);
#if defined(__CUDA_ARCH__)
    return __uint_as_float(bits);
#else
    return std::bit_cast<float>(bits);
#endif
  }

 private:
  // += (-1)^negative (hi 2^64 + lo) 2^position, hi < 2^42, 0 <= position, and position + 106
  // below the sign bit (see the widths above). The shifted value spans three limbs at most
  // (106 + 63 bits < 192); the carry or borrow then runs on while it is nonzero.
  TCEMU_HOST_DEVICE void add_shifted(bool negative, std::uint64_t lo, std::uint64_t hi,
                                     int position) {
    if (lo == 0 && hi == 0) return;
    const int limb = position / 64, offset = position % 64;
    const std::uint64_t part[3] = {lo << offset,
                                   (hi << offset) | (offset == 0 ? 0 : lo >> (64 - offset)),
                                   offset == 0 ? 0 : hi >> (64 - offset)};
    std::uint64_t carry = 0;
    for (int i = limb; i < kLimbs; ++i) {
      const std::uint64_t term = i - limb < 3 ? part[i - limb] : 0;
      const std::uint64_t before = limbs_[i];
      if (!negative) {
        const std::uint64_t sum = before + term;
        limbs_[i] = sum + carry;
        carry =
            static_cast<std::uint64_t>(sum < term) + static_cast<std::uint64_t>(limbs_[i] < sum);
      } else {
        const std::uint64_t diff = before - term;
        limbs_[i] = diff - carry;
        carry =
            static_cast<std::uint64_t>(before < term) + static_cast<std::uint64_t>(diff < carry);
      }
      if (carry == 0 && i >= limb + 2) break;
    }
  }

  std::uint64_t limbs_[kLimbs] = {};
};

}  // namespace tcemu
