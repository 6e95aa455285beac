// The block of a group-scaled datapath (group_terms G > 1: tcgen05 kind::mxf4 and mxf4nvf4,
// MXFP4 and NVFP4; MMA-Sim 2.1.1's GST_FDPA) in small integers, written once for the host and the
// device (TCEMU_HOST_DEVICE): the GPU backend's emulated engine (gpu/src/gemm/emulated_gemm.cu,
// its group kernel) and the CPU's fast path (emulator/src/gemm_fast_path.cpp) call these
// functions. Where scaled_groups_apply() is false both fall back to block_fma.hpp.
//
// Why it gives the bits of exact_scaled_block (TermList::add_scaled_group, round_sum):
//  * Elements. An element x of a format with no Inf or NaN whose values are all integer multiples
//    of its smallest step 2^L (L = min_exponent - fraction_bits) is code(x) * 2^L with |code| <=
//    127 (e2m1: 2x in [-12, 12]; e2m3: 8x in [-60, 60]): an int8. A group's exact sum is
//    S = sum code(a) * code(b), |S| <= G * 127^2 < 2^20 for G <= 64, an int32 (four products at a
//    time by __dp4a on the GPU), in units of 2^(La + Lb): the same value add_scaled_group sums in
//    units of its smallest product lsb.
//  * Vanishing groups. A group whose products are all zero (no position where both elements are
//    nonzero: the AND of the two nonzero masks) is no term and sets no grid; a group that cancels
//    (nonzero products, S = 0) is a term of value 0 that sets the grid. A zero scale (ue4m3 0)
//    makes the group a zero term (multiplier 0, alignment kZeroExponent below every floor); a NaN
//    scale makes the block NaN, unless NanScale::ignored_for_zero_products and the group's products
//    are all zero (TermList::apply_scales).
//  * Alignment. A group term aligns on its scales' exponents alone, A = ea + eb (a scale's
//    alignment exponent: ue8m0's exponent, ue4m3's leading-bit exponent, min_exponent for a
//    subnormal); emax = max(floor, c's, every term's A) in integers (binary64_block.hpp's
//    c_alignment), clamped to kLowestGrid where every term is zero (a nonzero term's A >= -254).
//    The grid is 2^(emax - F).
//  * Truncation. A term's value is S * ma * mb * 2^(la + lb) with ma, mb the scales' significands
//    (1 for ue8m0, at most 4 bits for ue4m3) and la, lb their last bits' exponents plus La, Lb. Its
//    magnitude |S| * ma * mb (< 2^28) is an exact integer; shifted left by la + lb - (emax - F)
//    where that is >= 0, right by its negation otherwise (the bits below the grid dropped: the
//    model's truncation toward zero of the magnitude), the sign applied after.
//  * Summation. |S * 2^(La+Lb)| < G * 2^(Ea + 1 + Eb + 1) (Ea, Eb the elements' largest exponents)
//    and a scale's value lies below 2^(A + 1) for ue4m3 (2^A for ue8m0), so a term lies below
//    2^(emax + h), h = ceil_log2(G) + Ea + Eb + 2 + one per ue4m3 scale (e2m1 with ue4m3: 12); in
//    grid units below 2^(F + h), so a left shift is below F + h <= 52. c lies below 2^(emax + 1).
//    With F + h + bit_width(groups + 1) <= 52 every partial sum of the block's terms and c's
//    truncation is an integer below 2^52: exact in int64 and, for the rounding, in binary64.
//  * Rounding. The integer sum and emax are binary64_block.hpp's BlockSum (S exact in binary64),
//    rounded by round_block and, where it leaves a result (subnormal, overflowing, non-finite c),
//    by exceptional_block_result's round_pack: the proof there applies unchanged.
//  * Signed zero (ZeroSign::ieee only). A zero result is -0 exactly when every zero noted and every
//    term pushed is negative: c's sign; a term's sign (S < 0; a cancelled group is +0); a
//    zero-scaled nonzero group is a +0; a group of zero products is negative when every product's
//    sign (the XOR of its elements' sign bits, padding -0 * +0 included) is.
#pragma once

#include <cstdint>

