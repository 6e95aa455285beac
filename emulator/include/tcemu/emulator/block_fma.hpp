// The block FMA, the fused block operation of a Tensor Core: sum_i a_i * b_i + c in one step, and
// one element's chain of MMA instructions (datapath.hpp), written once for the host and the device
// (TCEMU_HOST_DEVICE): block_fma (below) and mma_element (mma.cpp) run it on the host, and the GPU
// backend's emulated engine (gpu/src/gemm/emulated_gemm.cu) runs it wherever the binary64 shortcut
// (binary64_block.hpp) does not apply: exact alignment, grids too wide for binary64, Inf or NaN
// operands.
//
// Exactness: every product of two decoded inputs (at most 24-bit significands) is an exact 48-bit
// integer times a power of two; a block-scaled product times its two scales (at most 4-bit
// significands each) fits 56 bits, and a group sum times its scales fits 63 bits for the formats
// validate() accepts with groups (mma.cpp: group_sum_bits). Each term is truncated on the grid by a
// right shift of its magnitude (the model's truncation toward zero), and the kept terms are summed
// in a WideSum (wide_sum.hpp), which holds every validated datapath's terms without loss. One
// round_pack call rounds the exact sum.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/host_device.hpp>
#include <tcemu/emulator/round.hpp>
#include <tcemu/emulator/wide_sum.hpp>

namespace tcemu {

// The most products one block may fuse (checked by validate()).
inline constexpr int kMaxBlockTerms = 64;

namespace detail {

// A finite term: (-1)^negative * significand * 2^lsb_exponent, aligned on alignment_exponent (the
// exponent its format's leading bit would have; products add their factors' alignment exponents,
// so their value lies in [0, 4) times 2^alignment_exponent, times [0, 4) more per pair of scales).
// A block-scaled group is aligned on its scales' exponents alone: its value may lie far above
// 2^alignment_exponent, and a cancelled group has significand 0 (it still sets the grid).
struct Term {
  bool negative;
  std::uint64_t significand;
  int lsb_exponent;
  int alignment_exponent;
};

// Terms of one sum plus what the special-value rules need.
// The class of a product x * y from its factors' classes: NaN for a NaN factor or 0 * Inf.
TCEMU_HOST_DEVICE constexpr ValueClass product_class(ValueClass x, ValueClass y) {
  if (x == ValueClass::nan || y == ValueClass::nan) return ValueClass::nan;
  if (x == ValueClass::infinity || y == ValueClass::infinity) {
    return x == ValueClass::zero || y == ValueClass::zero ? ValueClass::nan : ValueClass::infinity;
  }
  if (x == ValueClass::zero || y == ValueClass::zero) return ValueClass::zero;
  return ValueClass::finite;
}

// The two scales of a block-scaled term (unsigned: decoded from ue8m0 or ue4m3).
struct ScalePair {
  const Decoded& a;
  const Decoded& b;
  const BlockScaling& rule;
};

class TermList {
 public:
  TCEMU_HOST_DEVICE void add_product(const FloatFormat& format_a, const FloatFormat& format_b,
                                     const Decoded& a, const Decoded& b) {
    const bool negative = a.negative != b.negative;
    switch (product_class(a.value_class, b.value_class)) {
      case ValueClass::nan:
        nan_ = true;
        break;
      case ValueClass::infinity:
        (negative ? negative_infinity_ : positive_infinity_) = true;
        break;
      case ValueClass::zero:
        note_zero(negative);
        break;
      case ValueClass::finite:
        // Exact: significands have at most 24 bits each, so the product fits in 48 bits.
        push({negative, a.significand * b.significand, a.lsb_exponent + b.lsb_exponent,
              a.alignment_exponent(format_a) + b.alignment_exponent(format_b)});
        break;
    }
  }

