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
// Block-scaled datapaths (OCP MX and NVFP4: tcgen05.mma kind::mxf8f6f4, mxf4, mxf4nvf4 and
// sm_120's mma.sync block_scale; MMA-Sim 2.1.1's ST_FDPA and GST_FDPA, docs/presets.md) give a
// row of A and a column of B one scale per `scale_block` consecutive k. In step 2 a product then
// carries both scales in its exponent (group_terms == 1), or `group_terms` consecutive products
// are first summed exactly and the group sum times both scales is one term whose alignment
// exponent is that of the two scales alone, whatever the sum's size (group_terms > 1). A zero
// scale, or a group whose products are all zero, is a zero term; a group that cancels to zero is
// a term of value 0 that still takes part in choosing the alignment exponent.
//
// The alignment floor is MMA-Sim's e_zero, the exponent a zero product, zero scale, zero group or
// zero c takes: c always takes part, and a nonzero c lies at or above the accumulator's minimum
// exponent (fp32: -126, fp16: -14), above every e_zero in use, so "at least the floor" and "zeros
// take e_zero" choose the same alignment exponent whenever the floor is below c's minimum.
//
// Special values are decided before any arithmetic: NaN anywhere, 0 * Inf, or Inf - Inf give
// `nan_bits`; otherwise an Inf propagates. A NaN scale follows `BlockScaling::nan_scale`.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/host_device.hpp>
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

// What a NaN scale (ue8m0 0xFF, ue4m3 0x7F) does to the result.
enum class NanScale {
  poisons_result,             // d is NaN, also where the scale's products are all zero (MMA-Sim)
  ignored_for_zero_products,  // a NaN scale whose products (or group) are all zero adds a zero
};

// The block scaling of a datapath; scale_block == 0: none (the datapath takes no scales).
struct BlockScaling {
  int scale_block = 0;    // consecutive k one scale covers (16 or 32 on Blackwell)
  FloatFormat scale_a{};  // format of A's scales (ue8m0 or ue4m3)
  FloatFormat scale_b{};  // format of B's scales
  int group_terms = 1;    // products summed exactly before the scales apply (MMA-Sim's G)
  NanScale nan_scale = NanScale::poisons_result;

  friend bool operator==(const BlockScaling&, const BlockScaling&) = default;
};

// (The optional fields below are plain values with an "unset" state rather than std::optional:
// clang 14 cannot copy an empty std::optional in a constant expression, and the preset table
// copies datapaths; alignment_fraction_bits is always copied engaged there.)
struct Datapath {
  FloatFormat input;        // format of a (and of b, unless has_input_b)
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
  // b's format where it differs from a's (kind::f8f6f4 takes any pair of FP8, FP6 and FP4
  // formats); has_input_b false: b is in `input` too.
  bool has_input_b = false;
  FloatFormat input_b{};
  BlockScaling block_scaling{};

  TCEMU_HOST_DEVICE constexpr const FloatFormat& b_format() const {
    return has_input_b ? input_b : input;
  }
  TCEMU_HOST_DEVICE constexpr bool block_scaled() const { return block_scaling.scale_block > 0; }

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
constexpr std::string_view name_of(NanScale n) {
  return n == NanScale::poisons_result ? "poison" : "ignore-zero";
}

// A floor that never binds: below every exponent a product of two subnormals can have.
inline constexpr int kNoAlignmentFloor = -100000;

}  // namespace tcemu