#include <tcemu/emulator/binary64_block.hpp>
#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/fp64_bits.hpp>
#include <tcemu/emulator/host_device.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu::detail {

inline constexpr int kMaxGroupCode = 127;   // an element's code is an int8
inline constexpr int kMaxScaledGroup = 32;  // group_terms at most this (one bit of a mask each)

// The exponent of an element's smallest step: every value of `f` is code * 2^element_lsb(f).
TCEMU_HOST_DEVICE constexpr int element_lsb(const FloatFormat& f) {
  return f.min_exponent() - f.fraction_bits;
}

// True when every value of `f` is code * 2^element_lsb(f) with an int8 code and `f` has no Inf or
// NaN (e2m1, e2m3; not e3m2, whose largest code is 448).
TCEMU_HOST_DEVICE constexpr bool has_int8_codes(const FloatFormat& f) {
  return f.special == SpecialEncoding::finite && f.is_signed &&
         (f.max_significand() << (f.max_exponent() - f.min_exponent())) <=
             static_cast<std::uint64_t>(kMaxGroupCode);
}

// Bits of a group term above its scales' alignment exponent (the proof above).
TCEMU_HOST_DEVICE inline int group_headroom(const Datapath& dp) {
  const BlockScaling& s = dp.block_scaling;
  int log2_group = 0;
  while ((1 << log2_group) < s.group_terms) ++log2_group;
  return log2_group + dp.input.max_exponent() + dp.b_format().max_exponent() + 2 +
         (s.scale_a.fraction_bits > 0 ? 1 : 0) + (s.scale_b.fraction_bits > 0 ? 1 : 0);
}

// True when the group formulation gives exact_scaled_block's bits (the proof above): a grid
// (F engaged), group sums of int8 codes, groups of a multiple of 4 products (whole words of four
// codes) up to kMaxScaledGroup, sums below 2^52 and a floor that keeps 2^(F - emax) in binary64's
// normal range.
TCEMU_HOST_DEVICE inline bool scaled_groups_apply(const Datapath& dp) {
  const BlockScaling& s = dp.block_scaling;
  if (!dp.block_scaled() || s.group_terms <= 1 || s.group_terms % 4 != 0 ||
      s.group_terms > kMaxScaledGroup || !dp.alignment_fraction_bits.has_value()) {
    return false;
  }
  if (!has_int8_codes(dp.input) || !has_int8_codes(dp.b_format())) return false;
  const int sum_bits = *dp.alignment_fraction_bits + group_headroom(dp) +
                       bit_width(static_cast<std::uint64_t>(dp.block_terms / s.group_terms + 1));
  return sum_bits <= 52 && dp.alignment_floor <= 300;
}

// The int8 code of an element (has_int8_codes(f)): value / 2^element_lsb(f); a zero's is 0
// whatever its sign.
TCEMU_HOST_DEVICE inline int element_code(const FloatFormat& f, std::uint32_t bits) {
  const Decoded x = decode(f, bits);
  const int code = static_cast<int>(x.significand << (x.lsb_exponent - element_lsb(f)));
  return x.negative ? -code : code;
}

// A scale as a group term reads it: its significand (0 for a zero or NaN scale), the exponent of
// its last bit plus the element format's element_lsb, its alignment exponent (kZeroExponent for a
// zero or NaN scale: it raises no grid) and whether it is NaN.
struct GroupScale {
  int multiplier;
  int lsb;
  int alignment;
  bool nan;
};
TCEMU_HOST_DEVICE inline GroupScale group_scale(const FloatFormat& scale_format, std::uint32_t bits,
                                                int element_lsb) {
  const Decoded x = decode(scale_format, bits);
  if (x.value_class != ValueClass::finite) {
    return {0, 0, kZeroExponent, x.value_class == ValueClass::nan};
  }
  return {static_cast<int>(x.significand), x.lsb_exponent + element_lsb,
          x.alignment_exponent(scale_format), false};
}

// The scale of a group past k (padding of a partial instruction): no term, never NaN.
inline constexpr GroupScale kNoGroupScale{0, 0, kZeroExponent, false};

