#include <algorithm>
#include <array>
#include <limits>
#include <stdexcept>
#include <string>

#include <tcemu/emulator/block_fma.hpp>

#include "wide_sum.hpp"

namespace tcemu {
namespace {

// A finite nonzero term: (-1)^negative * significand * 2^lsb_exponent, aligned on
// alignment_exponent (the exponent its format's leading bit would have; products add their
// factors' alignment exponents, so their significand lies in [0, 4) times 2^alignment_exponent).
struct Term {
  bool negative;
  std::uint64_t significand;
  int lsb_exponent;
  int alignment_exponent;
};

// Terms of one sum plus what the special-value rules need.
class TermList {
 public:
  void add_product(const FloatFormat& input, const Decoded& a, const Decoded& b) {
    const bool negative = a.negative != b.negative;
    if (a.value_class == ValueClass::nan || b.value_class == ValueClass::nan) {
      nan_ = true;
    } else if (a.value_class == ValueClass::infinity || b.value_class == ValueClass::infinity) {
      if (a.value_class == ValueClass::zero || b.value_class == ValueClass::zero) {
        nan_ = true;  // 0 * Inf
      } else {
        (negative ? negative_infinity_ : positive_infinity_) = true;
      }
    } else if (a.value_class == ValueClass::zero || b.value_class == ValueClass::zero) {
      note_zero(negative);
    } else {
      // Exact: significands have at most 24 bits each, so the product fits in 48 bits.
      push({negative, a.significand * b.significand, a.lsb_exponent + b.lsb_exponent,
            a.alignment_exponent(input) + b.alignment_exponent(input)});
    }
  }

  void add_value(const FloatFormat& format, const Decoded& x) {
    switch (x.value_class) {
      case ValueClass::nan:
        nan_ = true;
        break;
      case ValueClass::infinity:
        (x.negative ? negative_infinity_ : positive_infinity_) = true;
        break;
      case ValueClass::zero:
        note_zero(x.negative);
        break;
      case ValueClass::finite:
        push({x.negative, x.significand, x.lsb_exponent, x.alignment_exponent(format)});
        break;
    }
  }

  // The special result, if any rule applies before arithmetic.
  bool special(const Datapath& dp, std::uint32_t& bits) const {
    if (nan_ || (positive_infinity_ && negative_infinity_)) {
      bits = dp.nan_bits;
      return true;
    }
    if (positive_infinity_ || negative_infinity_) {
      bits = encode_infinity(dp.accumulator, negative_infinity_);
      return true;
    }
    return false;
  }

  std::span<const Term> terms() const { return {terms_.data(), count_}; }
  // True when every zero term (zero product or zero c) is -0, vacuously with none.
  bool every_zero_negative() const { return every_zero_negative_; }

 private:
  void note_zero(bool negative) { every_zero_negative_ = every_zero_negative_ && negative; }
  void push(const Term& t) { terms_[count_++] = t; }