  // a * b * scale_a * scale_b as one term (group_terms == 1: kind::mxf8f6f4): the scales'
  // exponents add to the product's, their significands (1 for ue8m0, at most 4 bits for ue4m3)
  // multiply its significand: at most 24 + 24 + 4 + 4 bits.
  TCEMU_HOST_DEVICE void add_scaled_product(const FloatFormat& format_a,
                                            const FloatFormat& format_b, const Decoded& a,
                                            const Decoded& b, const ScalePair& scales) {
    const ValueClass product = product_class(a.value_class, b.value_class);
    if (!apply_scales(product, a.negative != b.negative, scales)) return;
    push({a.negative != b.negative,
          a.significand * b.significand * scales.a.significand * scales.b.significand,
          a.lsb_exponent + b.lsb_exponent + scales.a.lsb_exponent + scales.b.lsb_exponent,
          a.alignment_exponent(format_a) + b.alignment_exponent(format_b) +
              scale_alignment(scales)});
  }

  // The exact sum of the n products a[i] * b[i] times both scales as one term, aligned on the
  // scales' exponents (group_terms > 1: kind::mxf4, mxf4nvf4). A group whose products are all zero
  // is a zero term; one that cancels is a term of value 0 that still sets the grid (MMA-Sim
  // 2.1.1's GST_FDPA). The sum fits an int64: validate() bounds the products' span (mma.cpp).
  TCEMU_HOST_DEVICE void add_scaled_group(const Decoded* a, const Decoded* b, int n,
                                          const ScalePair& scales) {
    ValueClass group = ValueClass::zero;
    bool every_zero_negative = true;
    bool positive_infinity = false;
    bool negative_infinity = false;
    int lsb = 0;
    for (int i = 0; i < n; ++i) {
      const ValueClass product = product_class(a[i].value_class, b[i].value_class);
      const bool negative = a[i].negative != b[i].negative;
      if (product == ValueClass::nan) group = ValueClass::nan;
      if (product == ValueClass::infinity)
        (negative ? negative_infinity : positive_infinity) = true;
      if (product == ValueClass::zero) every_zero_negative = every_zero_negative && negative;
      if (product == ValueClass::finite) {
        const int product_lsb = a[i].lsb_exponent + b[i].lsb_exponent;
        lsb = group == ValueClass::zero || product_lsb < lsb ? product_lsb : lsb;
        if (group == ValueClass::zero) group = ValueClass::finite;
      }
    }
    if (group != ValueClass::nan && (positive_infinity || negative_infinity)) {
      group = positive_infinity && negative_infinity ? ValueClass::nan : ValueClass::infinity;
    }
    if (!apply_scales(
            group, negative_infinity || (group == ValueClass::zero && every_zero_negative), scales))
      return;
    std::int64_t sum = 0;
    for (int i = 0; i < n; ++i) {
      if (product_class(a[i].value_class, b[i].value_class) != ValueClass::finite) continue;
      const auto magnitude = static_cast<std::int64_t>(a[i].significand * b[i].significand)
                             << (a[i].lsb_exponent + b[i].lsb_exponent - lsb);
      sum += a[i].negative != b[i].negative ? -magnitude : magnitude;
    }
    const std::uint64_t magnitude =
        sum < 0 ? static_cast<std::uint64_t>(-sum) : static_cast<std::uint64_t>(sum);
    push({sum < 0, magnitude * scales.a.significand * scales.b.significand,
          lsb + scales.a.lsb_exponent + scales.b.lsb_exponent, scale_alignment(scales)});
  }