// The alignment exponent a group raises its block's to: its scales' when some product is nonzero
// (`nonzero`), else kZeroExponent (with a zero scale the sum stays far below every floor).
TCEMU_HOST_DEVICE inline int group_alignment(bool nonzero, const GroupScale& a,
                                             const GroupScale& b) {
  return nonzero ? a.alignment + b.alignment : kZeroExponent;
}

// True when the group makes the block NaN: a NaN scale, unless ignored for a group of zero
// products.
TCEMU_HOST_DEVICE inline bool group_poisons(const Datapath& dp, bool nonzero, const GroupScale& a,
                                            const GroupScale& b) {
  return (a.nan || b.nan) && (nonzero || dp.block_scaling.nan_scale == NanScale::poisons_result);
}

// The block's grid exponent emax - F once every alignment exponent is in (emax clamped to
// kLowestGrid) and c truncated on it (0 for an Inf or NaN c, whose result is decided apart),
// in grid units.
struct GroupBlockStart {
  int grid_lsb;
  std::int64_t c_kept;
};
TCEMU_HOST_DEVICE inline GroupBlockStart start_group_block(const Binary64Grid& g, int& emax,
                                                           double c) {
  emax = emax > kLowestGrid ? emax : kLowestGrid;
  // 2^(F - emax): field 1023 + F - emax in [1023 + 0 - 300, 1023 + 52 + 600] (emax <= 300 where c
  // is finite: floor, c's exponent <= 127, a term's <= 254); c * 2^(F - emax) is exact and below
  // 2^(F + 1), and the conversion truncates toward zero.
  const double scale = fp64::value(static_cast<std::uint64_t>(1023 + g.fraction_bits - emax) << 52);
  const bool finite = fp64::is_finite(fp64::bits(c));
  return {emax - static_cast<int>(g.fraction_bits),
          finite ? static_cast<std::int64_t>(c * scale) : std::int64_t{0}};
}

// One group term truncated on the grid 2^grid_lsb, signed: sum * multiplier * 2^lsb with `sum` the
// group's code sum, `multiplier` and `lsb` the product of its scales' multipliers and the sum of
// their lsbs. A term with multiplier or sum 0 is 0 whatever the shift (clamped so that no shift
// reaches 64).
TCEMU_HOST_DEVICE inline std::int64_t truncated_group(int sum, int multiplier, int lsb,
                                                      int grid_lsb) {
  const std::uint64_t magnitude =
      static_cast<std::uint64_t>(sum < 0 ? -sum : sum) * static_cast<std::uint64_t>(multiplier);
  const int shift = lsb - grid_lsb;
  const std::uint64_t kept =
      shift >= 0 ? magnitude << (shift < 63 ? shift : 63) : (shift > -64 ? magnitude >> -shift : 0);
  return sum < 0 ? -static_cast<std::int64_t>(kept) : static_cast<std::int64_t>(kept);
}

// True when a group counts as negative for the sign of a zero result (ZeroSign::ieee, the proof
// above): `sign_and` is whether every product's sign bit is set (read when no product is nonzero).
TCEMU_HOST_DEVICE inline bool group_negative(bool nonzero, int multiplier, int sum, bool sign_and) {
  return nonzero ? multiplier != 0 && sum < 0 : sign_and;
}

// The block's rounding from its integer sum (c's truncation and the terms') where no NaN scale
// poisoned it: round_block's, exact wherever `fast` is set (binary64_block.hpp). `all_negative`:
// every zero and term is negative (read under ZeroSign::ieee only).
TCEMU_HOST_DEVICE inline RoundedBlock<ScalarLanes> round_group_block(const Binary64Grid& g,
                                                                     int emax, std::int64_t sum,
                                                                     bool all_negative, double c) {
  const BlockSum<ScalarLanes> s{emax, static_cast<double>(sum),
                                all_negative ? fp64::kSignBit : std::uint64_t{0}};
  return round_block(g, s, c);
}

