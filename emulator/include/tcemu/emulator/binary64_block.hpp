// The binary64 formulation of one datapath block, written once for the CPU's vector lanes and the
// GPU's threads (TCEMU_HOST_DEVICE, templated on the lane type): the CPU fast path
// (emulator/src/gemm_fast_path.cpp, four or eight columns per vector) and the GPU backend's
// emulated engine (gpu/src/gemm/emulated_gemm.cu, sixteen elements per thread) call these
// functions and no other copy of the arithmetic; scaled_groups.hpp rounds its group sums with them.
// Where binary64_applies() is false, or an operand is Inf or NaN, both fall back to block_fma.hpp.
//
// Why binary64 arithmetic gives the bits of exact_block (for the datapaths binary64_applies
// accepts):
//  * Operands. An input significand (of A's format or B's) has at most 11 bits (fp16, bf16, tf32,
//    fp8, fp6, fp4). A block-scaled datapath with group_terms == 1 (kind::mxf8f6f4: each product
//    carries both scales in its exponent) is the unscaled datapath on operands scaled at decode
//    time: the operand's value times its scale's (binary64_scale: 2^e for ue8m0; for ue4m3 a
//    significand of at most 4 bits), its alignment exponent plus the scale's (scaled_operand; a
//    zero value or zero scale keeps kZeroExponent), so a product has at most 11 + 4 + 11 + 4 = 30
//    significant bits and is exact in binary64. Alignment exponents: an input's lies in
//    [-126, 127] (validate: at most fp32's exponent field), a scale's in [-127, 127], so a scaled
//    operand's lies in [-253, 254], a product's in [-506, 508] with its value in [2^-526, 2^512):
//    inside binary64's normal range. Accumulator values (fp32 or fp16) are exact in binary64.
//  * Alignment. The block's alignment exponent emax is computed in integers from the bit fields,
//    exactly as exact_block does (zeros excluded, floor applied; a scaled product's is the sum of
//    its factors' and scales', as TermList::add_scaled_product has it). Every nonzero term's lies
//    at or above -506, so clamping emax to kLowestGrid (-600) changes only blocks whose terms are
//    all zero; emax <= max(floor <= 300, 508, 127). scale = 2^(nf - emax) is built from its bits
//    (field 1023 + nf - emax in [515, 1673]); a term times scale is exact unless it falls below
//    2^-1022, where it is below 1 and truncates to 0 either way, and below 2^(nf + h) (h below).
//    The conversion to an integer, which rounds toward zero, then drops exactly the bits below the
//    grid 2^(emax - nf) from the magnitude: the model's truncation. The GPU's lanes truncate
//    without a conversion: for x = term * scale (|x| < 2^(nf + h) <= 2^52) and M = 2^52 with x's
//    sign, the fused x + M lies in [2^52, 2^53) in magnitude, where the ulp is 1, so rounding it
//    toward zero keeps exactly M + trunc(x); subtracting M again is exact.
//  * Headroom. A product lies below 2^(emax + h) with h = term_headroom(dp): 2 for two factors
//    below 2^(e + 1) each, plus 1 per ue4m3 scale (its value lies below 2^(alignment exponent + 1);
//    a ue8m0 scale is a power of two and adds nothing). c lies below 2^(emax + 1).
//  * Summation. Every truncated term is an integer below 2^(nf + h) and there are at most
//    block_terms + 1 of them, so every partial sum is an integer below 2^52 when
//    nf + h + bit_width(block_terms + 1) <= 52: 64-bit integers (the CPU's AVX-512 and baseline
//    lanes) and binary64 (the GPU's, and the CPU's AVX2 lanes) add them exactly, in any order.
//  * Signed zero. A zero sum is -0 under ZeroSign::ieee exactly when every term (product or c) has
//    its sign bit set: the AND of their binary64 patterns keeps the sign bit then. Padding products
//    are -0 * +0 = -0, neutral for that AND and for the sum, so partial blocks are exact. A zero
//    scale makes the product a zero with its factors' signs (TermList::apply_scales notes the
//    same zero).
//  * Rounding. v = S * 2^(emax - nf) is exact (field 1023 - nf + emax in [373, 1531]). When v is
//    in the accumulator's normal range, rounding to p significant bits only touches v's 52-bit
//    binary64 fraction: RZ clears its low 53 - p bits; RN adds (half - 1) plus the last kept bit,
//    then clears them (a carry into the exponent field is the correct renormalisation). Subnormal,
//    overflowing or infinite results go through round_pack (exceptional_block_result), the
//    routine every other result goes through.
//  * Special values. Inf or NaN operands and NaN scales (ue8m0 0xFF, ue4m3 0x7F) are left to
//    block_fma.hpp: the fast paths scan A, B and the scales first (a NaN scale makes the scaled
//    operand's value NaN).
#pragma once

