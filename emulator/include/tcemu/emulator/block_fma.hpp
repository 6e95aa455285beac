// The block FMA, the fused block operation of a Tensor Core: sum_i a_i * b_i + c in one step, and
// one element's chain of MMA instructions (datapath.hpp), written once for the host and the device
// (TCEMU_HOST_DEVICE): block_fma (below) and mma_element (mma.cpp) run it on the host, and the GPU
// backend's emulated engine (gpu/src/gemm/emulated_gemm.cu) runs it wherever the binary64 shortcut
// (binary64_block.hpp) does not apply: exact alignment, grids too wide for binary64, Inf or NaN
// operands.
//
// Exactness: every product of two decoded inputs (at most 24-bit significands) is an exact 48-bit
// integer times a power of two; each term is truncated on the grid by a right shift of its
// magnitude (the model's truncation toward zero), and the kept terms are summed in a WideSum
// (wide_sum.hpp), which holds every validated datapath's terms without loss. One round_pack call
// rounds the exact sum.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/host_device.hpp>
#include <tcemu/emulator/round.hpp>
#include <tcemu/emulator/wide_sum.hpp>

namespace tcemu {

// The most products one block may fuse (checked by validate()).
inline constexpr int kMaxBlockTerms = 64;

namespace detail {

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
  TCEMU_HOST_DEVICE void add_product(const FloatFormat& input, const Decoded& a, const Decoded& b) {
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
  for (std::size_t i = 0; i < n; ++i) list.add_product(dp.input, a[i], b[i]);
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

// One element's chain of MMA instructions over k terms from c (mma.hpp's mma_element_decoded):
// operand(p) gives the decoded pair (a_p, b_p). A partial last instruction has fewer terms and
// skips its empty blocks after the first.
template <class Operand>
TCEMU_HOST_DEVICE std::uint32_t exact_mma_chain(const Datapath& dp, std::int64_t k, std::uint32_t c,
                                                Operand operand) {
  const int blocks = dp.instruction_k / dp.block_terms;
  const bool aligned = dp.c_entry == AccumulatorEntry::aligned_in_first_block;
  std::array<Decoded, kMaxBlockTerms> block_a{};
  std::array<Decoded, kMaxBlockTerms> block_b{};
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
        const auto [a, b] = operand(start + j);
        block_a[n] = a;
        block_b[n] = b;
        ++n;
      }
      if (n == 0 && block > 0) continue;  // a partial instruction leaves trailing blocks empty
      chain = exact_block(dp, block_a.data(), block_b.data(), n, chain);
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
