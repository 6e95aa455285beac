#include "exact_sum.hpp"

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

double ExactAccumulator::round() const {
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
  // h: position of the leading bit, in units of 2^-1074.
  const int h = top * 64 + 63 - std::countl_zero(magnitude[top]);
  auto bit = [&](int i) { return (magnitude[i / 64] >> (i % 64)) & 1; };
  std::uint64_t raw = 0;
  if (h <= 52) {
    // Below 2^53 units the integer is its own binary64 encoding: a subnormal (field 0) below
    // 2^52, the binade of field 1 from 2^52 on. Exact.
    raw = magnitude[0];
  } else {
    // Keep bits [h - 52, h]; round with the bit below and the sticky rest.
    const int s = h - 52;
    std::uint64_t significand = 0;
    for (int i = h; i >= s; --i) significand = (significand << 1) | bit(i);
    const bool round_bit = bit(s - 1) != 0;
    bool sticky = false;
    for (int i = 0; i < (s - 1) / 64 && !sticky; ++i) sticky = magnitude[i] != 0;
    for (int i = ((s - 1) / 64) * 64; i < s - 1 && !sticky; ++i) sticky = bit(i) != 0;
    if (round_bit && (sticky || (significand & 1) != 0)) ++significand;
    // value = significand * 2^(s - 1074) with significand in [2^52, 2^53]: field s + 1 and the
    // implicit bit, so raw = s * 2^52 + significand; a carry to 2^53 lands in the exponent.
    raw = (static_cast<std::uint64_t>(s) << 52) + significand;
    if ((raw >> 52) >= 0x7FF) raw = 0x7FFULL << 52;  // beyond the largest finite: Inf
  }
  return std::bit_cast<double>(raw | (negative ? kSignBit : 0));
}

}  // namespace tcemu::detail