#include <cstdint>

#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/fp64_bits.hpp>
#include <tcemu/emulator/host_device.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu::detail {

inline constexpr int kZeroExponent = -1'000'000;  // alignment exponent of a zero: below every floor
// emax never needs to be lower (all terms are zero then: a nonzero term's lies at or above -506).
inline constexpr int kLowestGrid = -600;

// Bits a term may have above the block's alignment exponent (the proof above): 2 for a product,
// plus 1 for each scale with significand bits (ue4m3; ue8m0 is a power of two).
TCEMU_HOST_DEVICE inline int term_headroom(const Datapath& dp) {
  if (!dp.block_scaled()) return 2;
  const BlockScaling& s = dp.block_scaling;
  return 2 + (s.scale_a.fraction_bits > 0 ? 1 : 0) + (s.scale_b.fraction_bits > 0 ? 1 : 0);
}

// True when the datapath truncates on a grid narrow enough for binary64 sums (the proof above).
// A floor above every real exponent would push the scale out of binary64's range. Block-scaled
// datapaths qualify when each product carries its own scales (group_terms == 1); group sums
// (kind::mxf4, mxf4nvf4) go to scaled_groups.hpp or block_fma.hpp.
TCEMU_HOST_DEVICE inline bool binary64_applies(const Datapath& dp) {
  if (dp.block_scaled() && dp.block_scaling.group_terms != 1) return false;
  if (!dp.alignment_fraction_bits.has_value() || dp.input.fraction_bits > 10 ||
      dp.b_format().fraction_bits > 10) {
    return false;
  }
  const int sum_bits = *dp.alignment_fraction_bits + term_headroom(dp) +
                       bit_width(static_cast<std::uint64_t>(dp.block_terms + 1));
  return sum_bits <= 52 && dp.alignment_floor <= 300;
}

// The datapath's constants, as the block functions read them.
struct Binary64Grid {
  std::int64_t fraction_bits;    // nf: fraction bits of the alignment grid
  int drop;                      // binary64 fraction bits below the block result's precision
  std::uint64_t low;             // their mask
  bool nearest;                  // block rounding to nearest even (else toward zero)
  std::int64_t min_exponent;     // the accumulator's
  std::int64_t floor;            // the alignment floor
  std::uint64_t zero_sign_mask;  // the sign bit under ZeroSign::ieee, 0 under positive
  double min_normal;             // the accumulator's smallest normal and largest finite values
  double max_finite;
};

TCEMU_HOST_DEVICE inline Binary64Grid binary64_grid(const Datapath& dp) {
  const int drop = 53 - dp.block_result_precision;
  return {*dp.alignment_fraction_bits,
          drop,
          (std::uint64_t{1} << drop) - 1,
          dp.block_rounding == Rounding::nearest_even,
          dp.accumulator.min_exponent(),
          dp.alignment_floor,
          dp.zero_sign == ZeroSign::ieee ? fp64::kSignBit : 0,
          fp64::value(static_cast<std::uint64_t>(dp.accumulator.min_exponent() + 1023) << 52),
          to_double(dp.accumulator, encode_max_finite(dp.accumulator, false))};
}

// One lane per thread: the GPU's lanes (and any scalar caller). The sum of the truncated terms is
// held in binary64 (S), exact by the proof above, so that no conversion unit is involved.
struct ScalarLanes {
  using F = double;
  using I = std::int64_t;
  using U = std::uint64_t;
  using S = double;
  // trunc(x * scale), an integer, exactly.
  TCEMU_HOST_DEVICE static S truncated(F x, F scale) {
#if defined(__CUDA_ARCH__)
    const F m = value((bits(x) & fp64::kSignBit) | 0x4330000000000000ULL);  // +-2^52, x's sign
    return __dsub_rn(__fma_rz(x, scale, m), m);
#else
    return static_cast<S>(static_cast<I>(x * scale));
#endif
  }
  TCEMU_HOST_DEVICE static F sum_value(S sum) {
    return sum;
  }
  TCEMU_HOST_DEVICE static U bits(F x) {
    return fp64::bits(x);
  }
  TCEMU_HOST_DEVICE static F value(U b) {
    return fp64::value(b);
  }
  TCEMU_HOST_DEVICE static I to_signed(U x) {
    return static_cast<I>(x);
  }
  TCEMU_HOST_DEVICE static U to_unsigned(I x) {
    return static_cast<U>(x);
  }
  TCEMU_HOST_DEVICE static bool all(bool mask) {
    return mask;
  }
};

