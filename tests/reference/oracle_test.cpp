// Hand-checked cases of the MPFR oracle alone (no emulator involved): each expected bit pattern
// is worked out in the comment above it from the datapath.hpp semantics.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/format.hpp>
#include <tcemu/reference/format_value.hpp>
#include <tcemu/reference/mma_oracle.hpp>
#include <tcemu/reference/mpfr_number.hpp>

namespace tcemu::reference {
namespace {

using Bits = std::vector<std::uint32_t>;

// fp16 bit patterns.
constexpr std::uint32_t kH0 = 0x0000, kHNeg0 = 0x8000, kH1 = 0x3C00, kH2 = 0x4000, kH3 = 0x4200,
                        kH4 = 0x4400, kHOneQuarter = 0x3D00 /* 1.25 */,
                        kHTwoM12 = 0x0C00 /* 2^-12 */, kHThreeTwoM13 = 0x0E00 /* 1.5 * 2^-12 */,
                        kHTwo15 = 0x7800 /* 2^15 */, kHInf = 0x7C00, kHNegInf = 0xFC00,
                        kHNan = 0x7E00;
// fp32 bit patterns.
constexpr std::uint32_t kF0 = 0x00000000, kFNeg0 = 0x80000000, kF1 = 0x3F800000,
                        kFHalf = 0x3F000000, kFInf = 0x7F800000, kFNegInf = 0xFF800000,
                        kFNan = 0x7FFFFFFF;

// A V100-like datapath written out field by field: fp16 x fp16 + fp32, 4-term blocks, 23
// alignment fraction bits, RZ, overflow to Inf.
Datapath fp16_block4() {
  return Datapath{
      .input = formats::fp16,
      .accumulator = formats::fp32,
      .instruction_k = 4,
      .block_terms = 4,
      .k_group = 4,
      .alignment_fraction_bits = 23,
      .alignment_floor = -126,
      .block_rounding = Rounding::toward_zero,
      .block_result_precision = 24,
      .c_entry = AccumulatorEntry::aligned_in_first_block,
      .overflow = Overflow::infinity,
      .zero_sign = ZeroSign::ieee,
      .nan_bits = kFNan,
  };
}

Datapath exact(Rounding rounding) {
  Datapath dp = fp16_block4();
  dp.alignment_fraction_bits = std::nullopt;
  dp.alignment_floor = kNoAlignmentFloor;
  dp.block_rounding = rounding;
  return dp;
}

std::uint32_t oracle(const Datapath& dp, const Bits& a, const Bits& b, std::uint32_t c) {
  return oracle_mma_element(dp, a, b, c);
}

TEST(MpfrNumber, OwnsItsValueAndPrintsIt) {
  MpfrNumber x = MpfrNumber::scaled(true, 3, -1, Precision{64});  // -1.5
  EXPECT_EQ(x.to_double(), -1.5);
  EXPECT_EQ(x.leading_exponent(), 0);
  MpfrNumber y(std::move(x));  // x may now only be destroyed or assigned to
  EXPECT_EQ(y.to_double(), -1.5);
  EXPECT_EQ(y.precision().bits, 64);
  x = MpfrNumber(2.0);  // assignment gives the moved-from x a value again
  EXPECT_EQ(x.to_double(), 2.0);
  EXPECT_NE(y.to_string().find("-0x1.8p+0"), std::string::npos) << y.to_string();
  MpfrNumber z = y.copy();
  z.negate();
  EXPECT_EQ(z.compare(MpfrNumber(1.5)), 0);
  MpfrNumber w(7, Precision{3});
  EXPECT_EQ(w.to_uint64(), 7u);
  // Truncation keeps the sign, also of a zero result.
  MpfrNumber t(-0.75);
  t.truncate_to_integer();
  EXPECT_TRUE(t.is_zero());
  EXPECT_TRUE(t.is_negative());
}

TEST(FormatValue, DecodesFieldsAndAlignmentExponents) {
  const ExactValue one = exact_value(formats::fp16, kH1);
  EXPECT_EQ(one.kind, ExactValue::Kind::finite);
  EXPECT_EQ(one.value.to_double(), 1.0);
  EXPECT_EQ(one.alignment_exponent, 0);
  // Smallest fp16 subnormal 2^-24 aligns on the minimum exponent -14.
  const ExactValue tiny = exact_value(formats::fp16, 0x0001);
  EXPECT_EQ(tiny.value.to_double(), 0x1p-24);
  EXPECT_EQ(tiny.alignment_exponent, -14);
  // TF32 ignores its 13 padding bits.
  EXPECT_EQ(exact_value(formats::tf32, 0x3F801FFF).value.to_double(), 1.0);
  // E4M3: S.1111.111 is NaN, S.1111.110 is 448, and there is no Inf.
  EXPECT_EQ(exact_value(formats::e4m3, 0x7F).kind, ExactValue::Kind::nan);
  EXPECT_EQ(exact_value(formats::e4m3, 0x7E).value.to_double(), 448.0);
  EXPECT_EQ(exact_value(formats::e5m2, 0x7C).kind, ExactValue::Kind::infinity);
  EXPECT_TRUE(exact_value(formats::fp32, kFNeg0).value.is_negative());
}

TEST(FormatValue, RoundsAtTheSubnormalAndOverflowEdges) {
  const auto fp16 = [](double v, Rounding r, Overflow o = Overflow::ieee) {
    return round_to_format(formats::fp16, MpfrNumber(v), r, o);
  };
  // Half of the smallest subnormal ties to even (zero); just above it rounds up.
  EXPECT_EQ(fp16(0x1p-25, Rounding::nearest_even), 0x0000u);
  EXPECT_EQ(fp16(0x1.0000000001p-25, Rounding::nearest_even), 0x0001u);
  EXPECT_EQ(fp16(-0x1p-26, Rounding::nearest_even), 0x8000u);   // keeps its sign
  EXPECT_EQ(fp16(0x1.8p-24, Rounding::nearest_even), 0x0002u);  // 1.5 ulp: tie to even 2
  // 65504 is the largest finite; 65520 is the midpoint to 2^16 and ties away from the odd 0x7BFF.
  EXPECT_EQ(fp16(65519.0, Rounding::nearest_even), 0x7BFFu);
  EXPECT_EQ(fp16(65520.0, Rounding::nearest_even), 0x7C00u);
  EXPECT_EQ(fp16(1e6, Rounding::toward_zero), 0x7BFFu);
  EXPECT_EQ(fp16(1e6, Rounding::toward_zero, Overflow::infinity), 0x7C00u);
  EXPECT_EQ(fp16(-1e6, Rounding::nearest_even, Overflow::saturate), 0xFBFFu);
  // Fewer kept bits: 1 + 2^-5 to 4 significant bits is 1 under RZ and RN (below the half).
  EXPECT_EQ(round_to_format(formats::fp16, MpfrNumber(1.03125), Rounding::nearest_even,
                            Overflow::ieee, 4),
            0x3C00u);
}

// 1*1 + 2*1 + 3*1 + 4*1 + 0.5 = 10.5, exact.
TEST(Oracle, ExactDotProduct) {
  EXPECT_EQ(oracle(fp16_block4(), {kH1, kH2, kH3, kH4}, {kH1, kH1, kH1, kH1}, kFHalf), 0x41280000u);
  // 2 * 2 - 3 * 1 + 0 = 1.
  EXPECT_EQ(oracle(fp16_block4(), {kH2, kH3 | 0x8000}, {kH2, kH1}, kF0), kF1);
}

// FTTN's extra-bits test: a = 1, b = 1.25, c = -(2^-3 + 2^-25). The alignment exponent is 0 (the
// product's), so the grid is 2^-F. With F = 24 c loses 2^-25 and the sum is 1.125 (0x3F900000);
// with F = 25 c is kept, the sum is 1.125 - 2^-25, which RZ takes to 1.125 - 2^-23 (0x3F8FFFFF)
// and RN to 1.125.
TEST(Oracle, TruncationToTheAlignmentGrid) {
  const std::uint32_t c = 0xBE000002;  // -(2^-3 + 2^-25)
  Datapath dp = fp16_block4();
  dp.alignment_fraction_bits = 24;
  EXPECT_EQ(oracle(dp, {kH1}, {kHOneQuarter}, c), 0x3F900000u);
  dp.alignment_fraction_bits = 25;
  EXPECT_EQ(oracle(dp, {kH1}, {kHOneQuarter}, c), 0x3F8FFFFFu);
  dp.block_rounding = Rounding::nearest_even;
  EXPECT_EQ(oracle(dp, {kH1}, {kHOneQuarter}, c), 0x3F900000u);
}

// The alignment floor: two products of 2^-24 * 2^-24 = 2^-48 with fp16 inputs align on -28 (the
// minimum exponents of the subnormal factors), above the floor; the grid 2^-51 keeps them. A floor
// of -20 puts the grid at 2^-43 and truncates them to 0.
TEST(Oracle, AlignmentFloor) {
  Datapath dp = fp16_block4();
  EXPECT_EQ(oracle(dp, {0x0001, 0x0001}, {0x0001, 0x0001}, kF0), 0x28000000u);  // 2^-47
  dp.alignment_floor = -20;
  EXPECT_EQ(oracle(dp, {0x0001, 0x0001}, {0x0001, 0x0001}, kF0), kF0);
}

// c = 1 plus the product 1.5 * 2^-24 (exact datapath): RZ gives 1, RN 1 + 2^-23. With the product
// 2^-24 the sum is a tie: RN to even gives 1 from 1, and 1 + 2^-22 from c = 1 + 2^-23.
TEST(Oracle, RoundToNearestEvenVersusTowardZero) {
  EXPECT_EQ(oracle(exact(Rounding::toward_zero), {kHThreeTwoM13}, {kHTwoM12}, kF1), kF1);
  EXPECT_EQ(oracle(exact(Rounding::nearest_even), {kHThreeTwoM13}, {kHTwoM12}, kF1), 0x3F800001u);
  EXPECT_EQ(oracle(exact(Rounding::nearest_even), {kHTwoM12}, {kHTwoM12}, kF1), kF1);
  EXPECT_EQ(oracle(exact(Rounding::nearest_even), {kHTwoM12}, {kHTwoM12}, 0x3F800001), 0x3F800002u);
}

TEST(Oracle, InfinityAndNanRules) {
  const Datapath dp = fp16_block4();
  EXPECT_EQ(oracle(dp, {kHInf, kH1}, {kH2, kH1}, kF1), kFInf);
  EXPECT_EQ(oracle(dp, {kHInf}, {kH2 | 0x8000}, kF1), kFNegInf);
  EXPECT_EQ(oracle(dp, {kH1}, {kH1}, kFNegInf), kFNegInf);
  EXPECT_EQ(oracle(dp, {kHInf}, {kH0}, kF1), kFNan);                 // 0 * Inf
  EXPECT_EQ(oracle(dp, {kHInf, kHNegInf}, {kH1, kH1}, kF0), kFNan);  // Inf - Inf
  EXPECT_EQ(oracle(dp, {kHInf}, {kH1}, kFNegInf), kFNan);            // Inf - Inf with c
  EXPECT_EQ(oracle(dp, {kHNan, kHInf}, {kH0, kH1}, kF0), kFNan);     // NaN anywhere
  EXPECT_EQ(oracle(dp, {kH1}, {kH1}, 0x7FC00001), kFNan);            // NaN c: nan_bits
  // Overflow to Inf under RZ (Overflow::infinity): 2^15 * 2 into an fp16 accumulator.
  Datapath half = dp;
  half.accumulator = formats::fp16;
  half.nan_bits = 0x7FFF;
  half.block_result_precision = 11;
  EXPECT_EQ(oracle(half, {kHTwo15}, {kH2}, kH0), 0x7C00u);
  half.overflow = Overflow::ieee;  // RZ: the largest finite value
  EXPECT_EQ(oracle(half, {kHTwo15}, {kH2}, kH0), 0x7BFFu);
  EXPECT_EQ(oracle(half, {kHNan}, {kH2}, kH0), 0x7FFFu);
}

TEST(Oracle, SignedZeros) {
  const Datapath dp = fp16_block4();
  // Every term -0: -0. One +0 among them: +0.
  EXPECT_EQ(oracle(dp, {kHNeg0, kH0}, {kH1, kHNeg0}, kFNeg0), kFNeg0);
  EXPECT_EQ(oracle(dp, {kHNeg0, kH0}, {kH1, kH1}, kFNeg0), kF0);
  // Exact cancellation is +0 under RZ, even with -0 terms around.
  EXPECT_EQ(oracle(dp, {kH1 | 0x8000}, {kH1}, kF1), kF0);
  // -2^-47 (two subnormal factors) truncated away by a floor-raised grid is -0, and with c = -0
  // the zero sum is -0; ZeroSign::positive makes it +0.
  Datapath floor = dp;
  floor.alignment_floor = -20;
  EXPECT_EQ(oracle(floor, {0x8001}, {0x0001}, kFNeg0), kFNeg0);
  floor.zero_sign = ZeroSign::positive;
  EXPECT_EQ(oracle(floor, {0x8001}, {0x0001}, kFNeg0), kF0);
  // A nonzero sum that rounds to zero keeps its sign: -2^-30 into fp16 is -0.
  Datapath half = exact(Rounding::nearest_even);
  half.accumulator = formats::fp16;
  half.block_result_precision = 11;
  half.nan_bits = 0x7FFF;
  EXPECT_EQ(oracle(half, {0x8200}, {0x0200}, kHNeg0), 0x8000u);  // -2^-15 * 2^-15
}

// A block result of p = 14 bits: a normal value loses its low bits, a subnormal keeps
// max(leading - 13, -149) as its last bit. One +0 product runs one block on c alone, which
// rounds c (K = 0 would run no instruction: d = c).
TEST(Oracle, ReducedBlockPrecisionAndSubnormals) {
  Datapath dp = fp16_block4();
  dp.block_result_precision = 14;
  EXPECT_EQ(oracle(dp, {kH0}, {kH0}, 0x3F8003FF),
            0x3F800000u);  // 1 + 1023 * 2^-23: the low 10 bits go
  EXPECT_EQ(oracle(dp, {kH0}, {kH0}, 0x00100001), 0x00100000u);  // leading -129: last bit 2^-142
  EXPECT_EQ(oracle(dp, {kH0}, {kH0}, 0x00000081), 0x00000081u);  // leading -142: every bit kept
  dp.block_rounding = Rounding::nearest_even;
  EXPECT_EQ(oracle(dp, {kH0}, {kH0}, 0x001000C1), 0x00100100u);  // above the half: rounds up
}

// Blocks and instructions. Terms t0..t3 = 2^-24, 1, 2^-24, 0 with exact RZ blocks of 2:
//   k_group 1: blocks {t0, t2} then {t1, t3}: 2^-23, then 1 + 2^-23 exactly (0x3F800001).
//   k_group 2: blocks {t0, t1} then {t2, t3}: 1 + 2^-24 -> 1, then 1 + 2^-24 -> 1.
// Two instructions of K 2 with k_group 2 run like the second case.
TEST(Oracle, BlocksAreDealtByKGroup) {
  Datapath dp = exact(Rounding::toward_zero);
  dp.block_terms = 2;
  dp.k_group = 1;
  const Bits a{kHTwoM12, kH1, kHTwoM12, kH0};
  const Bits b{kHTwoM12, kH1, kHTwoM12, kH1};
  EXPECT_EQ(oracle(dp, a, b, kF0), 0x3F800001u);
  dp.k_group = 2;
  EXPECT_EQ(oracle(dp, a, b, kF0), kF1);
  dp.instruction_k = 2;
  EXPECT_EQ(oracle(dp, a, b, kF0), kF1);
}

// A block result may lie above its own grid's top (a product's leading bit can be one above its
// alignment exponent), so a second pass through a block could change it. With 1 fraction bit:
// 1.5 * 1.75 = 2.625 aligns on 0, the grid is 2^-1, the block gives 2.5. A partial instruction
// (K = 1 of 4) does not run its empty second block, which would truncate 2.5 (aligned on 1) to 2.
// One +0 product runs one block on c alone: c = 2.5 becomes 2.
TEST(Oracle, EmptyBlocksOfPartialInstructionsDoNotRun) {
  Datapath dp = exact(Rounding::toward_zero);
  dp.alignment_fraction_bits = 1;
  dp.block_terms = 2;
  dp.k_group = 2;
  EXPECT_EQ(oracle(dp, {0x3E00}, {0x3F00}, kF0), 0x40200000u);
  EXPECT_EQ(oracle(dp, {kH0}, {kH0}, 0x40200000), 0x40000000u);
}

// c after the blocks: the product 1 is its block's result, then 1 + 1.5 * 2^-24 is rounded to
// nearest (1 + 2^-23), where an aligned c under RZ gives 1. A block of one +0 product gives +0
// and c = -0 is added to it: +0. K = 0 runs no instruction: -0 stays -0.
TEST(Oracle, AccumulatorAddedAfterBlocks) {
  Datapath dp = exact(Rounding::toward_zero);
  const std::uint32_t c = 0x33C00000;  // 1.5 * 2^-24
  EXPECT_EQ(oracle(dp, {kH1}, {kH1}, c), kF1);
  dp.c_entry = AccumulatorEntry::added_after_blocks;
  EXPECT_EQ(oracle(dp, {kH1}, {kH1}, c), 0x3F800001u);
  EXPECT_EQ(oracle(dp, {kH0}, {kH0}, kFNeg0), kF0);
  EXPECT_EQ(oracle(dp, {}, {}, kFNeg0), kFNeg0);
  EXPECT_EQ(oracle(dp, {kHInf}, {kH1}, kFNegInf), kFNan);
}

TEST(Oracle, RejectsMismatchedLengths) {
  EXPECT_THROW(oracle(fp16_block4(), {kH1}, {}, kF0), std::invalid_argument);
}

}  // namespace
}  // namespace tcemu::reference
