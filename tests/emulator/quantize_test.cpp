// Quantization to MX and NVFP4 (quantize.hpp): hand-worked blocks from the OCP MX v1.0 rules
// (scale from the block's largest magnitude, ties to even, saturation, subnormal elements, zero,
// NaN and Inf blocks), the NVFP4 recipe step by step, the nearest-even property of every element
// against a brute-force search of the element format's whole code table, the recipe's fp32
// arithmetic against the host's IEEE operations, and a quantized A and B through emulated_gemm.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/fp32_bits.hpp>
#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/emulator/quantize.hpp>

namespace tcemu {
namespace {

using formats::bf16;
using formats::e2m1;
using formats::e2m3;
using formats::e3m2;
using formats::e4m3;
using formats::e5m2;
using formats::fp32;

std::uint32_t bits(float v) {
  return std::bit_cast<std::uint32_t>(v);
}

std::vector<std::uint32_t> fp32_bits(const std::vector<float>& values) {
  std::vector<std::uint32_t> out;
  for (const float v : values) out.push_back(bits(v));
  return out;
}

struct Block {
  std::uint8_t scale;
  std::vector<std::uint8_t> codes;
};

Block mx(const std::vector<float>& values, const FloatFormat& element) {
  Block b{0, std::vector<std::uint8_t>(values.size())};
  const std::vector<std::uint32_t> in = fp32_bits(values);
  b.scale = quantize_mx_block(fp32, in, element, b.codes);
  return b;
}

TEST(QuantizeMx, AmaxSixInE2m1GetsScaleOne) {
  // floor(log2(6)) - emax(e2m1) = 2 - 2 = 0: X = 2^0, ue8m0 code 127. The elements are the
  // values themselves, rounded to nearest even: 0.25 is halfway between 0 and 0.5 (to 0), 0.75
  // between 0.5 and 1 (to 1.0, even code 2), 2.5 between 2 and 3 (to 2), 5 between 4 and 6 (to 4),
  // -1.25 between -1 and -1.5 (to -1); 0.5 is e2m1's one subnormal.
  const Block b = mx({6.0f, 0.25f, 0.75f, 2.5f, 5.0f, -1.25f, 0.5f, -0.0f}, e2m1);
  EXPECT_EQ(b.scale, 127);
  EXPECT_EQ(b.codes, (std::vector<std::uint8_t>{0x7, 0x0, 0x2, 0x4, 0x6, 0xA, 0x1, 0x8}));
}

TEST(QuantizeMx, ScaleIsTheLeadingExponentMinusEmax) {
  // amax 7: floor(log2) 2, so the scale is still 2^0 and 7 saturates to 6 (code 7) instead of
  // rounding up to the next power of two.
  EXPECT_EQ(mx({7.0f, 1.0f}, e2m1).scale, 127);
  EXPECT_EQ(mx({7.0f, 1.0f}, e2m1).codes, (std::vector<std::uint8_t>{0x7, 0x2}));
  // amax 8 (floor(log2) 3): X = 2, 1.0 becomes 0.5 (code 1), 3.0 becomes 1.5 (code 3).
  EXPECT_EQ(mx({8.0f, 1.0f, -3.0f}, e2m1).scale, 128);
  EXPECT_EQ(mx({8.0f, 1.0f, -3.0f}, e2m1).codes, (std::vector<std::uint8_t>{0x6, 0x1, 0xB}));
  // e4m3: emax 8. amax 480 (floor(log2) 8): X = 1 and 480 saturates to 448 (0x7E), not NaN.
  EXPECT_EQ(mx({480.0f, 1.0f}, e4m3).scale, 127);
  EXPECT_EQ(mx({480.0f, 1.0f}, e4m3).codes, (std::vector<std::uint8_t>{0x7E, 0x38}));
  // e5m2: emax 15; amax 1 gives X = 2^-15 (code 112), 1.0 becomes 2^15 (0x78).
  EXPECT_EQ(mx({1.0f}, e5m2).scale, 112);
  EXPECT_EQ(mx({1.0f}, e5m2).codes, (std::vector<std::uint8_t>{0x78}));
  // e3m2: emax 4, e2m3: emax 2; amax 1 gives X = 2^-4 and 2^-2: 1.0 becomes 16 (e3m2 0x1C) and
  // 4 (e2m3 0x18).
  EXPECT_EQ(mx({1.0f}, e3m2).scale, 123);
  EXPECT_EQ(mx({1.0f}, e3m2).codes, (std::vector<std::uint8_t>{0x1C}));
  EXPECT_EQ(mx({1.0f}, e2m3).scale, 125);
  EXPECT_EQ(mx({1.0f}, e2m3).codes, (std::vector<std::uint8_t>{0x18}));
}

TEST(QuantizeMx, SubnormalElementsAndUnderflow) {
  // e4m3, amax 256 (X = 1): 2^-7 is e4m3's subnormal 0x04 (2^-9 per step), 2^-10 lies halfway
  // between 0 and the smallest subnormal 2^-9 and rounds to even (0), 3 * 2^-10 rounds to 2^-8.
  const Block b = mx({256.0f, 0x1p-7f, 0x1p-10f, 0x3p-10f, -0x1p-9f}, e4m3);
  EXPECT_EQ(b.scale, 127);
  EXPECT_EQ(b.codes, (std::vector<std::uint8_t>{0x78, 0x04, 0x00, 0x02, 0x81}));
}

TEST(QuantizeMx, ZeroBlockAndTheSmallestScale) {
  // No log2 of a zero block: code 0 (2^-127) as microxcaling and torchao give; zeros keep their
  // sign.
  const Block zero = mx({0.0f, -0.0f, 0.0f}, e2m1);
  EXPECT_EQ(zero.scale, 0);
  EXPECT_EQ(zero.codes, (std::vector<std::uint8_t>{0x0, 0x8, 0x0}));
  // A block of fp32 subnormals: floor(log2) - emax lies below -127, clamped to code 0; 2^-126
  // (floor(log2) = -126) too; 2^-120 with e2m1 gives -122 (code 5).
  EXPECT_EQ(mx({0x1p-149f}, e4m3).scale, 0);
  EXPECT_EQ(mx({0x1p-149f}, e4m3).codes, (std::vector<std::uint8_t>{0x00}));
  EXPECT_EQ(mx({0x1p-126f}, e2m1).scale, 0);
  EXPECT_EQ(mx({0x1p-126f}, e2m1).codes, (std::vector<std::uint8_t>{0x4}));  // 2^-126 / 2^-127
  EXPECT_EQ(mx({0x1p-120f}, e2m1).scale, 5);
  // The largest fp32: floor(log2) 127, e2m1 gives 125 (code 252); its 1.99.. * 2^2 saturates.
  const Block top = mx({std::numeric_limits<float>::max()}, e2m1);
  EXPECT_EQ(top.scale, 252);
  EXPECT_EQ(top.codes, (std::vector<std::uint8_t>{0x7}));
}

TEST(QuantizeMx, NanAndInfinityMakeTheScaleNan) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(mx({1.0f, nan}, e4m3).scale, 0xFF);
  EXPECT_EQ(mx({1.0f, nan}, e4m3).codes, (std::vector<std::uint8_t>{0x7F, 0x7F}));
  EXPECT_EQ(mx({-inf, 2.0f}, e5m2).codes, (std::vector<std::uint8_t>{0x7F, 0x7F}));
  // FP4 has no NaN: convert()'s image of NaN, its largest positive value.
  EXPECT_EQ(mx({inf, 2.0f}, e2m1).scale, 0xFF);
  EXPECT_EQ(mx({inf, 2.0f}, e2m1).codes, (std::vector<std::uint8_t>{0x7, 0x7}));
}

TEST(QuantizeMx, Bf16InputAndBadArguments) {
  // bf16 0x40C0 is 6.0, 0x3E80 0.25.
  std::vector<std::uint8_t> codes(2);
  const std::vector<std::uint32_t> in{0x40C0, 0x3E80};
  EXPECT_EQ(quantize_mx_block(bf16, in, e2m1, codes), 127);
  EXPECT_EQ(codes, (std::vector<std::uint8_t>{0x7, 0x0}));
  EXPECT_THROW(quantize_mx_block(e4m3, in, e2m1, codes), std::invalid_argument);
  EXPECT_THROW(quantize_mx_block(fp32, in, formats::fp16, codes), std::invalid_argument);
  std::vector<std::uint8_t> short_codes(1);
  EXPECT_THROW(quantize_mx_block(bf16, in, e2m1, short_codes), std::invalid_argument);
  const std::vector<std::uint32_t> x(4, bits(1.0f));
  const ConstMatrixView view{
      reinterpret_cast<const unsigned char*>(x.data()), fp32, 2, 2, 2, Layout::row_major};
  EXPECT_THROW(quantize_mx(view, e2m1, ScaledOperand::a, 0), std::invalid_argument);
  EXPECT_THROW(quantize_nvfp4(view, ScaledOperand::a, -1), std::invalid_argument);
}

// The value of a code of `element` under ue8m0 scale code `scale`, exactly.
double mx_value(const FloatFormat& element, std::uint32_t code, std::uint8_t scale) {
  return to_double(element, code) * std::ldexp(1.0, scale - 127);
}

// Every element of a random block is the nearest value of the scaled element grid, ties to the
// even code, by a search of all codes; the scale is floor(log2(amax)) - emax, from std::ilogb.
TEST(QuantizeMx, EveryElementIsTheNearestEvenOfItsGrid) {
  std::mt19937 rng(35);
  for (const FloatFormat& element : {e4m3, e5m2, e3m2, e2m3, e2m1}) {
    const std::uint32_t code_count = 1u << element.storage_bits();
    for (int trial = 0; trial < 300; ++trial) {
      std::uniform_int_distribution<int> exponent(-30, 30);
      std::uniform_real_distribution<float> unit(-2.0f, 2.0f);
      const int base = exponent(rng);
      std::vector<float> values(32);
      for (float& v : values) v = std::ldexp(unit(rng), base + exponent(rng) / 6);
      const Block b = mx(values, element);
      double amax = 0;
      for (const float v : values) amax = std::max(amax, std::fabs(static_cast<double>(v)));
      ASSERT_EQ(b.scale, std::ilogb(amax) - element.max_exponent() + 127);
      for (std::size_t i = 0; i < values.size(); ++i) {
        const double x = values[i];
        const double got = mx_value(element, b.codes[i], b.scale);
        for (std::uint32_t c = 0; c < code_count; ++c) {
          if (decode(element, c).value_class == ValueClass::nan) continue;
          const double other = mx_value(element, c, b.scale);
          const double d_got = std::fabs(x - got), d_other = std::fabs(x - other);
          ASSERT_LE(d_got, d_other) << element.name << " " << x << " code " << int(b.codes[i]);
          if (d_got == d_other && got != other) {
            // A tie: the even code (last fraction bit clear) wins.
            ASSERT_EQ(b.codes[i] & 1, 0) << element.name << " " << x;
          }
        }
        // Zero and the sign: a nonzero code has the value's sign.
        if (got != 0) {
          ASSERT_EQ(std::signbit(got), std::signbit(x));
        }
      }
    }
  }
}

TEST(Fp32Division, MatchesTheHostIeeeDivision) {
  // Host float division under the default environment is IEEE RN with subnormals; NaN results
  // are the GPU's 0x7FFFFFFF.
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::uint32_t> any;
  const std::vector<std::uint32_t> special{0,           0x80000000u, 1,           0x007FFFFFu,
                                           0x00800000u, 0x3F800000u, 0x7F7FFFFFu, 0x7F800000u,
                                           0xFF800000u, 0x7FC00000u, 0x40C00000u, 0x45280000u};
  auto check = [](std::uint32_t a, std::uint32_t b) {
    const float q = std::bit_cast<float>(a) / std::bit_cast<float>(b);
    const std::uint32_t expected = std::isnan(q) ? kGpuFp32Nan : bits(q);
    ASSERT_EQ(fp32_div_rn(a, b), expected) << std::hex << a << " / " << b;
  };
  for (const std::uint32_t a : special) {
    for (const std::uint32_t b : special) check(a, b);
  }
  for (int i = 0; i < 200000; ++i) {
    // Half the operands subnormal or near the range ends, half anything.
    std::uint32_t a = any(rng), b = any(rng);
    if (i % 2 == 0) a &= 0x807FFFFFu;
    if (i % 4 == 1) b &= 0x807FFFFFu;
    check(a, b);
  }
}

// torchao's nvfp4_quantize in host fp32 arithmetic (IEEE RN), the recipe of quantize.hpp, with
// the element and scale roundings of convert().
Block nvfp4_reference(const std::vector<float>& values, float tensor_scale) {
  float amax = 0;
  bool nan = false;
  for (const float v : values) {
    nan = nan || std::isnan(v);
    amax = std::max(amax, std::fabs(v));
  }
  float s = (nan ? std::numeric_limits<float>::quiet_NaN() : amax) / 6.0f / tensor_scale;
  if (!std::isnan(s)) s = std::clamp(s, 0x1p-6f, 448.0f);
  const auto code = static_cast<std::uint8_t>(convert(fp32, e4m3, bits(s), Rounding::nearest_even));
  const float total = tensor_scale * static_cast<float>(to_double(e4m3, code));
  Block b{code, {}};
  for (const float v : values) {
    b.codes.push_back(static_cast<std::uint8_t>(
        convert(fp32, e2m1, bits(v / total), Rounding::nearest_even, Overflow::saturate)));
  }
  return b;
}

Block nvfp4(const std::vector<float>& values, std::uint32_t tensor_scale) {
  Block b{0, std::vector<std::uint8_t>(values.size())};
  b.scale = quantize_nvfp4_block(fp32, fp32_bits(values), tensor_scale, b.codes);
  return b;
}

TEST(QuantizeNvfp4, HandWorkedBlocks) {
  // amax_tensor 2688 gives the tensor scale 1.0. A block of amax 6: 6 / 6 / 1 = 1.0, e4m3 0x38,
  // the elements themselves (ties to even as in MX). A block of amax 2688: 448 (0x7E), and
  // 2688 / 448 = 6.
  EXPECT_EQ(nvfp4_tensor_scale(bits(2688.0f)), bits(1.0f));
  const Block one = nvfp4({6.0f, 2.5f, -0.75f, 0.25f}, bits(1.0f));
  EXPECT_EQ(one.scale, 0x38);
  EXPECT_EQ(one.codes, (std::vector<std::uint8_t>{0x7, 0x4, 0xA, 0x0}));
  const Block top = nvfp4({2688.0f, -448.0f}, bits(1.0f));
  EXPECT_EQ(top.scale, 0x7E);
  EXPECT_EQ(top.codes, (std::vector<std::uint8_t>{0x7, 0xA}));
  // amax 0.03 / 6 = 0.005 lies below 2^-6: clamped to 2^-6 (0x08), so 0.03 / 2^-6 = 1.92 rounds
  // to 2 (code 4).
  const Block small = nvfp4({0.03f}, bits(1.0f));
  EXPECT_EQ(small.scale, 0x08);
  EXPECT_EQ(small.codes, (std::vector<std::uint8_t>{0x4}));
  // amax 9: 1.5 exactly (0x3C); 9 / 1.5 = 6, 4 / 1.5 = 2.67 to 3 (code 5).
  const Block mid = nvfp4({9.0f, 4.0f}, bits(1.0f));
  EXPECT_EQ(mid.scale, 0x3C);
  EXPECT_EQ(mid.codes, (std::vector<std::uint8_t>{0x7, 0x5}));
  // A zero block under any tensor scale: 2^-6 and zero codes.
  EXPECT_EQ(nvfp4({0.0f, -0.0f}, bits(0.5f)).scale, 0x08);
  EXPECT_EQ(nvfp4({0.0f, -0.0f}, bits(0.5f)).codes, (std::vector<std::uint8_t>{0x0, 0x8}));
  // The tensor scale is fp32(amax / 2688); a zero or underflowing one is 1.0 (Transformer
  // Engine's rule), NaN stays NaN.
  EXPECT_EQ(nvfp4_tensor_scale(bits(1.0f)), bits(1.0f / 2688.0f));
  EXPECT_EQ(nvfp4_tensor_scale(0), bits(1.0f));
  EXPECT_EQ(nvfp4_tensor_scale(1), bits(1.0f));  // 2^-149 / 2688 rounds to zero
  EXPECT_EQ(nvfp4_tensor_scale(0x7FC00000u), kGpuFp32Nan);
  std::vector<std::uint8_t> codes(1);
  const std::vector<std::uint32_t> in{bits(1.0f)};
  EXPECT_THROW(quantize_nvfp4_block(fp32, in, 0, codes), std::invalid_argument);
  EXPECT_THROW(quantize_nvfp4_block(fp32, in, bits(-1.0f), codes), std::invalid_argument);
}

TEST(QuantizeNvfp4, NanAndInfinity) {
  const float inf = std::numeric_limits<float>::infinity();
  // An Inf makes the tensor scale +Inf: its block's scale is Inf / Inf = NaN (0x7F) and its
  // codes NaN's image 0x7; the other blocks get 2^-6 and, divided by Inf, zeros.
  const std::uint32_t ts = nvfp4_tensor_scale(bits(inf));
  EXPECT_EQ(ts, bits(inf));
  EXPECT_EQ(nvfp4({inf, 1.0f}, ts).scale, 0x7F);
  EXPECT_EQ(nvfp4({inf, 1.0f}, ts).codes, (std::vector<std::uint8_t>{0x7, 0x7}));
  EXPECT_EQ(nvfp4({-3.0f, 1.0f}, ts).scale, 0x08);
  EXPECT_EQ(nvfp4({-3.0f, 1.0f}, ts).codes, (std::vector<std::uint8_t>{0x8, 0x0}));
  // A NaN makes everything NaN.
  EXPECT_EQ(nvfp4({1.0f, 2.0f}, kGpuFp32Nan).scale, 0x7F);
  EXPECT_EQ(nvfp4({1.0f, 2.0f}, kGpuFp32Nan).codes, (std::vector<std::uint8_t>{0x7, 0x7}));
}

TEST(QuantizeNvfp4, MatchesTheRecipeInHostArithmetic) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-20, 20);
  for (int trial = 0; trial < 3000; ++trial) {
    const float amax_tensor = std::ldexp(1.0f + std::fabs(unit(rng)), exponent(rng));
    const std::uint32_t ts = nvfp4_tensor_scale(bits(amax_tensor));
    ASSERT_EQ(ts, bits(amax_tensor / 2688.0f));
    std::vector<float> values(16);
    const int block_exponent = exponent(rng) / 2;
    for (float& v : values) {
      v = std::min(std::ldexp(unit(rng), block_exponent), amax_tensor);
    }
    const Block got = nvfp4(values, ts);
    const Block want = nvfp4_reference(values, std::bit_cast<float>(ts));
    ASSERT_EQ(got.scale, want.scale) << trial;
    ASSERT_EQ(got.codes, want.codes) << trial;
    // Dequantized, every element is within half a step of e2m1's grid times the block's scale,
    // or saturated at 6 of it.
    const double scale = to_double(e4m3, got.scale) * std::bit_cast<float>(ts);
    for (std::size_t i = 0; i < values.size(); ++i) {
      const double q = to_double(e2m1, got.codes[i]);
      const double x = values[i] / scale;
      if (std::fabs(x) <= 6.0) {
        const double step = std::fabs(q) < 2 ? 0.5 : std::fabs(q) < 4 ? 1.0 : 2.0;
        ASSERT_LE(std::fabs(x - q), step / 2 * (1 + 1e-6)) << x << " " << q;
      } else {
        ASSERT_EQ(std::fabs(q), 6.0);
      }
    }
  }
}

