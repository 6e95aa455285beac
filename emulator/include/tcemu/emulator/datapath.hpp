// The one parameter struct that describes a Tensor Core datapath.
//
// A datapath computes d = a . b + c for one output element of an MMA instruction, K terms long,
// in these steps (Fasi et al. 2021; Khattak and Mikaitis 2025; docs/presets.md):
//
//  1. The K terms of one instruction are dealt to blocks of `block_terms` products: consecutive
//     groups of `k_group` terms go round-robin to the instruction's blocks (k_group ==
//     block_terms is plain k order). Blocks run one after another; each block's rounded result
//     is the c of the next. Instructions of a longer K run in k order the same way.
//  2. In a block, every product is exact. The largest alignment exponent among the nonzero
//     products and c (raised to at least `alignment_floor`) fixes a grid with
//     `alignment_fraction_bits` fraction bits below it; every term's magnitude is truncated to the
//     grid (no guard, round or sticky bits), unless the datapath is exact.
//  3. The truncated terms are summed exactly and rounded once to the accumulator format with
//     `block_rounding`, keeping `block_result_precision` significant bits.
//  4. Where c enters after the blocks (`c_entry == added_after_blocks`), the blocks start from 0
//     and c is added at the end: the exact sum rounded once to nearest even in the accumulator
//     format, under the datapath's NaN, zero-sign and overflow rules.
//
// Special values are decided before any arithmetic: NaN anywhere, 0 * Inf, or Inf - Inf give
// `nan_bits`; otherwise an Inf propagates.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu {

enum class AccumulatorEntry {
  aligned_in_first_block,  // c is one more term of the first block (the usual Tensor Core path)
  added_after_blocks,      // blocks start at 0; c is added at the end, rounded to nearest
};

// The sign of a zero block result.
enum class ZeroSign {
  // -0 when every term is negative after truncation (a -0 product or c, or a negative term
  // truncated to zero), +0 otherwise: an IEEE 754 sum of the truncated terms under RN or RZ,
  // where -0 + -0 = -0 and an exact cancellation gives +0. (IEEE RZ of a tiny negative *exact*
  // sum would give -0 also when some terms are positive; the truncating datapath never sees it.)
  ieee,
  // Every zero result is +0: exact zero sums, and nonzero sums that round to zero (measured on
  // the H100, docs/presets.md).
  positive,
};

struct Datapath {
  FloatFormat input;        // format of a and b
  FloatFormat accumulator;  // format of c and d: fp32 or fp16
  int instruction_k;        // K of one MMA instruction
  int block_terms;          // products fused in one block
  int k_group;              // consecutive k dealt together to a block (block_terms: k order)
  // Fraction bits of the alignment grid below the largest exponent; nullopt: exact, no truncation.
  std::optional<int> alignment_fraction_bits;
  int alignment_floor;  // the alignment exponent is at least this (a very low value: no floor)
  Rounding block_rounding;
  int block_result_precision;  // significant bits kept in a block result (<= accumulator's)
  AccumulatorEntry c_entry;
  Overflow overflow;
  ZeroSign zero_sign;
  std::uint32_t nan_bits;  // the NaN produced, in the accumulator format

  friend bool operator==(const Datapath&, const Datapath&) = default;
};

// The names the CLI and describe() use for the enumerated fields.
constexpr std::string_view name_of(Rounding r) {
  return r == Rounding::toward_zero ? "rz" : "rn";
}
constexpr std::string_view name_of(AccumulatorEntry e) {
  return e == AccumulatorEntry::aligned_in_first_block ? "aligned" : "after-blocks";
}
constexpr std::string_view name_of(Overflow o) {
  return o == Overflow::ieee ? "ieee" : o == Overflow::infinity ? "infinity" : "saturate";
}
constexpr std::string_view name_of(ZeroSign z) {
  return z == ZeroSign::ieee ? "ieee" : "positive";
}

// A floor that never binds: below every exponent a product of two subnormals can have.
inline constexpr int kNoAlignmentFloor = -100000;

}  // namespace tcemu
