// The correctly rounded sum of binary64 numbers: an exact fixed-point accumulator (Kulisch's long
// accumulator) over the whole binary64 range, rounded once to nearest even. Backend::exact_sum
// (backend.hpp) on every backend: the host keeps the limbs in an array, a GPU kernel in shared
// memory (one strided column of limbs per thread), and both run this code.
//
// Every finite binary64 number is an integer multiple of 2^-1074 below 2^1024, i.e. an integer
// below 2^2098 in units of 2^-1074. The accumulator holds a two's-complement integer of kLimbs
// 64-bit limbs (2176 bits): room for 2^77 terms of the largest magnitude before the sign bit
// could be reached, far more than any stack.
#pragma once

#include <array>
#include <cstdint>

#include <tcemu/emulator/fp64_bits.hpp>
#include <tcemu/emulator/host_device.hpp>

namespace tcemu {

inline constexpr int kExactAccumulatorLimbs = 34;

// Limbs in a host array.
struct ArrayLimbs {
  std::array<std::uint64_t, kExactAccumulatorLimbs> limb;
  TCEMU_HOST_DEVICE std::uint64_t& operator[](int i) { return limb[static_cast<std::size_t>(i)]; }
};

// Limbs at base[0], base[stride], ... (a GPU thread's column of a shared-memory array).
struct StridedLimbs {
  std::uint64_t* base;
  int stride;
  TCEMU_HOST_DEVICE std::uint64_t& operator[](int i) const { return base[i * stride]; }
};

// Limbs: operator[](int) gives a reference to limb i < kExactAccumulatorLimbs, little endian.
template <class Limbs>
class ExactAccumulator {
 public:
  static constexpr int kLimbs = kExactAccumulatorLimbs;

  TCEMU_HOST_DEVICE explicit ExactAccumulator(Limbs limbs) : limbs_(limbs) {
    for (int i = 0; i < kLimbs; ++i) limbs_[i] = 0;
  }

  TCEMU_HOST_DEVICE void add(double x) {
    const std::uint64_t raw = fp64::bits(x);
    const bool negative = (raw & fp64::kSignBit) != 0;
    const auto field = static_cast<int>((raw >> 52) & 0x7FF);
    const std::uint64_t fraction = raw & fp64::kFractionMask;
    any_term_ = true;
    if (field == 0x7FF) {
      if (fraction != 0) {
        nan_ = true;
      } else if (negative) {
        minus_inf_ = true;
      } else {
        plus_inf_ = true;
      }
      return;
    }
    if (!(negative && field == 0 && fraction == 0)) all_negative_zero_ = false;
    // |x| = significand * 2^(shift - 1074): a subnormal has field 0 and shift 0, a normal number
    // the implicit bit and shift = field - 1.
    const std::uint64_t significand = field == 0 ? fraction : fraction | (std::uint64_t{1} << 52);
    if (significand == 0) return;
    const int shift = field == 0 ? 0 : field - 1;
    const int limb = shift / 64;
    const int offset = shift % 64;
    // The 53-bit significand shifted by `offset` spans at most two limbs (offset + 53 <= 116).
    const std::uint64_t low = significand << offset;
    const std::uint64_t high = offset == 0 ? 0 : significand >> (64 - offset);
    if (!negative) {
      std::uint64_t carry = 0;
      for (int i = limb; i < kLimbs; ++i) {
        const std::uint64_t addend = i == limb ? low : i == limb + 1 ? high : 0;
        const std::uint64_t sum = limbs_[i] + addend;
        const std::uint64_t out = sum + carry;
        carry = static_cast<std::uint64_t>(sum < addend) + static_cast<std::uint64_t>(out < sum);
        limbs_[i] = out;
        if (carry == 0 && i > limb) break;
      }
    } else {
      std::uint64_t borrow = 0;
      for (int i = limb; i < kLimbs; ++i) {
        const std::uint64_t subtrahend = i == limb ? low : i == limb + 1 ? high : 0;
        const std::uint64_t before = limbs_[i];
        const std::uint64_t diff = before - subtrahend;
        const std::uint64_t out = diff - borrow;
        borrow = static_cast<std::uint64_t>(before < subtrahend) +
                 static_cast<std::uint64_t>(diff < borrow);
        limbs_[i] = out;
        if (borrow == 0 && i > limb) break;
      }
    }
  }