// The lanes' running state of one block: its alignment exponent, the integer sum of the
// truncated terms and the AND of the terms' binary64 patterns (for the sign of a zero sum).
template <class L>
struct BlockSum {
  typename L::I emax;
  typename L::S sum;
  typename L::U all_negative;
};

// c's alignment exponent (its exponent, at least the format's minimum; a zero c takes no part),
// raised to the floor: where every block's alignment exponent starts.
template <class L>
TCEMU_HOST_DEVICE typename L::I c_alignment(const Binary64Grid& g, typename L::F c) {
  using I = typename L::I;
  I e = L::to_signed((L::bits(c) >> 52) & 0x7FF) - 1023;
  e = e > g.min_exponent ? e : I{} + g.min_exponent;
  e = c == 0.0 ? I{} + kZeroExponent : e;
  return e > g.floor ? e : I{} + g.floor;
}

// The alignment exponent of a product: the sum of its factors' (kZeroExponent for a zero factor
// stays below every floor), raising the block's. Any integer lanes (the GPU's are 32 bits wide).
template <class I>
TCEMU_HOST_DEVICE I raise_alignment(I emax, I product_exponent) {
  return product_exponent > emax ? product_exponent : emax;
}

// The block's scale 2^(nf - emax) once every alignment exponent is in; emax is clamped to
// kLowestGrid (below it every term is zero). Starts the sum with c truncated on the grid.
template <class L>
TCEMU_HOST_DEVICE typename L::F start_block(const Binary64Grid& g, BlockSum<L>& s,
                                            typename L::F c) {
  using I = typename L::I;
  s.emax = s.emax > kLowestGrid ? s.emax : I{} + kLowestGrid;
  const typename L::F scale = L::value(L::to_unsigned(1023 + g.fraction_bits - s.emax) << 52);
  s.sum = L::truncated(c, scale);
  s.all_negative = L::bits(c);
  return scale;
}

// One exact product truncated on the grid and added. TrackZeroSign = false (a caller's
// specialisation for ZeroSign::positive) skips the AND of the sign patterns: round_block reads
// all_negative only through g.zero_sign_mask, which is 0 under ZeroSign::positive, so whatever
// all_negative holds then (start_block's bits of c) no result bit changes.
template <bool TrackZeroSign = true, class L>
TCEMU_HOST_DEVICE void add_product(BlockSum<L>& s, typename L::F product, typename L::F scale) {
  if constexpr (TrackZeroSign) s.all_negative &= L::bits(product);
  s.sum += L::truncated(product, scale);
}

// The block result sum * 2^(emax - nf) rounded to the block result's precision, in every lane
// whose `fast` is set; the other lanes (subnormal, overflowing or non-finite results) go through
// exceptional_block_result.
template <class L>
struct RoundedBlock {
  typename L::F result;
  typename L::F exact;  // v = sum * 2^(emax - nf), a zero with its sign
  decltype(typename L::F{} < typename L::F{}) fast;
};

//
// A caller that knows the datapath at compile time may specialise: TrackZeroSign = false (only
// under ZeroSign::positive, where g.zero_sign_mask is 0) skips the zero-sign OR, which then adds
// no bit; Rounding names the block rounding that g.nearest would give (KnownRounding::from_grid,
// the default, reads g.nearest).
enum class KnownRounding { from_grid, toward_zero, nearest_even };

template <bool TrackZeroSign = true, KnownRounding Rounding = KnownRounding::from_grid, class L>
TCEMU_HOST_DEVICE RoundedBlock<L> round_block(const Binary64Grid& g, const BlockSum<L>& s,
                                              typename L::F c) {
  using U = typename L::U;
  using F = typename L::F;
  // v is exact; an exactly zero sum is -0 when every term was negative.
  const F unit = L::value(L::to_unsigned(1023 - g.fraction_bits + s.emax) << 52);
  U raw = L::bits(L::sum_value(s.sum) * unit);
  if constexpr (TrackZeroSign) raw |= s.sum == 0 ? s.all_negative & g.zero_sign_mask : U{};
  const F v = L::value(raw);
  const bool nearest =
      Rounding == KnownRounding::from_grid ? g.nearest : Rounding == KnownRounding::nearest_even;
  // Round to nearest, ties to even, on the pattern of a normal binary64 v (every lane that keeps
  // this result is one): adding 2^(drop - 1) - 1 plus the last kept significand bit carries into
  // the kept bits exactly when the dropped part exceeds half an ulp, or equals it with that bit
  // odd. The last kept bit is bit `drop` of the pattern, except at block_result_precision 1
  // (drop = 52), where no fraction bit is kept and it is the implicit bit, always 1: a tie
  // rounds up to the next power of two, as round_pack (round.hpp) rounds it.
  if (nearest) {
    const U kept_lsb = g.drop < 52 ? (raw >> g.drop) & 1 : U{} + 1;
    raw += (g.low >> 1) + kept_lsb;
  }
  const F rounded = L::value(raw & ~g.low);
  const F magnitude = L::value(L::bits(v) & ~fp64::kSignBit);
  const F rounded_magnitude = L::value(L::bits(rounded) & ~fp64::kSignBit);
  const F c_magnitude = L::value(L::bits(c) & ~fp64::kSignBit);
  const decltype(F{} < F{}) fast = (magnitude >= g.min_normal) &
                                   (rounded_magnitude <= g.max_finite) &
                                   (c_magnitude <= g.max_finite);
  return {rounded, v, fast};
}

