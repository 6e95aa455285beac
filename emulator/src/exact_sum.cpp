#include "exact_sum.hpp"

#include <algorithm>
#include <bit>
#include <limits>

namespace tcemu::detail {
namespace {

constexpr std::uint64_t kFractionMask = (std::uint64_t{1} << 52) - 1;
constexpr std::uint64_t kSignBit = std::uint64_t{1} << 63;

}  // namespace

void ExactAccumulator::add(double x) {
  const auto raw = std::bit_cast<std::uint64_t>(x);
  const bool negative = (raw & kSignBit) != 0;
  const auto field = static_cast<int>((raw >> 52) & 0x7FF);
  const std::uint64_t fraction = raw & kFractionMask;
  any_term_ = true;
  if (field == 0x7FF) {
    if (fraction != 0) {
      nan_ = true;
    } else {
      (negative ? minus_inf_ : plus_inf_) = true;
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

double ExactAccumulator::round(std::int64_t shift) const {
  if (nan_ || (plus_inf_ && minus_inf_)) return std::bit_cast<double>(0x7FF8000000000000ULL);
  if (plus_inf_) return std::numeric_limits<double>::infinity();
  if (minus_inf_) return -std::numeric_limits<double>::infinity();
  std::array<std::uint64_t, kLimbs> magnitude = limbs_;
  const bool negative = (magnitude[kLimbs - 1] >> 63) != 0;
  if (negative) {  // two's complement negation: invert, add one
    std::uint64_t carry = 1;
    for (auto& l : magnitude) {
      l = ~l + carry;
      carry = (carry != 0 && l == 0) ? 1 : 0;
    }
  }
  int top = kLimbs - 1;
  while (top >= 0 && magnitude[top] == 0) --top;
  if (top < 0) return any_term_ && all_negative_zero_ ? -0.0 : 0.0;
  constexpr std::int64_t kBits = kLimbs * 64;
  auto bit = [&](std::int64_t i) -> std::uint64_t {
    return i < 0 || i >= kBits ? 0 : (magnitude[i / 64] >> (i % 64)) & 1;
  };
  // True when a bit below position x is set.
  auto any_below = [&](std::int64_t x) {
    const std::int64_t full = std::min<std::int64_t>(std::max<std::int64_t>(x, 0) / 64, kLimbs);
    for (std::int64_t l = 0; l < full; ++l) {
      if (magnitude[l] != 0) return true;
    }
    if (x <= 0 || full == kLimbs) return false;
    return (magnitude[full] & ((std::uint64_t{1} << (x % 64)) - 1)) != 0;
  };
  // The value is I * 2^(shift - 1074) with I the magnitude and h its leading bit. The lowest
  // bit kept is the 53rd below h, or the bit of weight 2^-1074 (the subnormal grid) if higher.
  const std::int64_t h = top * 64 + 63 - std::countl_zero(magnitude[top]);
  const std::int64_t low = std::max(h - 52, -shift);
  std::uint64_t significand = 0;  // the kept bits, I / 2^low rounded; at most 2^53
  if (low <= 0) {
    significand = magnitude[0] << -low;  // h - low <= 52: every bit of I is kept
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
  std::uint64_t raw = 0;
  if (field >= 0x7FF) {
    raw = std::uint64_t{0x7FF} << 52;  // beyond the largest finite: Inf
  } else {
    raw = (static_cast<std::uint64_t>(units) << 52) + significand;
  }
  return std::bit_cast<double>(raw | (negative ? kSignBit : 0));
}

}  // namespace tcemu::detail