TEST(QuantizeMatrix, LayoutsMatchBlockScalesAndRunTheGemm) {
  // A (m x k) blocks along rows, B (k x n) down columns; k = 40 leaves a partial block of 8.
  const std::int64_t m = 3, k = 40, n = 2;
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> unit(-4.0f, 4.0f);
  std::vector<std::uint32_t> a(m * k), b_col(k * n);  // b stored column major
  for (auto& v : a) v = bits(unit(rng));
  for (auto& v : b_col) v = bits(unit(rng));
  const ConstMatrixView av{
      reinterpret_cast<const unsigned char*>(a.data()), fp32, m, k, k, Layout::row_major};
  const ConstMatrixView bv{
      reinterpret_cast<const unsigned char*>(b_col.data()), fp32, k, n, k, Layout::column_major};
  const QuantizedMatrix qa = quantize_mx(av, e4m3, ScaledOperand::a);
  const QuantizedMatrix qb = quantize_mx(bv, e4m3, ScaledOperand::b);
  ASSERT_EQ(qa.scale_rows, m);
  ASSERT_EQ(qa.scale_cols, 2);
  ASSERT_EQ(qb.scale_rows, 2);
  ASSERT_EQ(qb.scale_cols, n);
  // Each block of the matrix is the block function's result on the same values.
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < 2; ++j) {
      const std::int64_t count = j == 0 ? 32 : 8;
      std::vector<std::uint8_t> codes(static_cast<std::size_t>(count));
      const std::span<const std::uint32_t> values(a.data() + i * k + j * 32,
                                                  static_cast<std::size_t>(count));
      EXPECT_EQ(qa.scales[i * 2 + j], quantize_mx_block(fp32, values, e4m3, codes));
      for (std::int64_t t = 0; t < count; ++t) {
        EXPECT_EQ(qa.codes[i * k + j * 32 + t], codes[t]);
      }
    }
  }
  for (std::int64_t c = 0; c < n; ++c) {
    for (std::int64_t j = 0; j < 2; ++j) {
      const std::int64_t count = j == 0 ? 32 : 8;
      std::vector<std::uint8_t> codes(static_cast<std::size_t>(count));
      const std::span<const std::uint32_t> values(b_col.data() + c * k + j * 32,
                                                  static_cast<std::size_t>(count));
      EXPECT_EQ(qb.scales[j * n + c], quantize_mx_block(fp32, values, e4m3, codes));
      for (std::int64_t t = 0; t < count; ++t) {
        EXPECT_EQ(qb.codes[(j * 32 + t) * n + c], codes[t]);
      }
    }
  }
  // Straight into the block-scaled GEMM; each d_ij is mma_element on the row, column and scales.
  const Datapath dp = preset("sm100", e4m3, fp32, "tcgen05.mxf8f6f4.block32");
  std::vector<std::uint32_t> d(m * n);
  const MatrixView dv{reinterpret_cast<unsigned char*>(d.data()), fp32, m, n, n, Layout::row_major};
  emulated_gemm(dp, GemmOptions{}, qa.code_view(), qb.code_view(), block_scales(qa, qb),
                std::nullopt, dv);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t c = 0; c < n; ++c) {
      std::vector<std::uint32_t> row, col, sa, sb;
      for (std::int64_t t = 0; t < k; ++t) {
        row.push_back(qa.codes[i * k + t]);
        col.push_back(qb.codes[t * n + c]);
      }
      for (std::int64_t j = 0; j < 2; ++j) {
        sa.push_back(qa.scales[i * 2 + j]);
        sb.push_back(qb.scales[j * n + c]);
      }
      EXPECT_EQ(d[i * n + c], mma_element(dp, row, col, 0, sa, sb));
    }
  }
  // NVFP4: the tensor scale comes from all of A.
  const QuantizedMatrix na = quantize_nvfp4(av, ScaledOperand::a);
  float amax = 0;
  for (const auto v : a) amax = std::max(amax, std::fabs(std::bit_cast<float>(v)));
  EXPECT_EQ(na.tensor_scale, bits(amax / 2688.0f));
  EXPECT_EQ(na.scale_cols, 3);  // ceil(40 / 16)
  EXPECT_EQ(na.scale_view().format, formats::ue4m3);
  EXPECT_EQ(na.code_view().format, e2m1);
}

}  // namespace
}  // namespace tcemu