  TCEMU_HOST_DEVICE void add_value(const FloatFormat& format, const Decoded& x) {
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
  TCEMU_HOST_DEVICE bool special(const Datapath& dp, std::uint32_t& bits) const {
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

  TCEMU_HOST_DEVICE const Term* terms() const { return terms_.data(); }
  TCEMU_HOST_DEVICE std::size_t size() const { return count_; }
  // True when every zero term (zero product or zero c) is -0, vacuously with none.
  TCEMU_HOST_DEVICE bool every_zero_negative() const { return every_zero_negative_; }

 private:
  TCEMU_HOST_DEVICE void note_zero(bool negative) {
    every_zero_negative_ = every_zero_negative_ && negative;
  }
  TCEMU_HOST_DEVICE static int scale_alignment(const ScalePair& scales) {
    return scales.a.alignment_exponent(scales.rule.scale_a) +
           scales.b.alignment_exponent(scales.rule.scale_b);
  }
  // Applies the scales to a product or group of class `value`; true when a finite nonzero term
  // remains to be pushed. A NaN scale poisons (or, under ignored_for_zero_products, leaves a zero
  // alone); a zero scale (ue4m3 0) makes a finite product a zero term and an infinite one NaN.
  TCEMU_HOST_DEVICE bool apply_scales(ValueClass value, bool negative, const ScalePair& scales) {
    const bool nan_scale =
        scales.a.value_class == ValueClass::nan || scales.b.value_class == ValueClass::nan;
    const bool zero_scale =
        scales.a.value_class == ValueClass::zero || scales.b.value_class == ValueClass::zero;
    if (nan_scale &&
        (scales.rule.nan_scale == NanScale::poisons_result || value != ValueClass::zero)) {
      value = ValueClass::nan;
    }
    if (zero_scale && value == ValueClass::infinity) value = ValueClass::nan;
    if (zero_scale && value == ValueClass::finite) value = ValueClass::zero;
    switch (value) {
      case ValueClass::nan:
        nan_ = true;
        return false;
      case ValueClass::infinity:
        (negative ? negative_infinity_ : positive_infinity_) = true;
        return false;
      case ValueClass::zero:
        note_zero(negative);
        return false;
      case ValueClass::finite:
        break;
    }
    return true;
  }
  TCEMU_HOST_DEVICE void push(const Term& t) { terms_[count_++] = t; }

  std::array<Term, kMaxBlockTerms + 2> terms_{};
  std::size_t count_ = 0;
  bool nan_ = false;
  bool positive_infinity_ = false;
  bool negative_infinity_ = false;
  bool every_zero_negative_ = true;
};

// What round_sum records of its steps: nothing (the default, and all the device needs), or a
// host recorder with the same members passed to block_fma (`tcemu explain block`'s trace).
struct NoRecord {
  TCEMU_HOST_DEVICE void special() {}
  TCEMU_HOST_DEVICE void alignment_exponent(int) {}
  TCEMU_HOST_DEVICE void term(const Term&, std::uint64_t, int) {}
  TCEMU_HOST_DEVICE void sum(bool, const ExactMagnitude&) {}
};

// Sums the terms on the datapath's grid (`exact`: no grid, the exact sum; otherwise
// `fraction_bits` below the largest alignment exponent, at least `floor`) and rounds once.
template <class Record = NoRecord>
TCEMU_HOST_DEVICE std::uint32_t round_sum(const Datapath& dp, const TermList& list, bool exact,
                                          int fraction_bits, int floor, Rounding rounding,
                                          int precision, Record record = {}) {
  std::uint32_t bits = 0;
  if (list.special(dp, bits)) {
    record.special();
    return bits;
  }
  const Term* terms = list.terms();
  const std::size_t count = list.size();
  // An exactly zero result is -0 under ZeroSign::ieee only when every term is a negative zero
  // or a negative term truncated to zero (the IEEE sum of -0s is -0; any other zero sum is +0
  // under RN and RZ).
  const bool zeros_negative = dp.zero_sign == ZeroSign::ieee && list.every_zero_negative();
  if (count == 0) return encode_zero(dp.accumulator, zeros_negative);

  int grid_lsb;
  if (!exact) {
    int top = floor;
    for (std::size_t i = 0; i < count; ++i) {
      top = terms[i].alignment_exponent > top ? terms[i].alignment_exponent : top;
    }
    grid_lsb = top - fraction_bits;
    record.alignment_exponent(top);
  } else {
    grid_lsb = terms[0].lsb_exponent;
    for (std::size_t i = 1; i < count; ++i) {
      grid_lsb = terms[i].lsb_exponent < grid_lsb ? terms[i].lsb_exponent : grid_lsb;
    }
  }

  // Every term lies below 2^(alignment exponent + 2) <= 2^(grid_lsb + fraction_bits + 2), so a
  // left shift is at most fraction_bits + 2 - (significand bits) <= WideSum::kMaxShift for the
  // validated widths; in the exact case the shift is at most the span of the terms (wide_sum.hpp).
  WideSum sum;
  bool every_kept_negative = true;
  for (std::size_t i = 0; i < count; ++i) {
    const Term& t = terms[i];
    const int shift = t.lsb_exponent - grid_lsb;
    std::uint64_t kept = t.significand;
    if (shift >= 0) {
      sum.add(t.negative, kept, shift);
    } else {
      kept = -shift >= 64 ? 0 : kept >> -shift;  // truncation of the magnitude toward zero
      sum.add(t.negative, kept, 0);
    }
    record.term(t, kept, t.lsb_exponent > grid_lsb ? t.lsb_exponent : grid_lsb);
    every_kept_negative = every_kept_negative && t.negative;
  }
  if (sum.is_zero()) return encode_zero(dp.accumulator, zeros_negative && every_kept_negative);
  record.sum(sum.negative(), sum.magnitude(grid_lsb));
  const std::uint32_t rounded = round_pack(dp.accumulator, sum.negative(), sum.magnitude(grid_lsb),
                                           rounding, dp.overflow, precision);
  // A nonzero sum that rounds to zero keeps its sign under IEEE rules; ZeroSign::positive
  // makes every zero result +0.
  return dp.zero_sign == ZeroSign::positive && rounded == encode_zero(dp.accumulator, true)
             ? encode_zero(dp.accumulator, false)
             : rounded;
}

// One block: the n <= kMaxBlockTerms products a[i] * b[i] and the accumulator bits c.
template <class Record = NoRecord>
TCEMU_HOST_DEVICE std::uint32_t exact_block(const Datapath& dp, const Decoded* a, const Decoded* b,
                                            std::size_t n, std::uint32_t c, Record record = {}) {
  TermList list;
  for (std::size_t i = 0; i < n; ++i) list.add_product(dp.input, dp.b_format(), a[i], b[i]);
  list.add_value(dp.accumulator, decode(dp.accumulator, c));
  const bool exact = !dp.alignment_fraction_bits.has_value();
  return round_sum(dp, list, exact, exact ? 0 : *dp.alignment_fraction_bits, dp.alignment_floor,
                   dp.block_rounding, dp.block_result_precision, record);
}

// One block of a block-scaled datapath: products a[i] * b[i] with the scales scale_a[i] and
// scale_b[i] that cover their k, in k order (validate(): groups never straddle a scale).
template <class Record = NoRecord>
TCEMU_HOST_DEVICE std::uint32_t exact_scaled_block(const Datapath& dp, const Decoded* a,
                                                   const Decoded* b, const Decoded* scale_a,
                                                   const Decoded* scale_b, std::size_t n,
                                                   std::uint32_t c, Record record = {}) {
  TermList list;
  const BlockScaling& rule = dp.block_scaling;
  const auto group = static_cast<std::size_t>(rule.group_terms);
  for (std::size_t i = 0; i < n; i += group) {
    const ScalePair scales{scale_a[i], scale_b[i], rule};
    if (group == 1) {
      list.add_scaled_product(dp.input, dp.b_format(), a[i], b[i], scales);
    } else {
      const int count = static_cast<int>(n - i < group ? n - i : group);
      list.add_scaled_group(a + i, b + i, count, scales);
    }
  }
  list.add_value(dp.accumulator, decode(dp.accumulator, c));
  const bool exact = !dp.alignment_fraction_bits.has_value();
  return round_sum(dp, list, exact, exact ? 0 : *dp.alignment_fraction_bits, dp.alignment_floor,
                   dp.block_rounding, dp.block_result_precision, record);
}

// x + y in the accumulator format: the exact sum rounded once to nearest even, with the
// datapath's NaN bits, zero sign and overflow rule.
TCEMU_HOST_DEVICE inline std::uint32_t exact_accumulator_add(const Datapath& dp, std::uint32_t x,
                                                             std::uint32_t y) {
  TermList list;
  list.add_value(dp.accumulator, decode(dp.accumulator, x));
  list.add_value(dp.accumulator, decode(dp.accumulator, y));
  return round_sum(dp, list, true, 0, kNoAlignmentFloor, Rounding::nearest_even, 0);
}

// Where term j (0 <= j < instruction_k, in k order) of an instruction goes: block
// (j / k_group) % blocks, and its position there (the block keeps k order).
struct SlotOfTerm {
  int block;
  int position;
};
TCEMU_HOST_DEVICE constexpr SlotOfTerm slot_of_term(const Datapath& dp, int j) {
  const int blocks = dp.instruction_k / dp.block_terms;
  const int group = j / dp.k_group;
  return {group % blocks, (group / blocks) * dp.k_group + j % dp.k_group};
}

// The inverse: term (in k order) at `position` of `block`.
TCEMU_HOST_DEVICE constexpr int term_of_slot(const Datapath& dp, int block, int position) {
  const int blocks = dp.instruction_k / dp.block_terms;
  return ((position / dp.k_group) * blocks + block) * dp.k_group + position % dp.k_group;
}

// The decoded operands of term p of a chain: a_p and b_p, and for a block-scaled datapath the
// scales that cover k = p (ScaledOperands).
struct Operands {
  Decoded a, b;
};
struct ScaledOperands {
  Decoded a, b, scale_a, scale_b;
};

// One element's chain of MMA instructions over k terms from c (mma.hpp's mma_element_decoded):
// operand(p) gives term p's Operands, or its ScaledOperands for a block-scaled datapath. A partial
// last instruction has fewer terms and skips its empty blocks after the first.
template <class Operand>
TCEMU_HOST_DEVICE std::uint32_t exact_mma_chain(const Datapath& dp, std::int64_t k, std::uint32_t c,
                                                Operand operand) {
  constexpr bool kScaled =
      std::is_same_v<decltype(std::declval<Operand&>()(std::int64_t{})), ScaledOperands>;
  const int blocks = dp.instruction_k / dp.block_terms;
  const bool aligned = dp.c_entry == AccumulatorEntry::aligned_in_first_block;
  std::array<Decoded, kMaxBlockTerms> block_a{};
  std::array<Decoded, kMaxBlockTerms> block_b{};
  std::array<Decoded, kScaled ? kMaxBlockTerms : 0> block_scale_a{};
  std::array<Decoded, kScaled ? kMaxBlockTerms : 0> block_scale_b{};
  std::uint32_t d = c;
  for (std::int64_t start = 0; start < k; start += dp.instruction_k) {
    const std::int64_t left = k - start;
    const int terms = left < dp.instruction_k ? static_cast<int>(left) : dp.instruction_k;
    std::uint32_t chain = aligned ? d : encode_zero(dp.accumulator, false);
    for (int block = 0; block < blocks; ++block) {
      std::size_t n = 0;
      for (int position = 0; position < dp.block_terms; ++position) {
        const int j = term_of_slot(dp, block, position);
        if (j >= terms) continue;
        const auto term = operand(start + j);
        block_a[n] = term.a;
        block_b[n] = term.b;
        if constexpr (kScaled) {
          block_scale_a[n] = term.scale_a;
          block_scale_b[n] = term.scale_b;
        }
        ++n;
      }
      if (n == 0 && block > 0) continue;  // a partial instruction leaves trailing blocks empty
      if constexpr (kScaled) {
        chain = exact_scaled_block(dp, block_a.data(), block_b.data(), block_scale_a.data(),
                                   block_scale_b.data(), n, chain);
      } else {
        chain = exact_block(dp, block_a.data(), block_b.data(), n, chain);
      }
    }
    d = aligned ? chain : exact_accumulator_add(dp, chain, d);
  }
  return d;
}

}  // namespace detail

// One block on the host: a and b decoded from datapath.input (same length, at most
// kMaxBlockTerms), c the bits of the accumulator format; returns the block result in the
// accumulator format. `record` receives round_sum's steps (detail::NoRecord: none).
template <class Record = detail::NoRecord>
std::uint32_t block_fma(const Datapath& datapath, std::span<const Decoded> a,
                        std::span<const Decoded> b, std::uint32_t c, Record record = {}) {
  if (a.size() != b.size() || a.size() > static_cast<std::size_t>(kMaxBlockTerms)) {
    throw std::invalid_argument("block_fma: a and b must have the same length, at most " +
                                std::to_string(kMaxBlockTerms));
  }
  return detail::exact_block(datapath, a.data(), b.data(), a.size(), c, record);
}

// x + y in the accumulator format: the exact sum rounded once to nearest even, with the
// datapath's NaN bits, zero sign and overflow rule. Used where c enters after the blocks.
inline std::uint32_t accumulator_add(const Datapath& datapath, std::uint32_t x, std::uint32_t y) {
  return detail::exact_accumulator_add(datapath, x, y);
}

}  // namespace tcemu