// One lane round_block leaves to round_pack.
TCEMU_HOST_DEVICE inline double exceptional_block_result(const Datapath& dp, const Binary64Grid& g,
                                                         double c, std::int64_t sum,
                                                         std::int64_t emax, double v) {
  if (!fp64::is_finite(fp64::bits(c))) return c;  // finite products with c = Inf or NaN
  if (sum == 0) return v;                         // signed zero, already decided
  const std::uint32_t bits = round_pack(dp.accumulator, sum < 0,
                                        {static_cast<std::uint64_t>(sum < 0 ? -sum : sum),
                                         static_cast<int>(emax - g.fraction_bits), false},
                                        dp.block_rounding, dp.overflow, dp.block_result_precision);
  // As exact_block: under ZeroSign::positive a result that rounds to zero is +0.
  const bool positive_zero =
      dp.zero_sign == ZeroSign::positive && bits == encode_zero(dp.accumulator, true);
  return positive_zero ? 0.0 : to_double(dp.accumulator, bits);
}

// The accumulator bits of a value held exactly in a double; a NaN is the datapath's NaN.
TCEMU_HOST_DEVICE inline std::uint32_t accumulator_bits(const Datapath& dp, double v) {
  const FloatFormat& f = dp.accumulator;
  const std::uint64_t raw = fp64::bits(v);
  const bool negative = (raw & fp64::kSignBit) != 0;
  if (fp64::is_nan(raw)) return dp.nan_bits;
  if (fp64::is_infinite(raw)) return encode_infinity(f, negative);
  if (fp64::is_zero(raw)) return encode_zero(f, negative);
  // |v| = mantissa * 2^(exponent - 52) with a 53-bit integer mantissa (v is normal in binary64).
  const int field = static_cast<int>((raw >> 52) & 0x7FF);
  const std::uint64_t mantissa = (raw & fp64::kFractionMask) | (std::uint64_t{1} << 52);
  return round_pack(f, negative, {mantissa, field - 1023 - 52, false}, Rounding::toward_zero,
                    Overflow::infinity);
}

// The operand of a product as the binary64 formulation reads it: its value and its alignment
// exponent (kZeroExponent for a zero). Inputs are finite here (fast paths check it first). The
// same of a scale's bits gives the scale as scaled_operand applies it (a NaN scale's value is NaN).
struct Binary64Operand {
  double value;
  std::int64_t exponent;
};
TCEMU_HOST_DEVICE inline Binary64Operand binary64_operand(const FloatFormat& input,
                                                          std::uint32_t bits) {
  const Decoded x = decode(input, bits);
  return {to_double(input, bits),
          x.value_class == ValueClass::zero ? kZeroExponent : x.alignment_exponent(input)};
}

// A scale as scaled_operand applies it: binary64_operand of its bits, built straight from the
// exponent field for ue8m0 (2^(field - 127), field 255 NaN: decode's reading of the format).
TCEMU_HOST_DEVICE inline Binary64Operand binary64_scale(const FloatFormat& format,
                                                        std::uint32_t bits) {
  if (format.special != SpecialEncoding::e8m0) return binary64_operand(format, bits);
  const std::uint32_t field = bits & 0xFF;
  const int exponent = static_cast<int>(field) - 127;
  return {field == 0xFF ? fp64::value(fp64::kCanonicalNan)
                        : fp64::value(static_cast<std::uint64_t>(exponent + 1023) << 52),
          exponent};
}

// Operand x carrying scale s (group_terms == 1, the proof above): the product of the values (at
// most 11 + 4 significant bits, exact) and the sum of the exponents; a zero of either stays at
// kZeroExponent, below every floor.
TCEMU_HOST_DEVICE inline Binary64Operand scaled_operand(const Binary64Operand& x,
                                                        const Binary64Operand& s) {
  const bool zero = x.exponent == kZeroExponent || s.exponent == kZeroExponent;
  return {x.value * s.value, zero ? kZeroExponent : x.exponent + s.exponent};
}

}  // namespace tcemu::detail
