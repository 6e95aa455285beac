// The narrow formats of Blackwell (FP6, FP4, the scale formats) and the block-scaled datapath:
// decoding against the OCP Microscaling spec v1.0's tables, the MMA-Sim 2.1.1 rules the block FMA
// follows (a cancelled group still sets the grid, an all-zero group takes e_zero, NaN scales),
// and the GEMM's agreement with mma_element. Bit-for-bit agreement with MMA-Sim itself on random
// and extreme inputs is tests/cases' job (the committed MMA-Sim results).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>

namespace tcemu {
namespace {

using formats::e2m1;
using formats::e2m3;
using formats::e3m2;
using formats::fp32;
using formats::ue4m3;
using formats::ue8m0;

double value_of(const FloatFormat& f, std::uint32_t bits) {
  return to_double(f, bits);
}

TEST(NarrowFormats, E2m1IsTheOcpTable) {
  // OCP MX v1.0, table "FP4 (E2M1)": the eight magnitudes, the sign in bit 3.
  const double magnitudes[8] = {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0};
  for (std::uint32_t code = 0; code < 16; ++code) {
    const double expected = (code & 8) ? -magnitudes[code & 7] : magnitudes[code & 7];
    EXPECT_EQ(value_of(e2m1, code), expected) << code;
    EXPECT_EQ(decode(e2m1, code).negative, (code & 8) != 0);
    EXPECT_NE(decode(e2m1, code).value_class, ValueClass::nan);
  }
}

TEST(NarrowFormats, Fp6RangesAndSubnormals) {
  // OCP MX v1.0: E2M3 max 7.5, min subnormal 0.125; E3M2 max 28, min subnormal 0.0625. No
  // pattern is Inf or NaN.
  EXPECT_EQ(value_of(e2m3, 0x1F), 7.5);
  EXPECT_EQ(value_of(e2m3, 0x01), 0.125);
  EXPECT_EQ(value_of(e2m3, 0x08), 1.0);
  EXPECT_EQ(value_of(e3m2, 0x1F), 28.0);
  EXPECT_EQ(value_of(e3m2, 0x01), 0.0625);
  EXPECT_EQ(value_of(e3m2, 0x0C), 1.0);
  for (const FloatFormat& f : {e2m3, e3m2}) {
    for (std::uint32_t code = 0; code < 64; ++code) {
      const ValueClass c = decode(f, code).value_class;
      EXPECT_TRUE(c == ValueClass::finite || c == ValueClass::zero) << f.name << " " << code;
    }
  }
}

TEST(NarrowFormats, ScaleFormats) {
  EXPECT_EQ(value_of(ue8m0, 127), 1.0);
  EXPECT_EQ(value_of(ue8m0, 0), std::ldexp(1.0, -127));
  EXPECT_EQ(value_of(ue8m0, 254), std::ldexp(1.0, 127));
  EXPECT_EQ(decode(ue8m0, 255).value_class, ValueClass::nan);
  // ue4m3: e4m3 without its sign; bit 7 is ignored; 0x7F is NaN; 0 is zero.
  EXPECT_EQ(value_of(ue4m3, 0x38), 1.0);
  EXPECT_EQ(value_of(ue4m3, 0xB8), 1.0);
  EXPECT_EQ(value_of(ue4m3, 0x7E), 448.0);
  EXPECT_EQ(value_of(ue4m3, 0x01), std::ldexp(1.0, -9));
  EXPECT_EQ(decode(ue4m3, 0x7F).value_class, ValueClass::nan);
  EXPECT_EQ(decode(ue4m3, 0x00).value_class, ValueClass::zero);
  EXPECT_EQ(format_by_name("e2m1"), e2m1);
  EXPECT_EQ(format_by_name("ue4m3"), ue4m3);
  EXPECT_FALSE(ue4m3 == formats::e4m3);
}

TEST(NarrowFormats, ConversionSaturatesWhereNoInfinityExists) {
  const std::uint32_t big = std::bit_cast<std::uint32_t>(100.0f);
  EXPECT_EQ(convert(fp32, e2m1, big, Rounding::nearest_even, Overflow::saturate), 0x7u);
  EXPECT_EQ(convert(fp32, e2m1, std::bit_cast<std::uint32_t>(2.5f), Rounding::nearest_even), 0x4u);
  EXPECT_EQ(convert(fp32, e3m2, 0x7F800000u, Rounding::nearest_even), 0x1Fu);  // Inf -> max
  EXPECT_EQ(convert(fp32, ue8m0, std::bit_cast<std::uint32_t>(4.0f), Rounding::nearest_even), 129u);
}

constexpr std::uint32_t kOne = 0x2;       // e2m1 1.0
constexpr std::uint32_t kMinusOne = 0xA;  // e2m1 -1.0
constexpr std::uint32_t kFp32Nan = 0x7FFFFFFF;

std::uint32_t fp32_bits(float x) {
  return std::bit_cast<std::uint32_t>(x);
}

// NVFP4 on tcgen05 (MMA-Sim 2.1.1: G = 16, F = 35, e_zero -139, RZ to fp32), with ue8m0 scales
// per 16 k so that a test can put a power of two on each group.
Datapath nvf4_ue8m0() {
  return preset("sm100", e2m1, fp32, "tcgen05.mxf4nvf4.block16.ue8m0");
}

TEST(BlockScaledMma, PresetsHaveMmaSimsFields) {
  const Datapath nvfp4 = preset("sm100", e2m1, fp32, "tcgen05.mxf4nvf4.block16.ue4m3");
  EXPECT_TRUE(nvfp4.block_scaled());
  EXPECT_EQ(nvfp4.block_scaling.scale_block, 16);
  EXPECT_EQ(nvfp4.block_scaling.group_terms, 16);
  EXPECT_EQ(nvfp4.block_scaling.scale_a, ue4m3);
  EXPECT_EQ(nvfp4.alignment_fraction_bits, 35);
  EXPECT_EQ(nvfp4.alignment_floor, -139);
  EXPECT_EQ(nvfp4.instruction_k, 64);
  const Datapath mxf8 = preset("sm100", formats::e4m3, e2m1, fp32, "tcgen05.mxf8f6f4.block32");
  EXPECT_EQ(mxf8.block_scaling.group_terms, 1);
  EXPECT_EQ(mxf8.block_scaling.scale_block, 32);
  EXPECT_EQ(mxf8.b_format(), e2m1);
  EXPECT_EQ(mxf8.alignment_fraction_bits, 25);
  EXPECT_EQ(mxf8.alignment_floor, -133);
  // The plain mma.sync of sm120 on FP4 is kind::f8f6f4, never a block-scaled kind.
  EXPECT_FALSE(preset("sm120", e2m1, fp32).block_scaled());
  EXPECT_EQ(preset("sm120", e2m1, fp32).instruction_k, 32);
  EXPECT_THROW(preset("sm90", e2m1, fp32), std::invalid_argument);
}

TEST(BlockScaledMma, ExactWhereTheGridHoldsEveryBit) {
  // Equal scales on every group: the group sums (multiples of 2^-2 below 2^10) and c fit the
  // 35-bit grid, so d is the exact sum rounded toward zero to fp32, checked in binary64.
  const Datapath dp = nvf4_ue8m0();
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::uint32_t> a(64), b(64);
    double exact = 0;
    for (int p = 0; p < 64; ++p) {
      a[p] = rng() % 16;
      b[p] = rng() % 16;
      exact += value_of(e2m1, a[p]) * value_of(e2m1, b[p]);
    }
    const std::vector<std::uint32_t> scales(4, 127 + 3);  // 2^3 each: products times 2^6
    const float c = static_cast<float>(static_cast<int>(rng() % 200) - 100) / 4;
    const double total = exact * 64.0 + c;
    const std::uint32_t d = mma_element(dp, a, b, fp32_bits(c), scales, scales);
    EXPECT_EQ(static_cast<double>(std::bit_cast<float>(d)), total) << trial;
  }
}

// a and b of K = 64 with group g's products given, every other product 0.
struct Case {
  std::vector<std::uint32_t> a = std::vector<std::uint32_t>(64, 0);
  std::vector<std::uint32_t> b = std::vector<std::uint32_t>(64, 0);
  std::vector<std::uint32_t> scale_a = std::vector<std::uint32_t>(4, 127);
  std::vector<std::uint32_t> scale_b = std::vector<std::uint32_t>(4, 127);
};

TEST(BlockScaledMma, ACancelledGroupStillSetsTheGrid) {
  const Datapath dp = nvf4_ue8m0();
  Case x;
  x.a[0] = kOne;  // group 0: 1 - 1 = 0, scaled by 2^40
  x.b[0] = kOne;
  x.a[1] = kOne;
  x.b[1] = kMinusOne;
  x.scale_a[0] = 127 + 40;
  x.a[16] = kOne;  // group 1: 1, scale 1
  x.b[16] = kOne;
  // The grid's last bit is 2^(40 - 35) = 32: the 1 of group 1 is truncated away.
  EXPECT_EQ(mma_element(dp, x.a, x.b, 0, x.scale_a, x.scale_b), 0u);
  // With group 0's products all zero it takes e_zero instead, and the 1 survives.
  x.a[0] = x.a[1] = 0;
  EXPECT_EQ(mma_element(dp, x.a, x.b, 0, x.scale_a, x.scale_b), fp32_bits(1.0f));
}

TEST(BlockScaledMma, GroupsAlignOnTheirScalesNotOnTheirSums) {
  // Groups 0 and 2 sum 16 products of 6 * 6 = +576 and -576 (above 2^9) with scale 1; group 1
  // is 1 with scale 2^-35; c = 0. The alignment exponent is 0 (the scales'), so the grid's last
  // bit is 2^-35 and the result is 2^-35 exactly; aligned on the sums' size (2^9) it would be 0.
  const Datapath dp = nvf4_ue8m0();
  Case x;
  for (int p = 0; p < 16; ++p) {
    x.a[p] = x.b[p] = 0x7;  // 6.0
    x.a[32 + p] = 0x7;
    x.b[32 + p] = 0xF;  // -6.0
  }
  x.a[16] = x.b[16] = kOne;
  x.scale_a[1] = 127 - 35;
  EXPECT_EQ(mma_element(dp, x.a, x.b, 0, x.scale_a, x.scale_b), fp32_bits(std::ldexp(1.0f, -35)));
  x.scale_a[1] = 127 - 36;  // below the grid: truncated away
  EXPECT_EQ(mma_element(dp, x.a, x.b, 0, x.scale_a, x.scale_b), 0u);
}

TEST(BlockScaledMma, NanScales) {
  Datapath dp = nvf4_ue8m0();
  Case x;
  x.a[16] = x.b[16] = kOne;
  x.scale_a[0] = 0xFF;  // group 0's products are all zero
  EXPECT_EQ(mma_element(dp, x.a, x.b, 0, x.scale_a, x.scale_b), kFp32Nan);
  dp.block_scaling.nan_scale = NanScale::ignored_for_zero_products;
  EXPECT_EQ(mma_element(dp, x.a, x.b, 0, x.scale_a, x.scale_b), fp32_bits(1.0f));
  x.a[0] = x.b[0] = kOne;  // a nonzero product under the NaN scale: NaN under both rules
  EXPECT_EQ(mma_element(dp, x.a, x.b, 0, x.scale_a, x.scale_b), kFp32Nan);
}

TEST(BlockScaledMma, ZeroUe4m3ScaleMakesAZeroGroup) {
  const Datapath dp = preset("sm100", e2m1, fp32, "tcgen05.mxf4nvf4.block16.ue4m3");
  Case x;
  x.scale_a.assign(4, 0x38);  // 1.0
  x.scale_b.assign(4, 0x38);
  x.a[0] = x.b[0] = kOne;
  x.a[16] = x.b[16] = kOne;
  x.scale_a[0] = 0x00;
  EXPECT_EQ(mma_element(dp, x.a, x.b, 0, x.scale_a, x.scale_b), fp32_bits(1.0f));
  x.scale_a[1] = 0x3C;  // 1.5: ue4m3 scales carry significand bits
  EXPECT_EQ(mma_element(dp, x.a, x.b, 0, x.scale_a, x.scale_b), fp32_bits(1.5f));
}

TEST(BlockScaledMma, Mxf8f6f4ProductsCarryTheirScales) {
  // e4m3 x e2m1 with ue8m0 scales 2^-3 and 2^5: each product times 2^2.
  const Datapath dp = preset("sm100", formats::e4m3, e2m1, fp32, "tcgen05.mxf8f6f4.block32");
  std::vector<std::uint32_t> a(32, 0), b(32, 0);
  a[3] = 0x40;  // e4m3 2.0
  b[3] = 0x5;   // e2m1 3.0
  const std::vector<std::uint32_t> sa{127 - 3}, sb{127 + 5};
  EXPECT_EQ(mma_element(dp, a, b, fp32_bits(1.0f), sa, sb), fp32_bits(25.0f));
}

TEST(BlockScaledMma, ScalesAreRequiredAndCounted) {
  const Datapath dp = nvf4_ue8m0();
  const std::vector<std::uint32_t> a(64, 0), b(64, 0), four(4, 127), three(3, 127);
  EXPECT_THROW(mma_element(dp, a, b, 0), std::invalid_argument);
  EXPECT_THROW(mma_element(dp, a, b, 0, three, four), std::invalid_argument);
  EXPECT_THROW(mma_element(preset("sm90", formats::fp16, fp32), a, b, 0, four, four),
               std::invalid_argument);
  Datapath bad = dp;
  bad.block_scaling.group_terms = 5;
  EXPECT_THROW(validate(bad), std::invalid_argument);
  bad = dp;
  bad.input = formats::e5m2;  // 16 e5m2 products need more than 63 bits to be summed exactly
  EXPECT_THROW(validate(bad), std::invalid_argument);
  bad = dp;
  bad.block_scaling.scale_a = formats::e4m3;
  EXPECT_THROW(validate(bad), std::invalid_argument);
}

TEST(BlockScaledGemm, EqualsItsElements) {
  // m x n outputs of K = 160 (two and a half instructions: the last scale covers 32 k; the last
  // instruction is partial), against mma_element on each row and column.
  const Datapath dp = preset("sm100", e2m1, fp32, "tcgen05.mxf4nvf4.block32");
  const std::int64_t m = 5, n = 7, k = 160, s = 5;
  std::mt19937 rng(11);
  std::vector<unsigned char> a(m * k), b(k * n), sa(m * s), sb(s * n), d(m * n * 4);
  for (auto& x : a) x = static_cast<unsigned char>(rng() % 16);
  for (auto& x : b) x = static_cast<unsigned char>(rng() % 16);
  for (auto& x : sa) x = static_cast<unsigned char>(100 + rng() % 50);
  for (auto& x : sb) x = static_cast<unsigned char>(100 + rng() % 50);
  const ConstMatrixView av{a.data(), e2m1, m, k, k, Layout::row_major};
  const ConstMatrixView bv{b.data(), e2m1, k, n, n, Layout::row_major};
  const BlockScales scales{{sa.data(), ue8m0, m, s, s, Layout::row_major},
                           {sb.data(), ue8m0, s, n, n, Layout::row_major}};
  const MatrixView dv{{d.data(), fp32, m, n, n, Layout::row_major}};
  emulated_gemm(dp, GemmOptions{}, av, bv, scales, std::nullopt, dv);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      std::vector<std::uint32_t> row(k), col(k), row_scales(s), col_scales(s);
      for (std::int64_t p = 0; p < k; ++p) {
        row[p] = av.get(i, p);
        col[p] = bv.get(p, j);
      }
      for (std::int64_t q = 0; q < s; ++q) {
        row_scales[q] = scales.a.get(i, q);
        col_scales[q] = scales.b.get(q, j);
      }
      EXPECT_EQ(dv.get(i, j), mma_element(dp, row, col, 0, row_scales, col_scales)) << i << j;
    }
  }
  // Without scales, or with scales of the wrong shape, the GEMM refuses.
  EXPECT_THROW(emulated_gemm(dp, GemmOptions{}, av, bv, std::nullopt, dv), std::invalid_argument);
  const BlockScales short_scales{{sa.data(), ue8m0, m, s - 1, s, Layout::row_major}, scales.b};
  EXPECT_THROW(emulated_gemm(dp, GemmOptions{}, av, bv, short_scales, std::nullopt, dv),
               std::invalid_argument);
}

}  // namespace
}  // namespace tcemu
