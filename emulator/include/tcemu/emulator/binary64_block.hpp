// The binary64 formulation of one datapath block, written once for the CPU's vector lanes and the
// GPU's threads (TCEMU_HOST_DEVICE, templated on the lane type): the CPU fast path
// (emulator/src/gemm_fast_path.cpp, eight columns per AVX-512 vector) and the GPU backend's
// emulated engine (gpu/src/gemm/emulated_gemm.cu, one element per thread) call these functions and
// no other copy of the arithmetic. Where binary64_applies() is false, or an operand is Inf or NaN,
// both fall back to block_fma.hpp.
//
// Why binary64 arithmetic gives the bits of exact_block (for the datapaths binary64_applies
// accepts):
//  * Operands. An input significand has at most 11 bits (fp16, bf16, tf32, fp8), so a product
//    has at most 22 and is exact in binary64; its exponent lies in [-266, 256], inside binary64's
//    normal range. Accumulator values (fp32 or fp16) are exact in binary64 as well.
//  * Alignment. The block's alignment exponent e is computed in integers from the bit fields,
//    exactly as exact_block does (zeros excluded, floor applied). scale = 2^(nf - e) is built from
//    its bits; multiplying by a power of two is exact because no result leaves binary64's normal
//    range (|term| * scale lies in [2^-560, 2^(nf+2)]). The conversion to an integer, which
//    rounds toward zero, then drops exactly the bits below the grid 2^(e - nf) from the
//    magnitude: the truncation of the model. The GPU's lanes truncate without a conversion: for
//    x = term * scale (|x| < 2^(nf+2) <= 2^50) and M = 2^52 with x's sign, the fused x + M lies
//    in [2^52, 2^53) in magnitude, where the ulp is 1, so rounding it toward zero keeps exactly
//    M + trunc(x); subtracting M again is exact.
//  * Summation. Every truncated term is an integer below 2^(nf+2) and there are at most
//    block_terms + 1 of them, so every partial sum is an integer below 2^52 when
//    nf + 2 + bit_width(block_terms + 1) <= 52: 64-bit integers (the CPU's lanes) and binary64
//    (the GPU's) add them exactly, in any order.
//  * Signed zero. A zero sum is -0 under ZeroSign::ieee exactly when every term (product or c) has
//    its sign bit set: the AND of their binary64 patterns keeps the sign bit then. Padding products
//    are -0 * +0 = -0, neutral for that AND and for the sum, so partial blocks are exact.
//  * Rounding. v = S * 2^(e - nf) is exact. When v is in the accumulator's normal range, rounding
//    to p significant bits only touches v's 52-bit binary64 fraction: RZ clears its low 53 - p
//    bits; RN adds (half - 1) plus the last kept bit, then clears them (a carry into the exponent
//    field is the correct renormalisation). Subnormal, overflowing or infinite results go through
//    round_pack (exceptional_block_result), the routine every other result goes through.
#pragma once

#include <cstdint>

#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/fp64_bits.hpp>
#include <tcemu/emulator/host_device.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu::detail {

inline constexpr int kZeroExponent = -1'000'000;  // alignment exponent of a zero: below every floor
inline constexpr int kLowestGrid = -600;  // emax never needs to be lower (all terms are zero then)

// True when the datapath truncates on a grid narrow enough for binary64 sums (the proof above).
// A floor above every real exponent would push the scale out of binary64's range.
// The block functions decode both operands in `input` and take no scales: a datapath with a
// separate b format or block scales runs through block_fma.hpp.
TCEMU_HOST_DEVICE inline bool binary64_applies(const Datapath& dp) {
  if (dp.has_input_b || dp.block_scaled()) return false;
  if (!dp.alignment_fraction_bits.has_value() || dp.input.fraction_bits > 10) return false;
  const int sum_bits =
      *dp.alignment_fraction_bits + 2 + bit_width(static_cast<std::uint64_t>(dp.block_terms + 1));
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
// exponent (kZeroExponent for a zero). Inputs are finite here (fast paths check it first).
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

}  // namespace tcemu::detail