  std::array<Term, kMaxBlockTerms + 2> terms_{};
  std::size_t count_ = 0;
  bool nan_ = false;
  bool positive_infinity_ = false;
  bool negative_infinity_ = false;
  bool every_zero_negative_ = true;
};

// Sums the terms on the datapath's grid and rounds once. `fraction_bits` nullopt: exact sum.
// Records the steps in `trace` when it is given.
std::uint32_t round_sum(const Datapath& dp, const TermList& list, std::optional<int> fraction_bits,
                        int floor, Rounding rounding, int precision, BlockTrace* trace = nullptr) {
  std::uint32_t bits = 0;
  if (list.special(dp, bits)) {
    if (trace != nullptr) trace->special = true;
    return bits;
  }
  const std::span<const Term> terms = list.terms();
  // An exactly zero result is -0 under ZeroSign::ieee only when every term is a negative zero
  // or a negative term truncated to zero (the IEEE sum of -0s is -0; any other zero sum is +0
  // under RN and RZ).
  const bool zeros_negative = dp.zero_sign == ZeroSign::ieee && list.every_zero_negative();
  if (terms.empty()) return encode_zero(dp.accumulator, zeros_negative);

  int grid_lsb;
  if (fraction_bits) {
    int top = floor;
    for (const Term& t : terms) top = std::max(top, t.alignment_exponent);
    grid_lsb = top - *fraction_bits;
    if (trace != nullptr) trace->alignment_exponent = top;
  } else {
    grid_lsb = std::numeric_limits<int>::max();
    for (const Term& t : terms) grid_lsb = std::min(grid_lsb, t.lsb_exponent);
  }

  // Every term lies below 2^(alignment exponent + 2) <= 2^(grid_lsb + fraction_bits + 2), so a
  // left shift is at most fraction_bits + 2 - (significand bits) <= WideSum::kMaxShift for the
  // validated widths; in the exact case the shift is at most the span of the terms (wide_sum.hpp).
  detail::WideSum sum;
  bool every_kept_negative = true;
  for (const Term& t : terms) {
    const int shift = t.lsb_exponent - grid_lsb;
    std::uint64_t kept = t.significand;
    if (shift >= 0) {
      sum.add(t.negative, kept, shift);
    } else {
      kept = -shift >= 64 ? 0 : kept >> -shift;  // truncation of the magnitude toward zero
      sum.add(t.negative, kept, 0);
    }
    if (trace != nullptr) {
      trace->terms.push_back(
          {t.negative, t.significand, t.lsb_exponent, kept, std::max(t.lsb_exponent, grid_lsb)});
    }
    every_kept_negative = every_kept_negative && t.negative;
  }
  if (sum.is_zero()) return encode_zero(dp.accumulator, zeros_negative && every_kept_negative);
  if (trace != nullptr) {
    trace->sum_negative = sum.negative();
    trace->sum = sum.magnitude(grid_lsb);
  }
  const std::uint32_t rounded = round_pack(dp.accumulator, sum.negative(), sum.magnitude(grid_lsb),
                                           rounding, dp.overflow, precision);
  // A nonzero sum that rounds to zero keeps its sign under IEEE rules; ZeroSign::positive
  // makes every zero result +0.
  return dp.zero_sign == ZeroSign::positive && rounded == encode_zero(dp.accumulator, true)
             ? encode_zero(dp.accumulator, false)
             : rounded;
}

std::uint32_t traced_block_fma(const Datapath& dp, std::span<const Decoded> a,
                               std::span<const Decoded> b, std::uint32_t c, BlockTrace* trace) {
  if (a.size() != b.size() || a.size() > static_cast<std::size_t>(kMaxBlockTerms)) {
    throw std::invalid_argument("block_fma: a and b must have the same length, at most " +
                                std::to_string(kMaxBlockTerms));
  }
  TermList list;
  for (std::size_t i = 0; i < a.size(); ++i) list.add_product(dp.input, a[i], b[i]);
  list.add_value(dp.accumulator, decode(dp.accumulator, c));
  return round_sum(dp, list, dp.alignment_fraction_bits, dp.alignment_floor, dp.block_rounding,
                   dp.block_result_precision, trace);
}

}  // namespace

std::uint32_t block_fma(const Datapath& dp, std::span<const Decoded> a, std::span<const Decoded> b,
                        std::uint32_t c) {
  return traced_block_fma(dp, a, b, c, nullptr);
}

std::uint32_t block_fma(const Datapath& dp, std::span<const Decoded> a, std::span<const Decoded> b,
                        std::uint32_t c, BlockTrace& trace) {
  trace = {};
  trace.result = traced_block_fma(dp, a, b, c, &trace);
  return trace.result;
}

std::uint32_t accumulator_add(const Datapath& dp, std::uint32_t x, std::uint32_t y) {
  TermList list;
  list.add_value(dp.accumulator, decode(dp.accumulator, x));
  list.add_value(dp.accumulator, decode(dp.accumulator, y));
  return round_sum(dp, list, std::nullopt, kNoAlignmentFloor, Rounding::nearest_even, 0);
}

}  // namespace tcemu