// The block's result as a binary64 value of the accumulator format: NaN when poisoned, else
// round_group_block's, or exceptional_block_result's for the results it leaves (subnormal,
// overflowing, an Inf or NaN c).
TCEMU_HOST_DEVICE inline double group_block_result(const Datapath& dp, const Binary64Grid& g,
                                                   int emax, std::int64_t sum, bool poisoned,
                                                   bool all_negative, double c) {
  if (poisoned) return fp64::value(fp64::kCanonicalNan);
  const RoundedBlock<ScalarLanes> rounded = round_group_block(g, emax, sum, all_negative, c);
  return rounded.fast ? rounded.result
                      : exceptional_block_result(dp, g, c, sum, emax, rounded.exact);
}

// One operand's group (a row of A's or a column of B's group_terms elements of one scale) as the
// formulation reads it: its codes (padding past k: 0), the masks of its nonzero elements and of
// its sign bits (bit i: element i; padding: A's -0, B's +0, so that the product's sign is neutral
// for the zero sign's AND) and its scale (kNoGroupScale for a group past k).
struct GroupOperand {
  signed char codes[kMaxScaledGroup];
  std::uint32_t nonzero;
  std::uint32_t negative;
  GroupScale scale;
};

// The group of `count` <= group_terms elements `bits` of `format` (the rest padding; count 0: a
// group past k) with the scale of `scale_bits` in `scale_format`; `is_a`: padding is -0.
TCEMU_HOST_DEVICE inline GroupOperand group_operand(const Datapath& dp, const FloatFormat& format,
                                                    const FloatFormat& scale_format,
                                                    const std::uint32_t* bits, int count,
                                                    std::uint32_t scale_bits, bool is_a) {
  GroupOperand out{};
  for (int i = 0; i < dp.block_scaling.group_terms; ++i) {
    const bool present = i < count;
    const int code = present ? element_code(format, bits[i]) : 0;
    const bool negative =
        present ? (bits[i] & (format.sign_mask() << format.padding_bits)) != 0 : is_a;
    out.codes[i] = static_cast<signed char>(code);
    out.nonzero |= code != 0 ? std::uint32_t{1} << i : 0;
    out.negative |= negative ? std::uint32_t{1} << i : 0;
  }
  out.scale =
      count > 0 ? group_scale(scale_format, scale_bits, element_lsb(format)) : kNoGroupScale;
  return out;
}

// One block of `groups` groups (a[q] times b[q]) and c, one element at a time: the composition of
// the functions above that the GPU's group kernel runs on 4 x 4 elements per thread.
TCEMU_HOST_DEVICE inline double group_block(const Datapath& dp, const Binary64Grid& g,
                                            const GroupOperand* a, const GroupOperand* b,
                                            int groups, double c) {
  const int group = dp.block_scaling.group_terms;
  const std::uint32_t all = group == 32 ? ~std::uint32_t{0} : (std::uint32_t{1} << group) - 1;
  int emax = static_cast<int>(c_alignment<ScalarLanes>(g, c));
  bool poisoned = false;
  for (int q = 0; q < groups; ++q) {
    const bool nonzero = (a[q].nonzero & b[q].nonzero) != 0;
    emax = raise_alignment(emax, group_alignment(nonzero, a[q].scale, b[q].scale));
    poisoned = poisoned || group_poisons(dp, nonzero, a[q].scale, b[q].scale);
  }
  const GroupBlockStart start = start_group_block(g, emax, c);
  std::int64_t sum = start.c_kept;
  bool all_negative = (fp64::bits(c) & fp64::kSignBit) != 0;
  for (int q = 0; q < groups; ++q) {
    int group_sum = 0;
    for (int i = 0; i < group; ++i) group_sum += a[q].codes[i] * b[q].codes[i];
    const int multiplier = a[q].scale.multiplier * b[q].scale.multiplier;
    sum += truncated_group(group_sum, multiplier, a[q].scale.lsb + b[q].scale.lsb, start.grid_lsb);
    const bool sign_and = ((a[q].negative ^ b[q].negative) & all) == all;
    all_negative = all_negative && group_negative((a[q].nonzero & b[q].nonzero) != 0, multiplier,
                                                  group_sum, sign_and);
  }
  return group_block_result(dp, g, emax, sum, poisoned, all_negative, c);
}

}  // namespace tcemu::detail