  // 2^shift times the accumulated sum, rounded once to nearest even, with the rules of
  // Backend::exact_sum for zeros, overflow, Inf and NaN. Consumes the accumulator (the limbs
  // are negated in place): call it once, last.
  TCEMU_HOST_DEVICE double round(std::int64_t shift) {
    if (nan_ || (plus_inf_ && minus_inf_)) return fp64::value(fp64::kCanonicalNan);
    if (plus_inf_) return fp64::value(fp64::kExponentMask);
    if (minus_inf_) return fp64::value(fp64::kSignBit | fp64::kExponentMask);
    const bool negative = (limbs_[kLimbs - 1] >> 63) != 0;
    if (negative) {  // two's complement negation: invert, add one
      std::uint64_t carry = 1;
      for (int i = 0; i < kLimbs; ++i) {
        const std::uint64_t l = ~limbs_[i] + carry;
        carry = (carry != 0 && l == 0) ? 1 : 0;
        limbs_[i] = l;
      }
    }
    int top = kLimbs - 1;
    while (top >= 0 && limbs_[top] == 0) --top;
    if (top < 0) return fp64::value(any_term_ && all_negative_zero_ ? fp64::kSignBit : 0);
    // The value is I * 2^(shift - 1074) with I the magnitude and h its leading bit. The lowest
    // bit kept is the 53rd below h, or the bit of weight 2^-1074 (the subnormal grid) if higher.
    const std::int64_t h = std::int64_t{top} * 64 + detail::bit_width(limbs_[top]) - 1;
    const std::int64_t low = h - 52 > -shift ? h - 52 : -shift;
    std::uint64_t significand = 0;  // the kept bits, I / 2^low rounded; at most 2^53
    if (low <= 0) {
      significand = limbs_[0] << -low;  // h - low <= 52: every bit of I is kept
    } else {
      for (std::int64_t i = h; i >= low; --i) significand = (significand << 1) | bit(i);
      if (bit(low - 1) != 0 && (any_below(low - 1) || (significand & 1) != 0)) ++significand;
    }
    // value = significand * 2^e with e = low + shift - 1074 >= -1074. On the subnormal grid
    // (e = -1074) the integer is its own encoding (a carry into 2^52 is the smallest normal);
    // above it significand is in [2^52, 2^53] and the field is (e + 1074) + significand / 2^52,
    // the sum below carrying a rounding overflow into the exponent.
    const std::int64_t units = low + shift;  // e + 1074
    const std::int64_t field = units + static_cast<std::int64_t>(significand >> 52);
    const std::uint64_t raw = field >= 0x7FF
                                  ? fp64::kExponentMask  // beyond the largest: Inf
                                  : (static_cast<std::uint64_t>(units) << 52) + significand;
    return fp64::value(raw | (negative ? fp64::kSignBit : 0));
  }

 private:
  static constexpr std::int64_t kBits = std::int64_t{kLimbs} * 64;

  // Bit i of the (non-negative) limbs; 0 outside them.
  TCEMU_HOST_DEVICE std::uint64_t bit(std::int64_t i) {
    return i < 0 || i >= kBits ? 0 : (limbs_[static_cast<int>(i / 64)] >> (i % 64)) & 1;
  }
  // True when a bit below position x is set.
  TCEMU_HOST_DEVICE bool any_below(std::int64_t x) {
    if (x <= 0) return false;
    const std::int64_t full = x / 64 < kLimbs ? x / 64 : kLimbs;
    for (std::int64_t l = 0; l < full; ++l) {
      if (limbs_[static_cast<int>(l)] != 0) return true;
    }
    if (full == kLimbs) return false;
    return (limbs_[static_cast<int>(full)] & ((std::uint64_t{1} << (x % 64)) - 1)) != 0;
  }

  Limbs limbs_;
  bool any_term_ = false;
  bool all_negative_zero_ = true;
  bool nan_ = false;
  bool plus_inf_ = false;
  bool minus_inf_ = false;
};

}  // namespace tcemu
