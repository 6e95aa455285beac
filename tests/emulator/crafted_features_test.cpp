// Crafted feature tests of the literature, each with its expected bit pattern per preset.
//
// Sources: Fasi, Higham, Mikaitis, Pranesh, "Numerical behavior of NVIDIA tensor cores" (PeerJ CS
// 7:e330, 2021) and their test program (github.com/north-numerical-computing/
// tensor-cores-numerical-behavior, sections A-D); Khattak and Mikaitis, "Generalized methodology
// for determining numerical features of hardware floating-point matrix multipliers" (HPEC 2025,
// github.com/faiziktk/IEEE_HPEC2025_block_FMA_tests, features F1-F9) and "Accurate Models of NVIDIA
// Tensor Cores" (arXiv 2512.07004); Li et al., "FTTN" (2024).
//
// Every expected pattern below is derived by hand from the semantics in datapath.hpp, never taken
// from the emulator's output:
//   - products are exact; a subnormal factor keeps its format's minimum exponent;
//   - top = max(alignment exponents of the nonzero products and c, alignment_floor);
//     the grid's last bit is 2^(top - nf); each term's magnitude is truncated to the grid;
//   - the truncated terms are summed exactly and rounded once: fp32 by RZ (24 bits, 14 for the
//     narrow fp8 block), fp16 by RN; blocks run in k order, each result the c of the next.
//
// The presets (presets.cpp), with nf = alignment fraction bits:
//
//   preset     fp16/bf16 block (instr. k)  tf32 block  nf      fp32 out / fp16 out
//   sm70       4 (4), fp16 only            -           23      RZ / RN
//   sm75       8 (8), fp16 only            -           24      RZ / RN
//   sm80/sm89  8 (16)                      4 (8)       24      RZ / RN
//   sm90/sm100 16 (16)                     8 (8)       25      RZ / RN
//   exact-rn   16 (16)                     8 (8)       exact   RN / RN, no floor, IEEE overflow
//   exact-rz   16 (16)                     8 (8)       exact   RZ / RZ, no floor, IEEE overflow
//   fp8: sm89 two 16-term blocks, sm90 mma.sync (fp32 out) and wgmma one 32-term block, all with
//   nf = 13 and results kept to 14 bits; sm100 tcgen05 one 32-term block, nf = 25; sm100
//   mma.sync: two interleaved 16-term halves (k = 0,1,4,5,... then 2,3,6,7,...) from 0, nf = 25,
//   c added after by a round-to-nearest addition; exact-rn/rz one exact 32-term block.
//
// Notation in the comments: u = 2^-23, the ulp of 1 in fp32; "grid -24" means the grid's last
// bit is 2^-24; "dropped" means truncated to zero by the alignment.

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <iomanip>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>

namespace tcemu {
namespace {

// ---------------------------------------------------------------------------------------------
// Inputs from values

// The bits of (-1)^negative * significand * 2^exponent in the container of `f`. consteval: a value
// that `f` cannot hold exactly (more significant bits than the format has, too large, below the
// smallest subnormal, or E4M3's NaN pattern) does not compile, so every input of this file is
// checked when it compiles.
consteval std::uint32_t encode(const FloatFormat& f, bool negative, std::uint64_t significand,
                               int exponent) {
  const std::uint32_t sign = negative ? f.sign_mask() : 0u;
  if (significand == 0) return sign << f.padding_bits;
  const int p = f.fraction_bits + 1;
  const std::uint64_t limit = std::uint64_t{1} << p;
  // Normalise to p bits: significand in [2^(p-1), 2^p), exponent the weight of its last bit.
  while (significand >= limit) {
    if ((significand & 1) != 0) throw "more significant bits than the format holds";
    significand >>= 1;
    ++exponent;
  }
  while (significand < limit / 2) {
    significand <<= 1;
    --exponent;
  }
  const int leading = exponent + p - 1;
  if (leading > f.max_exponent() ||
      (leading == f.max_exponent() && significand > f.max_significand())) {
    throw "too large for the format";
  }
  if (leading < f.min_exponent()) {
    // Subnormal: exponent field 0, the significand shifted to the minimum exponent.
    const int shift = f.min_exponent() - leading;
    if (shift >= p || (significand & ((std::uint64_t{1} << shift) - 1)) != 0) {
      throw "below the smallest subnormal of the format";
    }
    return (sign | static_cast<std::uint32_t>(significand >> shift)) << f.padding_bits;
  }
  const auto field = static_cast<std::uint32_t>(leading + f.bias());
  const auto fraction =
      static_cast<std::uint32_t>(significand) & ((std::uint32_t{1} << f.fraction_bits) - 1);
  return (sign | (field << f.fraction_bits) | fraction) << f.padding_bits;
}

consteval std::uint64_t magnitude(std::int64_t m) {
  return m < 0 ? static_cast<std::uint64_t>(-m) : static_cast<std::uint64_t>(m);
}

// m * 2^e (m signed; a zero m gives +0) in each format.
consteval std::uint32_t fp16_of(std::int64_t m, int e = 0) {
  return encode(formats::fp16, m < 0, magnitude(m), e);
}
consteval std::uint32_t bf16_of(std::int64_t m, int e = 0) {
  return encode(formats::bf16, m < 0, magnitude(m), e);
}
consteval std::uint32_t tf32_of(std::int64_t m, int e = 0) {
  return encode(formats::tf32, m < 0, magnitude(m), e);
}
consteval std::uint32_t fp32_of(std::int64_t m, int e = 0) {
  return encode(formats::fp32, m < 0, magnitude(m), e);
}
consteval std::uint32_t e4m3_of(std::int64_t m, int e = 0) {
  return encode(formats::e4m3, m < 0, magnitude(m), e);
}

// The encoder agrees with the IEEE 754 / OCP bit patterns written out by hand.
static_assert(fp16_of(1) == 0x3C00 && fp16_of(-2) == 0xC000 && fp16_of(65504) == 0x7BFF);
static_assert(fp16_of(1, -24) == 0x0001 && fp16_of(1, -14) == 0x0400);  // min subnormal, normal
static_assert(fp16_of(2047, -11) == 0x3BFF);                            // 1 - 2^-11
static_assert(bf16_of(3, -77) == 0x19C0 && bf16_of(1, 127) == 0x7F00);
static_assert(tf32_of(1) == 0x3F800000 && tf32_of(1025, -10) == 0x3F802000);
static_assert(fp32_of((1 << 24) - 1, -24) == 0x3F7FFFFF && fp32_of(1, -149) == 0x00000001);
static_assert(fp32_of((1 << 24) - 1, 104) == 0x7F7FFFFF);  // FLT_MAX
static_assert(e4m3_of(1) == 0x38 && e4m3_of(448) == 0x7E && e4m3_of(1, -9) == 0x01);

// Special encodings (not values, so written out).
constexpr std::uint32_t kFp16PlusZero = 0x0000, kFp16MinusZero = 0x8000;
constexpr std::uint32_t kFp16PlusInf = 0x7C00, kFp16MinusInf = 0xFC00, kFp16QuietNan = 0x7E00;
constexpr std::uint32_t kFp32PlusZero = 0x00000000, kFp32MinusZero = 0x80000000;
constexpr std::uint32_t kFp32PlusInf = 0x7F800000, kFp32MinusInf = 0xFF800000;
constexpr std::uint32_t kFp32QuietNan = 0x7FC00000;
constexpr std::uint32_t kE4m3Nan = 0x7F, kE4m3MinusNan = 0xFF;  // S.1111.111, E4M3 has no Inf
constexpr std::uint32_t kE5m2PlusInf = 0x7C, kE5m2One = 0x3C;
// The NaN every preset produces (Datapath::nan_bits): fp32 0x7FFFFFFF (MMA-Sim), fp16 0x7FFF.
constexpr std::uint32_t kFp32NanOut = 0x7FFFFFFF, kFp16NanOut = 0x7FFF;

// fp16 inputs used throughout.
constexpr std::uint32_t kH0 = fp16_of(0), kH1 = fp16_of(1), kHm1 = fp16_of(-1);
constexpr std::uint32_t kH2 = fp16_of(2), kH4 = fp16_of(4), kHalf = fp16_of(1, -1);
constexpr std::uint32_t kHTiny = fp16_of(1, -24);  // 2^-24, the smallest fp16 subnormal

// ---------------------------------------------------------------------------------------------
// Running a vector on presets

// An MMA result; printed in hex when a comparison fails.
struct Bits {
  std::uint32_t value;
  friend bool operator==(const Bits&, const Bits&) = default;
  friend std::ostream& operator<<(std::ostream& os, const Bits& b) {
    return os << "0x" << std::hex << std::uppercase << std::setw(8) << std::setfill('0') << b.value;
  }
};

// d = a . b + c for one output element.
struct Vector {
  std::vector<std::uint32_t> a;
  std::vector<std::uint32_t> b;
  std::uint32_t c;
};

// "sm90" or "sm90/wgmma": an architecture preset and its instruction path.
Datapath named(std::string_view key, const FloatFormat& input, const FloatFormat& accumulator) {
  const std::size_t slash = key.find('/');
  if (slash == std::string_view::npos) return preset(key, input, accumulator);
  return preset(key.substr(0, slash), input, accumulator, key.substr(slash + 1));
}

Bits run(const Datapath& dp, const Vector& v) {
  return Bits{mma_element(dp, v.a, v.b, v.c)};
}

struct Expected {
  std::string_view preset;
  std::uint32_t bits;
};

// Runs `v` on each listed preset and compares with the hand-derived bits.
void expect_per_preset(const FloatFormat& input, const FloatFormat& accumulator, const Vector& v,
                       std::initializer_list<Expected> rows) {
  for (const Expected& row : rows) {
    SCOPED_TRACE("preset " + std::string(row.preset) + " " + std::string(input.name) + " -> " +
                 std::string(accumulator.name));
    EXPECT_EQ(run(named(row.preset, input, accumulator), v), Bits{row.bits});
  }
}

// The presets with fp16 inputs (every architecture and the idealised ones), with bf16/tf32 inputs
// (sm80 on), and with E4M3 inputs.
constexpr std::array<std::string_view, 8> kFp16Presets = {"sm70", "sm75",  "sm80",     "sm89",
                                                          "sm90", "sm100", "exact-rn", "exact-rz"};
constexpr std::array<std::string_view, 6> kBf16Presets = {"sm80",  "sm89",     "sm90",
                                                          "sm100", "exact-rn", "exact-rz"};
constexpr std::array<std::string_view, 7> kE4m3Presets = {
    "sm89", "sm90", "sm90/wgmma", "sm100", "sm100/tcgen05", "exact-rn", "exact-rz"};

// Runs `v` on every preset of `presets`, all expected to give the same bits.
template <std::size_t N>
void expect_on_all(const std::array<std::string_view, N>& presets, const FloatFormat& input,
                   const FloatFormat& accumulator, const Vector& v, std::uint32_t expected) {
  for (std::string_view p : presets) {
    SCOPED_TRACE("preset " + std::string(p) + " " + std::string(input.name) + " -> " +
                 std::string(accumulator.name));
    EXPECT_EQ(run(named(p, input, accumulator), v), Bits{expected});
  }
}

// K terms: a_i = 0 and b_i = `b_fill`, to be filled in where a test needs a term.
Vector zeros(std::size_t k, std::uint32_t b_fill, std::uint32_t c) {
  return Vector{std::vector<std::uint32_t>(k, 0u), std::vector<std::uint32_t>(k, b_fill), c};
}

// ---------------------------------------------------------------------------------------------
// Fasi et al. 2021, section A: subnormal numbers

TEST(FasiSubnormals, Fp16SubnormalInputIsKept) {
  // a = 2^-24 (subnormal, aligns at fp16's minimum exponent -14), b = 4: the product 2^-22 is
  // exact (1 * 2^-24 times 1024 * 2^-8; lsb 2^-32 lies above every grid, whose last bit is
  // 2^(-12 - nf)). fp16 out: 2^-22 = 4 * 2^-24 is the subnormal 0x0004; fp32 out: 2^-22 is
  // normal, biased exponent 105: 0x34800000.
  const Vector v{{kHTiny}, {kH4}, 0};
  expect_on_all(kFp16Presets, formats::fp16, formats::fp16, v, 0x0004);
  expect_on_all(kFp16Presets, formats::fp16, formats::fp32, v, 0x34800000);
}

TEST(FasiSubnormals, Fp32SubnormalAccumulatorIsKept) {
  // Only c = 2^-149 is nonzero. Its alignment exponent is fp32's minimum -126, the grid's last bit
  // 2^(-126 - nf) <= 2^-149, so c passes unchanged: 0x00000001.
  const Vector v{{kH0}, {kH0}, fp32_of(1, -149)};
  expect_on_all(kFp16Presets, formats::fp16, formats::fp32, v, 0x00000001);
}

TEST(FasiSubnormals, Fp16SubnormalOutputIsProduced) {
  // 2^-14 * 2^-1 = 2^-15, below fp16's smallest normal: the subnormal 512 * 2^-24 = 0x0200 (no
  // flush to zero). Second vector: 2^-14 * 1 + c, c = -2^-15 (itself subnormal) = 2^-15 again,
  // exact on every grid (last bit <= 2^-37). In fp32, 2^-15 is 0x38000000.
  const Vector product{{fp16_of(1, -14)}, {kHalf}, 0};
  const Vector difference16{{fp16_of(1, -14)}, {kH1}, fp16_of(-1, -15)};
  const Vector difference32{{fp16_of(1, -14)}, {kH1}, fp32_of(-1, -15)};
  expect_on_all(kFp16Presets, formats::fp16, formats::fp16, product, 0x0200);
  expect_on_all(kFp16Presets, formats::fp16, formats::fp16, difference16, 0x0200);
  expect_on_all(kFp16Presets, formats::fp16, formats::fp32, product, 0x38000000);
  expect_on_all(kFp16Presets, formats::fp16, formats::fp32, difference32, 0x38000000);
}

// ---------------------------------------------------------------------------------------------
// Fasi et al., section B: accuracy of the dot products

TEST(FasiProducts, ProductsAreExact) {
  // x = 1 - 2^-11 (0x3BFF). x * x = 1 - 2^-10 + 2^-22 exactly (22 significant bits, lsb 2^-22);
  // top = -2, the grid's last bit 2^(-2 - nf) <= 2^-25, so nothing is dropped. In fp32: exponent
  // -1 (biased 126), significand (2^24 - 2^14 + 4) * 2^-24, fraction 0x7FC004: 0x3F7FC004.
  // Four such products: 4 - 2^-8 + 2^-20, exponent 1, the same fraction: 0x407FC004.
  const std::uint32_t x = fp16_of(2047, -11);
  expect_on_all(kFp16Presets, formats::fp16, formats::fp32, Vector{{x}, {x}, 0}, 0x3F7FC004);
  expect_on_all(kFp16Presets, formats::fp16, formats::fp32, Vector{{x, x, x, x}, {x, x, x, x}, 0},
                0x407FC004);
  // fp16 out: x * x + x * 2^-11 = 1 - 2^-10 + 2^-22 + 2^-11 - 2^-22 = 1 - 2^-11 exactly (the
  // second product's lsb 2^-32 is above the grid's 2^(-2 - nf)), which is x itself: 0x3BFF.
  expect_on_all(kFp16Presets, formats::fp16, formats::fp16, Vector{{x, x}, {x, fp16_of(1, -11)}, 0},
                0x3BFF);
}

TEST(FasiProducts, SmallProductsBelowTheGridAreDropped) {
  // "Products are accumulated in binary32": c = 1 fixes top = 0 and the grid at 2^-nf.
  // V100 vector, four products 1 * 2^-24: nf = 23 drops them: 1 = 0x3F800000; nf >= 24 and the
  // exact presets keep them: 1 + 4 * 2^-24 = 1 + 2u = 0x3F800002.
  const Vector v100{{kH1, kH1, kH1, kH1}, {kHTiny, kHTiny, kHTiny, kHTiny}, fp32_of(1)};
  expect_per_preset(formats::fp16, formats::fp32, v100,
                    {{"sm70", 0x3F800000},
                     {"sm75", 0x3F800002},
                     {"sm80", 0x3F800002},
                     {"sm89", 0x3F800002},
                     {"sm90", 0x3F800002},
                     {"sm100", 0x3F800002},
                     {"exact-rn", 0x3F800002},
                     {"exact-rz", 0x3F800002}});
  // T4/A100 vector, four products 0.5 * 2^-24 = 2^-25: dropped for nf <= 24 (0x3F800000); kept
  // for nf = 25 and exact: 1 + 4 * 2^-25 = 1 + u = 0x3F800001.
  const Vector a100{{kHalf, kHalf, kHalf, kHalf}, {kHTiny, kHTiny, kHTiny, kHTiny}, fp32_of(1)};
  expect_per_preset(formats::fp16, formats::fp32, a100,
                    {{"sm70", 0x3F800000},
                     {"sm75", 0x3F800000},
                     {"sm80", 0x3F800000},
                     {"sm89", 0x3F800000},
                     {"sm90", 0x3F800001},
                     {"sm100", 0x3F800001},
                     {"exact-rn", 0x3F800001},
                     {"exact-rz", 0x3F800001}});
}

TEST(FasiProducts, ResultDoesNotDependOnWhereTheLargestTermIs) {
  // "Sum starts from the largest element": c = 2^-24, three products 1 * 2^-24 and one 1 * 1 at
  // position j. top = 0 whatever j is. nf = 23 drops every 2^-24: 0x3F800000; nf >= 24 and exact
  // keep them: 1 + 4 * 2^-24 = 0x3F800002.
  for (std::size_t j = 0; j < 4; ++j) {
    SCOPED_TRACE("the 1 * 1 product at k = " + std::to_string(j));
    Vector v{{kH1, kH1, kH1, kH1}, {kHTiny, kHTiny, kHTiny, kHTiny}, fp32_of(1, -24)};
    v.b[j] = kH1;
    expect_per_preset(formats::fp16, formats::fp32, v,
                      {{"sm70", 0x3F800000},
                       {"sm75", 0x3F800002},
                       {"sm80", 0x3F800002},
                       {"sm89", 0x3F800002},
                       {"sm90", 0x3F800002},
                       {"sm100", 0x3F800002},
                       {"exact-rn", 0x3F800002},
                       {"exact-rz", 0x3F800002}});
  }
}

// ---------------------------------------------------------------------------------------------
// Fasi et al., section C, and Khattak-Mikaitis: rounding of the block result

TEST(FasiRounding, Fp32OutputIsTruncated) {
  // 1 * 2 + 1 * 3*2^-24: exact 2 + 0.75 ulp(2). top = 1, grid 1 - nf: nf = 23 drops 3*2^-24,
  // nf = 24 keeps 2^-23 of it, nf = 25 keeps it all; RZ gives 2 (0x40000000) in every case.
  // exact-rz: 2; exact-rn: 0.75 ulp rounds up to 2 + 2^-22 = 0x40000001. Negated likewise.
  const Vector pos{{kH1, kH1}, {kH2, fp16_of(3, -24)}, 0};
  const Vector neg{{kH1, kH1}, {fp16_of(-2), fp16_of(-3, -24)}, 0};
  expect_per_preset(formats::fp16, formats::fp32, pos,
                    {{"sm70", 0x40000000},
                     {"sm75", 0x40000000},
                     {"sm80", 0x40000000},
                     {"sm89", 0x40000000},
                     {"sm90", 0x40000000},
                     {"sm100", 0x40000000},
                     {"exact-rn", 0x40000001},
                     {"exact-rz", 0x40000000}});
  expect_per_preset(formats::fp16, formats::fp32, neg,
                    {{"sm70", 0xC0000000},
                     {"sm75", 0xC0000000},
                     {"sm80", 0xC0000000},
                     {"sm89", 0xC0000000},
                     {"sm90", 0xC0000000},
                     {"sm100", 0xC0000000},
                     {"exact-rn", 0xC0000001},
                     {"exact-rz", 0xC0000000}});
}

TEST(FasiRounding, Fp16OutputIsRoundedToNearest) {
  // 2^-24 * 2^-1 + 2^-24 * 2^-2 = 0.75 * 2^-24, exact on every grid (top = -15). RN to fp16
  // gives the smallest subnormal 0x0001; RZ (exact-rz) gives +0.
  const Vector v{{kHTiny, kHTiny}, {kHalf, fp16_of(1, -2)}, kFp16PlusZero};
  expect_per_preset(formats::fp16, formats::fp16, v,
                    {{"sm70", 0x0001},
                     {"sm75", 0x0001},
                     {"sm80", 0x0001},
                     {"sm89", 0x0001},
                     {"sm90", 0x0001},
                     {"sm100", 0x0001},
                     {"exact-rn", 0x0001},
                     {"exact-rz", 0x0000}});
}

TEST(KhattakMikaitis, F5FinalRoundingOfFp32OutputIsRz) {
  // a = b = (1, 1, 1), c = 1 + u + 2u: exact 4 + 3u = 4 + 0.75 ulp(4), all on every grid (top 0).
  // RZ: 4 = 0x40800000; RN (exact-rn): 4 + 2^-21 = 0x40800001. Negated (a and c): the same
  // magnitudes with the sign bit.
  const Vector pos{{kH1, kH1, kH1}, {kH1, kH1, kH1}, fp32_of((1 << 23) + 3, -23)};
  const Vector neg{{kHm1, kHm1, kHm1}, {kH1, kH1, kH1}, fp32_of(-((1 << 23) + 3), -23)};
  expect_per_preset(formats::fp16, formats::fp32, pos,
                    {{"sm70", 0x40800000},
                     {"sm75", 0x40800000},
                     {"sm80", 0x40800000},
                     {"sm89", 0x40800000},
                     {"sm90", 0x40800000},
                     {"sm100", 0x40800000},
                     {"exact-rn", 0x40800001},
                     {"exact-rz", 0x40800000}});
  expect_per_preset(formats::fp16, formats::fp32, neg,
                    {{"sm70", 0xC0800000},
                     {"sm75", 0xC0800000},
                     {"sm80", 0xC0800000},
                     {"sm89", 0xC0800000},
                     {"sm90", 0xC0800000},
                     {"sm100", 0xC0800000},
                     {"exact-rn", 0xC0800001},
                     {"exact-rz", 0xC0800000}});
}

TEST(KhattakMikaitis, F6FinalRoundingOfFp16OutputIsRn) {
  // fp16 out: c = 1 + 2^-10 + 2^-9 (0x3C03), a = b = (1, 1, 1): 4 + 3 * 2^-10 = 4 + 0.75 ulp(4)
  // in fp16 (ulp 2^-8). RN: 4 + 2^-8 = 0x4401; RZ (exact-rz): 4 = 0x4400. Negated likewise.
  const Vector pos{{kH1, kH1, kH1}, {kH1, kH1, kH1}, fp16_of(1027, -10)};
  const Vector neg{{kHm1, kHm1, kHm1}, {kH1, kH1, kH1}, fp16_of(-1027, -10)};
  static_assert(fp16_of(1027, -10) == 0x3C03);
  expect_per_preset(formats::fp16, formats::fp16, pos,
                    {{"sm70", 0x4401},
                     {"sm75", 0x4401},
                     {"sm80", 0x4401},
                     {"sm89", 0x4401},
                     {"sm90", 0x4401},
                     {"sm100", 0x4401},
                     {"exact-rn", 0x4401},
                     {"exact-rz", 0x4400}});
  expect_per_preset(formats::fp16, formats::fp16, neg,
                    {{"sm70", 0xC401},
                     {"sm75", 0xC401},
                     {"sm80", 0xC401},
                     {"sm89", 0xC401},
                     {"sm90", 0xC401},
                     {"sm100", 0xC401},
                     {"exact-rn", 0xC401},
                     {"exact-rz", 0xC400}});
}

// ---------------------------------------------------------------------------------------------
// Extra alignment bits: Fasi et al. D1, Khattak-Mikaitis F1, FTTN

TEST(FasiAccumulator, ExtraAlignmentBitWithCJustAboveMinusOne) {
  // a = b = 1, c = -(1 - 2^-24) = -(2^24 - 1) * 2^-24 (alignment exponent -1). top = 0.
  // nf = 23, grid -23: c's magnitude truncates to 1 - 2^-23, d = 2^-23 = 0x34000000 (V100).
  // nf >= 24 and exact: c is kept, d = 2^-24 = 0x33800000 (T4, A100).
  const Vector v{{kH1}, {kH1}, fp32_of(-((1 << 24) - 1), -24)};
  expect_per_preset(formats::fp16, formats::fp32, v,
                    {{"sm70", 0x34000000},
                     {"sm75", 0x33800000},
                     {"sm80", 0x33800000},
                     {"sm89", 0x33800000},
                     {"sm90", 0x33800000},
                     {"sm100", 0x33800000},
                     {"exact-rn", 0x33800000},
                     {"exact-rz", 0x33800000}});
}

TEST(KhattakMikaitis, F1ExtraAlignmentBits) {
  // c = 1 fixes top = 0, the grid at 2^-nf, nf - 23 extra bits.
  // One-bit test: two products 2^-24 * 1. Kept iff nf >= 24: 1 + 2u = 0x3F800001, else 1.
  const Vector one_bit16{{kHTiny, kHTiny}, {kH1, kH1}, fp32_of(1)};
  expect_per_preset(formats::fp16, formats::fp32, one_bit16,
                    {{"sm70", 0x3F800000},
                     {"sm75", 0x3F800001},
                     {"sm80", 0x3F800001},
                     {"sm89", 0x3F800001},
                     {"sm90", 0x3F800001},
                     {"sm100", 0x3F800001},
                     {"exact-rn", 0x3F800001},
                     {"exact-rz", 0x3F800001}});
  // Two-bit test: 2^-24 + 2^-25 + 2^-25 = u. nf = 23 drops all (1); nf = 24 keeps 2^-24 only,
  // 1 + 2^-24 truncates to 1; nf = 25 and exact keep all: 1 + u = 0x3F800001.
  const Vector two_bits16{{kHTiny, kHTiny, kHTiny}, {kH1, kHalf, kHalf}, fp32_of(1)};
  expect_per_preset(formats::fp16, formats::fp32, two_bits16,
                    {{"sm70", 0x3F800000},
                     {"sm75", 0x3F800000},
                     {"sm80", 0x3F800000},
                     {"sm89", 0x3F800000},
                     {"sm90", 0x3F800001},
                     {"sm100", 0x3F800001},
                     {"exact-rn", 0x3F800001},
                     {"exact-rz", 0x3F800001}});
  // Three-bit test (the same pattern one bit further): 2^-24 + 2^-25 + 2^-26 + 2^-26 = u.
  // nf = 25 drops the 2^-26 terms and 1 + 3 * 2^-25 truncates to 1; no preset has a third extra
  // bit, only the exact ones give 1 + u.
  const Vector three_bits16{
      {kHTiny, kHTiny, kHTiny, kHTiny}, {kH1, kHalf, fp16_of(1, -2), fp16_of(1, -2)}, fp32_of(1)};
  expect_per_preset(formats::fp16, formats::fp32, three_bits16,
                    {{"sm70", 0x3F800000},
                     {"sm75", 0x3F800000},
                     {"sm80", 0x3F800000},
                     {"sm89", 0x3F800000},
                     {"sm90", 0x3F800000},
                     {"sm100", 0x3F800000},
                     {"exact-rn", 0x3F800001},
                     {"exact-rz", 0x3F800001}});
  // The same three vectors in bf16 (2^-24 is normal there; nothing else changes).
  const std::uint32_t t = bf16_of(1, -24), one = bf16_of(1), half = bf16_of(1, -1),
                      quarter = bf16_of(1, -2);
  expect_per_preset(formats::bf16, formats::fp32, Vector{{t, t}, {one, one}, fp32_of(1)},
                    {{"sm80", 0x3F800001},
                     {"sm89", 0x3F800001},
                     {"sm90", 0x3F800001},
                     {"sm100", 0x3F800001},
                     {"exact-rn", 0x3F800001},
                     {"exact-rz", 0x3F800001}});
  expect_per_preset(formats::bf16, formats::fp32, Vector{{t, t, t}, {one, half, half}, fp32_of(1)},
                    {{"sm80", 0x3F800000},
                     {"sm89", 0x3F800000},
                     {"sm90", 0x3F800001},
                     {"sm100", 0x3F800001},
                     {"exact-rn", 0x3F800001},
                     {"exact-rz", 0x3F800001}});
  expect_per_preset(formats::bf16, formats::fp32,
                    Vector{{t, t, t, t}, {one, half, quarter, quarter}, fp32_of(1)},
                    {{"sm80", 0x3F800000},
                     {"sm89", 0x3F800000},
                     {"sm90", 0x3F800000},
                     {"sm100", 0x3F800000},
                     {"exact-rn", 0x3F800001},
                     {"exact-rz", 0x3F800001}});
}

TEST(Fttn, ExtraBitsVector) {
  // a = 1, b = 1.25, c = -(2^-3 + 2^-25) = -(2^22 + 1) * 2^-25: exact d = 1.125 - 2^-25.
  // top = 0, grid -nf. nf <= 24: c's 2^-25 bit is dropped, d = 1.125 = 0x3F900000.
  // nf = 25: c is kept, d = 1.125 - 2^-25, RZ to fp32 (ulp u): 1.125 - u = 0x3F8FFFFF.
  // exact-rz: 0x3F8FFFFF; exact-rn: 2^-25 is a quarter ulp below 1.125, so 0x3F900000.
  // (FTTN, Li et al. 2024: 0x3F900000 with one extra bit, 0x3F8FFFFF with two or three.)
  const std::uint32_t c = fp32_of(-((1 << 22) + 1), -25);
  static_assert(fp32_of(-((1 << 22) + 1), -25) == 0xBE000002);
  expect_per_preset(formats::fp16, formats::fp32, Vector{{kH1}, {fp16_of(5, -2)}, c},
                    {{"sm70", 0x3F900000},
                     {"sm75", 0x3F900000},
                     {"sm80", 0x3F900000},
                     {"sm89", 0x3F900000},
                     {"sm90", 0x3F8FFFFF},
                     {"sm100", 0x3F8FFFFF},
                     {"exact-rn", 0x3F900000},
                     {"exact-rz", 0x3F8FFFFF}});
  expect_per_preset(formats::bf16, formats::fp32, Vector{{bf16_of(1)}, {bf16_of(5, -2)}, c},
                    {{"sm80", 0x3F900000},
                     {"sm89", 0x3F900000},
                     {"sm90", 0x3F8FFFFF},
                     {"sm100", 0x3F8FFFFF},
                     {"exact-rn", 0x3F900000},
                     {"exact-rz", 0x3F8FFFFF}});
}

TEST(KhattakMikaitis, F7AlignmentTruncatesTowardZero) {
  // c = +-1, two products 2^-24 * 1.5 * 2^-(nf-23): each is 0.75 of the grid's last bit 2^-nf.
  // Truncation drops both: +-1 (0x3F800000 / 0xBF800000). Rounding to nearest at the alignment
  // would give 1 + 2^(1-nf). The exact presets, given the nf = 23 vector (b = 1.5), keep
  // 1 + 3 * 2^-24 = 1 + 1.5u: RZ 1 + u (0x3F800001), RN ties to even 1 + 2u (0x3F800002).
  struct Row {
    std::string_view preset;
    std::uint32_t b;  // 1.5 * 2^-(nf - 23)
    std::uint32_t positive;
    std::uint32_t negative;
  };
  const std::uint32_t b23 = fp16_of(3, -1), b24 = fp16_of(3, -2), b25 = fp16_of(3, -3);
  for (const Row& r :
       {Row{"sm70", b23, 0x3F800000, 0xBF800000}, Row{"sm75", b24, 0x3F800000, 0xBF800000},
        Row{"sm80", b24, 0x3F800000, 0xBF800000}, Row{"sm89", b24, 0x3F800000, 0xBF800000},
        Row{"sm90", b25, 0x3F800000, 0xBF800000}, Row{"sm100", b25, 0x3F800000, 0xBF800000},
        Row{"exact-rn", b23, 0x3F800002, 0xBF800002},
        Row{"exact-rz", b23, 0x3F800001, 0xBF800001}}) {
    SCOPED_TRACE(std::string(r.preset));
    const Datapath dp = preset(r.preset, formats::fp16, formats::fp32);
    EXPECT_EQ(run(dp, Vector{{kHTiny, kHTiny}, {r.b, r.b}, fp32_of(1)}), Bits{r.positive});
    const std::uint32_t minus_tiny = fp16_of(-1, -24);
    EXPECT_EQ(run(dp, Vector{{minus_tiny, minus_tiny}, {r.b, r.b}, fp32_of(-1)}), Bits{r.negative});
  }
}

// ---------------------------------------------------------------------------------------------
// Normalisation: Fasi et al. D2, D3; Khattak-Mikaitis F4

TEST(FasiAccumulator, NoNormalisationInAddition) {
  // c = 1 - 2^-24 (top = -1, grid -1 - nf <= -24), four products 1 * 2^-24: all kept, the exact
  // sum 1 + 3 * 2^-24 = 1 + 1.5u is normalised once: RZ 1 + u = 0x3F800001 (V100, T4, A100).
  // A normalisation after c + the first product (= 1) would have dropped the rest. exact-rn ties
  // to even: 1 + 2u = 0x3F800002.
  const Vector v{
      {kH1, kH1, kH1, kH1}, {kHTiny, kHTiny, kHTiny, kHTiny}, fp32_of((1 << 24) - 1, -24)};
  expect_per_preset(formats::fp16, formats::fp32, v,
                    {{"sm70", 0x3F800001},
                     {"sm75", 0x3F800001},
                     {"sm80", 0x3F800001},
                     {"sm89", 0x3F800001},
                     {"sm90", 0x3F800001},
                     {"sm100", 0x3F800001},
                     {"exact-rn", 0x3F800002},
                     {"exact-rz", 0x3F800001}});
}

TEST(FasiAccumulator, NormalisationInSubtraction) {
  // 1 * 1 + 1 * (-2^-24) + c, c = -(1 - 2^-24): exactly 0. top = 0.
  // nf = 23: c truncates to -(1 - 2^-23) and -2^-24 to 0, leaving 2^-23 = 0x34000000 (V100).
  // nf >= 24 and exact: everything is kept, the exact zero of mixed-sign terms is +0 (T4, A100).
  const Vector v{{kH1, kH1}, {kH1, fp16_of(-1, -24)}, fp32_of(-((1 << 24) - 1), -24)};
  expect_per_preset(formats::fp16, formats::fp32, v,
                    {{"sm70", 0x34000000},
                     {"sm75", kFp32PlusZero},
                     {"sm80", kFp32PlusZero},
                     {"sm89", kFp32PlusZero},
                     {"sm90", kFp32PlusZero},
                     {"sm100", kFp32PlusZero},
                     {"exact-rn", kFp32PlusZero},
                     {"exact-rz", kFp32PlusZero}});
}

TEST(KhattakMikaitis, F4NormalisationIsDelayedToTheEndOfTheBlock) {
  // HPEC'25 normalisation-pattern vector with t = 3: c = 1 - 2^-21 (top = -1), two products
  // (2^-21 + 2^-24) * 1 (fp16 subnormal 9 * 2^-24). Grid -1 - nf <= -24: all exact, sum
  // 1 + 2^-21 + 2^-23 = 1 + 5u = 0x3F800005 ("delayed/late normalisation"). Normalising after
  // each addition would give 1 + 2^-21 = 0x3F800004.
  const std::uint32_t p = fp16_of(9, -24);
  const Vector v{{p, p}, {kH1, kH1}, fp32_of((1 << 21) - 1, -21)};
  expect_on_all(kFp16Presets, formats::fp16, formats::fp32, v, 0x3F800005);
}

// ---------------------------------------------------------------------------------------------
// Carry bits: Fasi et al. D4, Khattak-Mikaitis F2

TEST(FasiAccumulator, CarryOutOfTwoAndFour) {
  // c = 1 + 3u (0x3F800003), products 1, 1, 1 and 1 * 2^-23 in any position: the sum passes 2
  // and 4, exactly 4 + 4u = 4 + 2^-21, representable: 0x40800001 everywhere (top = 0, all terms
  // on every grid).
  for (std::size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE("the 2^-23 product at k = " + std::to_string(i));
    Vector v{{kH1, kH1, kH1, kH1}, {kH1, kH1, kH1, kH1}, fp32_of((1 << 23) + 3, -23)};
    v.b[i] = fp16_of(1, -23);
    expect_on_all(kFp16Presets, formats::fp16, formats::fp32, v, 0x40800001);
  }
}

TEST(FasiAccumulator, ThreeCarryBits) {
  // 1 + 1.5 + 1.75 + 1.875 + c, c = 1.875: exactly 8 = 0x41000000 (the sum of five terms below
  // 2 needs three carry bits above the leading bit).
  const Vector v{{kH1, kH1, kH1, kH1},
                 {kH1, fp16_of(3, -1), fp16_of(7, -2), fp16_of(15, -3)},
                 fp32_of(15, -3)};
  expect_on_all(kFp16Presets, formats::fp16, formats::fp32, v, 0x41000000);
}

TEST(FasiAccumulator, TruncationWhenTheCarryNormalises) {
  // a = b = (1, 1, 1, 1), c = 1 + 3u: exactly 5 + 3u = 5 + 0.75 ulp(5). RZ: 5 = 0x40A00000, RN
  // (exact-rn) 5 + 2^-21 = 0x40A00001. Negated (b = -1, c = -(1 + 3u)): sign bit added.
  const Vector pos{{kH1, kH1, kH1, kH1}, {kH1, kH1, kH1, kH1}, fp32_of((1 << 23) + 3, -23)};
  const Vector neg{{kH1, kH1, kH1, kH1}, {kHm1, kHm1, kHm1, kHm1}, fp32_of(-((1 << 23) + 3), -23)};
  expect_per_preset(formats::fp16, formats::fp32, pos,
                    {{"sm70", 0x40A00000},
                     {"sm75", 0x40A00000},
                     {"sm80", 0x40A00000},
                     {"sm89", 0x40A00000},
                     {"sm90", 0x40A00000},
                     {"sm100", 0x40A00000},
                     {"exact-rn", 0x40A00001},
                     {"exact-rz", 0x40A00000}});
  expect_per_preset(formats::fp16, formats::fp32, neg,
                    {{"sm70", 0xC0A00000},
                     {"sm75", 0xC0A00000},
                     {"sm80", 0xC0A00000},
                     {"sm89", 0xC0A00000},
                     {"sm90", 0xC0A00000},
                     {"sm100", 0xC0A00000},
                     {"exact-rn", 0xC0A00001},
                     {"exact-rz", 0xC0A00000}});
}

TEST(KhattakMikaitis, F2CarriesOfAFullBlock) {
  // A full block of products 1.875 * 1 plus c = 1.875: (n + 1) * 1.875, exact and representable.
  // n = 4: 9.375 = 1.001011b * 2^3 = 0x41160000; n = 8: 16.875 = 1.0000111b * 2^4 = 0x41870000;
  // n = 16: 31.875 = 1.1111111b * 2^4 = 0x41FF0000.
  struct Row {
    std::string_view preset;
    std::size_t n;  // block_terms
    std::uint32_t expected;
  };
  for (const Row& r :
       {Row{"sm70", 4, 0x41160000}, Row{"sm75", 8, 0x41870000}, Row{"sm80", 8, 0x41870000},
        Row{"sm89", 8, 0x41870000}, Row{"sm90", 16, 0x41FF0000}, Row{"sm100", 16, 0x41FF0000},
        Row{"exact-rn", 16, 0x41FF0000}, Row{"exact-rz", 16, 0x41FF0000}}) {
    SCOPED_TRACE(std::string(r.preset));
    const Vector v{std::vector<std::uint32_t>(r.n, fp16_of(15, -3)),
                   std::vector<std::uint32_t>(r.n, kH1), fp32_of(15, -3)};
    EXPECT_EQ(run(preset(r.preset, formats::fp16, formats::fp32), v), Bits{r.expected});
  }
}

// ---------------------------------------------------------------------------------------------
// Monotonicity: Fasi et al. D5

TEST(FasiAccumulator, MonotonicityFailsOnTheV100AndA100Vectors) {
  // The same products with c = 1 - 2^-24 and then with the larger c = 1; the truncating datapath
  // can give a smaller result for the larger c, because c = 1 moves the grid up one bit.
  struct Row {
    std::string_view preset;
    std::uint32_t below_one;  // d with c = 1 - 2^-24
    std::uint32_t one;        // d with c = 1
  };
  const std::uint32_t c_below = fp32_of((1 << 24) - 1, -24), c_one = fp32_of(1);
  // V100 vector: four products 1 * 2^-24.
  // c = 1 - 2^-24 (grid -1 - nf): all kept, 1 + 1.5u: RZ 0x3F800001 (exact-rn: 0x3F800002).
  // c = 1 (grid -nf): nf = 23 drops them: 0x3F800000 < 0x3F800001, the decrease of the V100;
  // nf >= 24 keeps them: 1 + 2u = 0x3F800002.
  const Vector v100{{kH1, kH1, kH1, kH1}, {kHTiny, kHTiny, kHTiny, kHTiny}, 0};
  // A100 vector: products 0.5 * 2^-24 (three) and 0.5 * 3 * 2^-24, in all 3 * 2^-24.
  // c = 1 - 2^-24: nf = 23 (grid -24) keeps only 2^-24 of the last: 1 = 0x3F800000; nf >= 24
  // keeps all: 1 + 2^-23 = 0x3F800001.
  // c = 1: nf = 23 drops all: 0x3F800000; nf = 24 (grid -24) keeps 2^-24: 1 + 2^-24 truncates
  // to 1 = 0x3F800000 < 0x3F800001, the decrease of the T4/A100; nf = 25 keeps all: 1 + 1.5u,
  // RZ 0x3F800001 (exact-rn 0x3F800002).
  const Vector a100{{kHalf, kHalf, kHalf, kHalf}, {kHTiny, kHTiny, kHTiny, fp16_of(3, -24)}, 0};
  const std::initializer_list<Row> v100_rows = {
      {"sm70", 0x3F800001, 0x3F800000},     {"sm75", 0x3F800001, 0x3F800002},
      {"sm80", 0x3F800001, 0x3F800002},     {"sm89", 0x3F800001, 0x3F800002},
      {"sm90", 0x3F800001, 0x3F800002},     {"sm100", 0x3F800001, 0x3F800002},
      {"exact-rn", 0x3F800002, 0x3F800002}, {"exact-rz", 0x3F800001, 0x3F800002}};
  const std::initializer_list<Row> a100_rows = {
      {"sm70", 0x3F800000, 0x3F800000},     {"sm75", 0x3F800001, 0x3F800000},
      {"sm80", 0x3F800001, 0x3F800000},     {"sm89", 0x3F800001, 0x3F800000},
      {"sm90", 0x3F800001, 0x3F800001},     {"sm100", 0x3F800001, 0x3F800001},
      {"exact-rn", 0x3F800001, 0x3F800002}, {"exact-rz", 0x3F800001, 0x3F800001}};
  const auto check = [&](const char* label, const Vector& vector, std::initializer_list<Row> rows) {
    for (const Row& r : rows) {
      SCOPED_TRACE(std::string(r.preset) + " " + label);
      const Datapath dp = preset(r.preset, formats::fp16, formats::fp32);
      Vector v = vector;
      v.c = c_below;
      EXPECT_EQ(run(dp, v), Bits{r.below_one});
      v.c = c_one;
      EXPECT_EQ(run(dp, v), Bits{r.one});
    }
  };
  check("V100 vector", v100, v100_rows);
  check("A100 vector", a100, a100_rows);
}

TEST(FasiAccumulator, MonotonicityFailsOnEveryTruncatingPreset) {
  // Adapted to each preset: a full block of n = 2^(nf - 21) products 2^-12 * 2^-(nf - 11) =
  // 2^-(nf + 1) (n = 4, 8, 16 for nf = 23, 24, 25: exactly the block sizes).
  // c = 1 - 2^-24: top = -1, grid -(nf + 1), all kept: 1 - 2^-24 + n * 2^-(nf+1) = 1 - 2^-24 +
  // 2^-22 = 1 + 1.5u, RZ 1 + u = 0x3F800001.
  // c = 1 (larger): top = 0, grid -nf, every product dropped: 1 = 0x3F800000, smaller.
  // The exact presets on the nf = 25 vector: 1 + 1.5u (RZ 0x3F800001, RN ties to even
  // 0x3F800002) and then 1 + 2^-22 = 0x3F800002: monotone.
  struct Row {
    std::string_view preset;
    std::size_t n;
    std::uint32_t b;  // 2^-(nf - 11)
    std::uint32_t below_one;
    std::uint32_t one;
  };
  const std::uint32_t b23 = fp16_of(1, -12), b24 = fp16_of(1, -13), b25 = fp16_of(1, -14);
  for (const Row& r :
       {Row{"sm70", 4, b23, 0x3F800001, 0x3F800000}, Row{"sm75", 8, b24, 0x3F800001, 0x3F800000},
        Row{"sm80", 8, b24, 0x3F800001, 0x3F800000}, Row{"sm89", 8, b24, 0x3F800001, 0x3F800000},
        Row{"sm90", 16, b25, 0x3F800001, 0x3F800000}, Row{"sm100", 16, b25, 0x3F800001, 0x3F800000},
        Row{"exact-rn", 16, b25, 0x3F800002, 0x3F800002},
        Row{"exact-rz", 16, b25, 0x3F800001, 0x3F800002}}) {
    SCOPED_TRACE(std::string(r.preset));
    const Datapath dp = preset(r.preset, formats::fp16, formats::fp32);
    Vector v{std::vector<std::uint32_t>(r.n, fp16_of(1, -12)), std::vector<std::uint32_t>(r.n, r.b),
             fp32_of((1 << 24) - 1, -24)};
    EXPECT_EQ(run(dp, v), Bits{r.below_one});
    v.c = fp32_of(1);
    EXPECT_EQ(run(dp, v), Bits{r.one});
  }
}

// ---------------------------------------------------------------------------------------------
// Block size: Khattak-Mikaitis F3 (fp16/bf16) and F8 (tf32)

// c = 1 + u, a_0 * b_0 = 1 and a small product s at index k - 1 (1-based k = 2..K), all else 0.
// Same block as a_0: exactly 2 + 2u = 2 + 2^-22, representable: 0x40000001.
// Next block: the first block gives 2 + u, RZ to 2 (ulp 2^-22); the block holding s has top = 1
// and grid 1 - nf, and 2 + s truncates to 2 again: 0x40000000. Negating a and c flips the sign.
// For the exact presets the first instruction gives 2 + u, RZ 2 and RN ties to even 2: the same.
void expect_block_size(const FloatFormat& input, std::string_view preset_name,
                       std::size_t block_terms, std::size_t k_max, std::uint32_t one,
                       std::uint32_t minus_one, std::uint32_t small, std::uint32_t minus_small) {
  const Datapath dp = preset(preset_name, input, formats::fp32);
  for (std::size_t k = 2; k <= k_max; ++k) {
    SCOPED_TRACE(std::string(preset_name) + " " + std::string(input.name) +
                 ", small term at k = " + std::to_string(k));
    const bool same_block = k <= block_terms;
    Vector pos = zeros(k_max, one, fp32_of((1 << 23) + 1, -23));
    pos.a[0] = one;
    pos.a[k - 1] = small;
    EXPECT_EQ(run(dp, pos), Bits{same_block ? 0x40000001u : 0x40000000u});
    Vector neg = zeros(k_max, one, fp32_of(-((1 << 23) + 1), -23));
    neg.a[0] = minus_one;
    neg.a[k - 1] = minus_small;
    EXPECT_EQ(run(dp, neg), Bits{same_block ? 0xC0000001u : 0xC0000000u});
  }
}

TEST(KhattakMikaitis, F3BlockSizeFp16) {
  // s = 2^-23 (fp16 subnormal 0x0002).
  for (const auto& [name, block] :
       std::initializer_list<std::pair<std::string_view, std::size_t>>{{"sm70", 4},
                                                                       {"sm75", 8},
                                                                       {"sm80", 8},
                                                                       {"sm89", 8},
                                                                       {"sm90", 16},
                                                                       {"sm100", 16},
                                                                       {"exact-rn", 16},
                                                                       {"exact-rz", 16}}) {
    expect_block_size(formats::fp16, name, block, 32, kH1, kHm1, fp16_of(1, -23), fp16_of(-1, -23));
  }
}

TEST(KhattakMikaitis, F3BlockSizeBf16) {
  for (const auto& [name, block] :
       std::initializer_list<std::pair<std::string_view, std::size_t>>{{"sm80", 8},
                                                                       {"sm89", 8},
                                                                       {"sm90", 16},
                                                                       {"sm100", 16},
                                                                       {"exact-rn", 16},
                                                                       {"exact-rz", 16}}) {
    expect_block_size(formats::bf16, name, block, 32, bf16_of(1), bf16_of(-1), bf16_of(1, -23),
                      bf16_of(-1, -23));
  }
}

TEST(KhattakMikaitis, F8BlockSizeTf32) {
  for (const auto& [name, block] : std::initializer_list<std::pair<std::string_view, std::size_t>>{
           {"sm80", 4}, {"sm89", 4}, {"sm90", 8}, {"sm100", 8}, {"exact-rn", 8}, {"exact-rz", 8}}) {
    expect_block_size(formats::tf32, name, block, 16, tf32_of(1), tf32_of(-1), tf32_of(1, -23),
                      tf32_of(-1, -23));
  }
}

// ---------------------------------------------------------------------------------------------
// Rounding across blocks: Khattak-Mikaitis F9

TEST(KhattakMikaitis, F9BlockResultsAreTruncatedBetweenBlocks) {
  struct Row {
    std::string_view preset;
    std::size_t block_terms;
    std::uint32_t positive;
    std::uint32_t negative;
  };
  // c = 1 + u; the only product, 2^-24 * 1.5 = 0.75u, is the first term of the second block.
  // The first block returns c unchanged; the second has top = 0, grid -nf: nf = 23 drops it,
  // nf = 24 keeps 2^-24 of it, nf = 25 all of it; RZ gives 1 + u = 0x3F800001 in every case.
  // exact-rz: 1 + u; exact-rn: 1 + 1.75u rounds to 1 + 2u = 0x3F800002. Negated likewise.
  for (const Row& r :
       {Row{"sm70", 4, 0x3F800001, 0xBF800001}, Row{"sm75", 8, 0x3F800001, 0xBF800001},
        Row{"sm80", 8, 0x3F800001, 0xBF800001}, Row{"sm89", 8, 0x3F800001, 0xBF800001},
        Row{"sm90", 16, 0x3F800001, 0xBF800001}, Row{"sm100", 16, 0x3F800001, 0xBF800001},
        Row{"exact-rn", 16, 0x3F800002, 0xBF800002}, Row{"exact-rz", 16, 0x3F800001, 0xBF800001}}) {
    SCOPED_TRACE(std::string(r.preset));
    const Datapath dp = preset(r.preset, formats::fp16, formats::fp32);
    const std::size_t k = r.block_terms + 1;
    Vector pos = zeros(k, kH1, fp32_of((1 << 23) + 1, -23));
    pos.a[r.block_terms] = kHTiny;
    pos.b[r.block_terms] = fp16_of(3, -1);
    EXPECT_EQ(run(dp, pos), Bits{r.positive});
    Vector neg = zeros(k, kH1, fp32_of(-((1 << 23) + 1), -23));
    neg.a[r.block_terms] = fp16_of(-1, -24);
    neg.b[r.block_terms] = fp16_of(3, -1);
    EXPECT_EQ(run(dp, neg), Bits{r.negative});
  }
}

TEST(KhattakMikaitis, F9TwoSmallTermsSplitAcrossBlocksAreLost) {
  // c = 1, two products 2^-24 * 1. In one block (k = 0, 1) this is the F1 one-bit test:
  // 0x3F800001 for nf >= 24, 0x3F800000 for nf = 23. At k = 0 and k = block_terms each block sees
  // 1 + 2^-24, which RZ (and RN, a tie to even) rounds to 1: 0x3F800000 everywhere.
  struct Row {
    std::string_view preset;
    std::size_t block_terms;
    std::uint32_t one_block;
  };
  for (const Row& r :
       {Row{"sm70", 4, 0x3F800000}, Row{"sm75", 8, 0x3F800001}, Row{"sm80", 8, 0x3F800001},
        Row{"sm89", 8, 0x3F800001}, Row{"sm90", 16, 0x3F800001}, Row{"sm100", 16, 0x3F800001},
        Row{"exact-rn", 16, 0x3F800001}, Row{"exact-rz", 16, 0x3F800001}}) {
    SCOPED_TRACE(std::string(r.preset));
    const Datapath dp = preset(r.preset, formats::fp16, formats::fp32);
    Vector v = zeros(r.block_terms + 1, kH1, fp32_of(1));
    v.a[0] = kHTiny;
    v.a[1] = kHTiny;
    EXPECT_EQ(run(dp, v), Bits{r.one_block});
    v.a[1] = kH0;
    v.a[r.block_terms] = kHTiny;
    EXPECT_EQ(run(dp, v), Bits{0x3F800000});
  }
}

// ---------------------------------------------------------------------------------------------
// The alignment floor: the discriminating vector of Khattak and Mikaitis

TEST(AlignmentFloor, DiscriminatingVector) {
  // bf16 a_i = 1.5 * 2^-76, b_i = 2^-75, 16 terms, c = +0. Each product is 1.5 * 2^-151 (exact,
  // alignment exponent -151); exactly, the sum is 24 * 2^-151 = 6 * 2^-149.
  const Vector v{std::vector<std::uint32_t>(16, bf16_of(3, -77)),
                 std::vector<std::uint32_t>(16, bf16_of(1, -75)), kFp32PlusZero};
  // Floor -126 (MMA-Sim; the sm80, sm89 and sm100 presets): top = -126.
  //   nf = 25 (sm90/sm100, one 16-term block): grid -151, each product truncates to 2^-151,
  //   the sum 16 * 2^-151 = 4 * 2^-149 is the fp32 subnormal 0x00000004.
  //   nf = 24 (sm80/sm89, two 8-term blocks): grid -150, each product is 0.75 * 2^-150 and
  //   truncates to 0; both blocks give +0 (positive terms, c = +0).
  // Floor -133 (Khattak-Mikaitis; the sm90 preset, measured on our H100, which returned
  // 0x00000006 for this vector on 2026-11-22): top = -133.
  //   nf = 25: grid -158, every product exact, 6 * 2^-149 = 0x00000006.
  //   nf = 24: block 1 (grid -157) is exact, 12 * 2^-151 = 3 * 2^-149, a subnormal c for block 2
  //   whose alignment exponent is fp32's minimum -126. So block 2 has top = -126, grid -150, its
  //   products truncate to 0 and the result stays 3 * 2^-149 = 0x00000003.
  // The exact presets have no floor and no grid: 6 * 2^-149 = 0x00000006.
  expect_per_preset(formats::bf16, formats::fp32, v,
                    {{"sm80", 0x00000000},
                     {"sm89", 0x00000000},
                     {"sm90", 0x00000006},
                     {"sm100", 0x00000004},
                     {"exact-rn", 0x00000006},
                     {"exact-rz", 0x00000006}});
  struct Row {
    std::string_view preset;
    int floor;
    std::uint32_t bits;
  };
  for (const Row& row : {Row{"sm80", -126, 0x00000000}, Row{"sm80", -133, 0x00000003},
                         Row{"sm89", -133, 0x00000003}, Row{"sm90", -126, 0x00000004},
                         Row{"sm90", -133, 0x00000006}, Row{"sm100", -133, 0x00000006}}) {
    SCOPED_TRACE(std::string(row.preset) + " with alignment_floor = " + std::to_string(row.floor));
    Datapath dp = preset(row.preset, formats::bf16, formats::fp32);
    dp.alignment_floor = row.floor;
    EXPECT_EQ(run(dp, v), Bits{row.bits});
  }
}

// ---------------------------------------------------------------------------------------------
// TF32 operands

TEST(Tf32, LowThirteenBitsOfTheContainerAreIgnored) {
  // 0x3F801FFF holds 1 + 2^-10 - 2^-23 in fp32 but is 1 as tf32 (the low 13 bits are dropped):
  // 1 * 1 = 0x3F800000. 0x3F802000 is 1 + 2^-10 in tf32: 0x3F802000.
  expect_on_all(kBf16Presets, formats::tf32, formats::fp32, Vector{{0x3F801FFF}, {tf32_of(1)}, 0},
                0x3F800000);
  expect_on_all(kBf16Presets, formats::tf32, formats::fp32,
                Vector{{tf32_of(1025, -10)}, {tf32_of(1)}, 0}, 0x3F802000);
}

// ---------------------------------------------------------------------------------------------
// FP8 datapaths

TEST(Fp8, NarrowBlockHasThirteenAlignmentBits) {
  // c = 1 (top = 0). Products 2^-6 * 2^-7 = 2^-13 (two of them): on the nf = 13 grid, kept:
  // 1 + 2^-12, which 14 bits hold: 0x3F800800. Also kept by the nf = 25 and exact datapaths.
  const std::uint32_t p6 = e4m3_of(1, -6), p7 = e4m3_of(1, -7);
  expect_on_all(kE4m3Presets, formats::e4m3, formats::fp32, Vector{{p6, p6}, {p7, p7}, fp32_of(1)},
                0x3F800800);
  // Products 2^-7 * 2^-7 = 2^-14: dropped by the nf = 13 grid (1 = 0x3F800000); nf = 25 and
  // exact keep them: 1 + 2^-13 = 0x3F800400. sm90 and sm100 mma.sync sum the halves from 0
  // (2^-13, exact) and add c = 1 by RN: 1 + 2^-13 as well.
  expect_per_preset(formats::e4m3, formats::fp32, Vector{{p7, p7}, {p7, p7}, fp32_of(1)},
                    {{"sm89", 0x3F800000},
                     {"sm90", 0x3F800400},
                     {"sm90/wgmma", 0x3F800000},
                     {"sm100", 0x3F800400},
                     {"sm100/tcgen05", 0x3F800400},
                     {"exact-rn", 0x3F800400},
                     {"exact-rz", 0x3F800400}});
}

TEST(Fp8, NarrowBlockResultKeepsFourteenBits) {
  // c = 1 + 2^-13 (on the nf = 13 grid), product 1 * 1: exactly 2 + 2^-13. The narrow block
  // keeps 14 significant bits (last 2^-12) and truncates to 2 = 0x40000000; a 24-bit result
  // (sm90 and sm100 mma.sync, tcgen05, exact) keeps 2 + 2^-13 = 0x40000200.
  expect_per_preset(formats::e4m3, formats::fp32,
                    Vector{{e4m3_of(1)}, {e4m3_of(1)}, fp32_of((1 << 13) + 1, -13)},
                    {{"sm89", 0x40000000},
                     {"sm90", 0x40000200},
                     {"sm90/wgmma", 0x40000000},
                     {"sm100", 0x40000200},
                     {"sm100/tcgen05", 0x40000200},
                     {"exact-rn", 0x40000200},
                     {"exact-rz", 0x40000200}});
}

TEST(Fp8, AccumulatorAddedAfterTheBlocksIsRoundedToNearest) {
  // c = 64, one product 3*2^-9 * 2^-9 = 3 * 2^-18 = 1.5 ulp(64).
  // c aligned in the block (top = 6): nf = 13 drops the product: 64 = 0x42800000; nf = 25 (grid
  // -19) keeps it and RZ gives 64 + 2^-17 = 0x42800001 (exact-rz too).
  // sm90 and sm100 mma.sync: the block from 0 gives 3 * 2^-18 exactly, then 64 + 3 * 2^-18
  // rounds to nearest, a tie between 64 + 2^-17 and 64 + 2^-16, to even: 0x42800002 (exact-rn
  // too).
  expect_per_preset(formats::e4m3, formats::fp32,
                    Vector{{e4m3_of(3, -9)}, {e4m3_of(1, -9)}, fp32_of(64)},
                    {{"sm89", 0x42800000},
                     {"sm90", 0x42800002},
                     {"sm90/wgmma", 0x42800000},
                     {"sm100", 0x42800002},
                     {"sm100/tcgen05", 0x42800001},
                     {"exact-rn", 0x42800002},
                     {"exact-rz", 0x42800001}});
}

TEST(Fp8, NarrowBlockSize) {
  // Khattak-Mikaitis F3 on the narrow block: c = 1 + 2^-13, a_0 * b_0 = 1, and s = 2^-6 * 2^-7 =
  // 2^-13 at index k - 1. Same block: 2 + 2^-12 exactly, 14 bits hold it: 0x40000400. Next
  // block: the first gives 2 + 2^-13, truncated to 14 bits: 2; the next has top = 1, grid -12,
  // drops s: 2 = 0x40000000.
  for (const auto& [name, block] : std::initializer_list<std::pair<std::string_view, std::size_t>>{
           {"sm89", 16}, {"sm90/wgmma", 32}}) {
    const Datapath dp = named(name, formats::e4m3, formats::fp32);
    for (std::size_t k = 2; k <= 64; ++k) {
      SCOPED_TRACE(std::string(name) + ", small term at k = " + std::to_string(k));
      Vector v = zeros(64, e4m3_of(1), fp32_of((1 << 13) + 1, -13));
      v.a[0] = e4m3_of(1);
      v.a[k - 1] = e4m3_of(1, -6);
      v.b[k - 1] = e4m3_of(1, -7);
      EXPECT_EQ(run(dp, v), Bits{k <= block ? 0x40000400u : 0x40000000u});
    }
  }
}

TEST(Fp8, InterleavedHalves) {
  // c = +0; a_0 * b_0 = 2^3 * 2^3 = 64, a_1 * b_1 = 2^-9 * 2^-9 = 2^-18, and one more 2^-18 at
  // index j. With nf = 25 (grid -19 under top = 6) every 2^-18 is kept.
  // In the half of k = 0 and 1: 64 + 2^-17 exactly = 0x42800001.
  // In the other half: the first half gives 64 + 2^-18, RZ to 64 (ulp 2^-17); the second half
  // adds 2^-18 to that, RZ 64 again: 0x42800000. Adding c = +0 changes nothing.
  // sm100 mma.sync deals k = 0,1,4,5,... to the first half and 2,3,6,7,... to the second; the
  // tcgen05 block holds all 32 terms.
  const Datapath interleaved = preset("sm100", formats::e4m3, formats::fp32);
  const Datapath tcgen05 = preset("sm100", formats::e4m3, formats::fp32, "tcgen05");
  for (std::size_t j = 2; j < 32; ++j) {
    SCOPED_TRACE("second small term at k = " + std::to_string(j));
    Vector v = zeros(32, e4m3_of(1), kFp32PlusZero);
    v.a[0] = v.b[0] = e4m3_of(1, 3);
    v.a[1] = v.b[1] = e4m3_of(1, -9);
    v.a[j] = v.b[j] = e4m3_of(1, -9);
    const bool first_half = (j / 2) % 2 == 0;
    EXPECT_EQ(run(interleaved, v), Bits{first_half ? 0x42800001u : 0x42800000u});
    EXPECT_EQ(run(tcgen05, v), Bits{0x42800001});
  }
}

// ---------------------------------------------------------------------------------------------
// Special values

TEST(SpecialValues, NanInAnyOperandGivesTheDatapathNan) {
  const std::uint32_t nan16 = kFp16QuietNan;
  for (const auto& [acc, c_nan, nan_out] :
       {std::tuple{formats::fp32, kFp32QuietNan, kFp32NanOut},
        std::tuple{formats::fp16, kFp16QuietNan, kFp16NanOut}}) {
    SCOPED_TRACE(std::string(acc.name) + " accumulator");
    expect_on_all(kFp16Presets, formats::fp16, acc, Vector{{nan16, kH1}, {kH1, kH1}, 0}, nan_out);
    expect_on_all(kFp16Presets, formats::fp16, acc, Vector{{kH1, kH1}, {kH1, nan16}, 0}, nan_out);
    expect_on_all(kFp16Presets, formats::fp16, acc, Vector{{kH1}, {kH1}, c_nan}, nan_out);
    // A signalling NaN (fraction 1) and a negative NaN give the same NaN.
    expect_on_all(kFp16Presets, formats::fp16, acc, Vector{{0x7C01}, {kH1}, 0}, nan_out);
    expect_on_all(kFp16Presets, formats::fp16, acc, Vector{{0xFE00}, {kH1}, 0}, nan_out);
    // A NaN in the last block of a chain of blocks and instructions.
    Vector late = zeros(32, kH1, 0);
    late.a[0] = kH1;
    late.a[31] = nan16;
    expect_on_all(kFp16Presets, formats::fp16, acc, late, nan_out);
  }
}

TEST(SpecialValues, InvalidInfinityOperationsGiveNan) {
  for (const auto& [acc, c_one, c_minus_inf, nan_out] :
       {std::tuple{formats::fp32, fp32_of(1), kFp32MinusInf, kFp32NanOut},
        std::tuple{formats::fp16, fp16_of(1), kFp16MinusInf, kFp16NanOut}}) {
    SCOPED_TRACE(std::string(acc.name) + " accumulator");
    // 0 * Inf, with finite other terms.
    expect_on_all(kFp16Presets, formats::fp16, acc, Vector{{kH0, kH1}, {kFp16PlusInf, kH1}, c_one},
                  nan_out);
    // -0 * -Inf.
    expect_on_all(kFp16Presets, formats::fp16, acc, Vector{{kFp16MinusZero}, {kFp16MinusInf}, 0},
                  nan_out);
    // +Inf and -Inf products.
    expect_on_all(kFp16Presets, formats::fp16, acc,
                  Vector{{kFp16PlusInf, kFp16PlusInf}, {kH1, kHm1}, 0}, nan_out);
    // A +Inf product and c = -Inf.
    expect_on_all(kFp16Presets, formats::fp16, acc, Vector{{kFp16PlusInf}, {kH2}, c_minus_inf},
                  nan_out);
  }
}

TEST(SpecialValues, InfinityPropagatesWithItsSign) {
  for (const auto& [acc, c_one, c_plus_inf, plus_inf, minus_inf] :
       {std::tuple{formats::fp32, fp32_of(1), kFp32PlusInf, kFp32PlusInf, kFp32MinusInf},
        std::tuple{formats::fp16, fp16_of(1), kFp16PlusInf, kFp16PlusInf, kFp16MinusInf}}) {
    SCOPED_TRACE(std::string(acc.name) + " accumulator");
    // -Inf * 1 + 1 * 1 + 1.
    expect_on_all(kFp16Presets, formats::fp16, acc, Vector{{kFp16MinusInf, kH1}, {kH1, kH1}, c_one},
                  minus_inf);
    // +Inf * -2: the product's sign.
    expect_on_all(kFp16Presets, formats::fp16, acc, Vector{{kFp16PlusInf}, {fp16_of(-2)}, 0},
                  minus_inf);
    // c = +Inf with finite products.
    expect_on_all(kFp16Presets, formats::fp16, acc, Vector{{kH1, kHm1}, {kH4, kH4}, c_plus_inf},
                  plus_inf);
    // An Inf in the first block survives the later blocks and instructions.
    Vector early = zeros(32, kH1, c_one);
    early.a[0] = kFp16PlusInf;
    early.a[31] = kHm1;
    expect_on_all(kFp16Presets, formats::fp16, acc, early, plus_inf);
  }
}

TEST(SpecialValues, Fp8NanAndInfinity) {
  // E4M3 0x7F (and 0xFF) is NaN: the fp32 NaN 0x7FFFFFFF on every fp8 datapath. 0x7E is the
  // finite 448 = 1.75 * 2^8: 448 * 1 = 0x43E00000.
  const std::uint32_t one = e4m3_of(1);
  expect_on_all(kE4m3Presets, formats::e4m3, formats::fp32, Vector{{kE4m3Nan, one}, {one, one}, 0},
                kFp32NanOut);
  expect_on_all(kE4m3Presets, formats::e4m3, formats::fp32, Vector{{one}, {kE4m3MinusNan}, 0},
                kFp32NanOut);
  expect_on_all(kE4m3Presets, formats::e4m3, formats::fp32, Vector{{e4m3_of(448)}, {one}, 0},
                0x43E00000);
  // E5M2 has Inf (0x7C): Inf * 1 = +Inf, Inf * 0 = NaN.
  for (std::string_view p : {"sm89", "sm90", "sm90/wgmma", "sm100", "sm100/tcgen05"}) {
    SCOPED_TRACE(std::string(p) + " e5m2");
    const Datapath dp = named(p, formats::e5m2, formats::fp32);
    EXPECT_EQ(run(dp, Vector{{kE5m2PlusInf}, {kE5m2One}, 0}), Bits{kFp32PlusInf});
    EXPECT_EQ(run(dp, Vector{{kE5m2PlusInf}, {0x00}, 0}), Bits{kFp32NanOut});
  }
}

TEST(SpecialValues, SignOfZero) {
  for (const auto& [acc, plus_zero, minus_zero] :
       {std::tuple{formats::fp32, kFp32PlusZero, kFp32MinusZero},
        std::tuple{formats::fp16, kFp16PlusZero, kFp16MinusZero}}) {
    SCOPED_TRACE(std::string(acc.name) + " accumulator");
    // Sixteen products -0 * +0 = -0 (several blocks and instructions): with c = -0 every term is
    // -0 and so is the IEEE sum; with c = +0 the IEEE sum is +0. The H100 returns +0 for both
    // (measured 2026-11-22; sm90 has ZeroSign::positive).
    const Vector negative_products{std::vector<std::uint32_t>(16, kFp16MinusZero),
                                   std::vector<std::uint32_t>(16, kFp16PlusZero), minus_zero};
    for (std::string_view p : kFp16Presets) {
      SCOPED_TRACE("preset " + std::string(p));
      EXPECT_EQ(run(named(p, formats::fp16, acc), negative_products),
                Bits{p == "sm90" ? plus_zero : minus_zero});
    }
    Vector with_plus_c = negative_products;
    with_plus_c.c = plus_zero;
    expect_on_all(kFp16Presets, formats::fp16, acc, with_plus_c, plus_zero);
    // -0 * -0 = +0, with c = -0: +0.
    expect_on_all(kFp16Presets, formats::fp16, acc,
                  Vector{{kFp16MinusZero}, {kFp16MinusZero}, minus_zero}, plus_zero);
    // 1 - 1 + (-0): an exact cancellation is +0 under RN and RZ.
    expect_on_all(kFp16Presets, formats::fp16, acc, Vector{{kH1, kH1}, {kH1, kHm1}, minus_zero},
                  plus_zero);
  }
  // 1 * 1 + 1 * (-2^-24) + (-1): exactly -2^-24. nf = 23 drops the -2^-24 and the rest cancels:
  // a zero made by truncation is +0. nf >= 24 and exact keep it: -2^-24 = 0xB3800000 in fp32 and
  // the subnormal 0x8001 in fp16.
  const Vector v32{{kH1, kH1}, {kH1, fp16_of(-1, -24)}, fp32_of(-1)};
  const Vector v16{{kH1, kH1}, {kH1, fp16_of(-1, -24)}, fp16_of(-1)};
  expect_per_preset(formats::fp16, formats::fp32, v32,
                    {{"sm70", kFp32PlusZero},
                     {"sm75", 0xB3800000},
                     {"sm80", 0xB3800000},
                     {"sm89", 0xB3800000},
                     {"sm90", 0xB3800000},
                     {"sm100", 0xB3800000},
                     {"exact-rn", 0xB3800000},
                     {"exact-rz", 0xB3800000}});
  expect_per_preset(formats::fp16, formats::fp16, v16,
                    {{"sm70", kFp16PlusZero},
                     {"sm75", 0x8001},
                     {"sm80", 0x8001},
                     {"sm89", 0x8001},
                     {"sm90", 0x8001},
                     {"sm100", 0x8001},
                     {"exact-rn", 0x8001},
                     {"exact-rz", 0x8001}});
}

TEST(SpecialValues, OverflowOfTheFp16Output) {
  // 65504 * 2 = 131008 > 65504 (fp16's largest finite): RN gives Inf (0x7C00), and so does
  // Overflow::infinity; exact-rz (Overflow::ieee with RZ) gives the largest finite 0x7BFF.
  // Negated likewise (0xFC00 / 0xFBFF).
  const std::uint32_t max16 = fp16_of(65504);
  for (const auto& [b, inf, max] :
       {std::tuple{kH2, kFp16PlusInf, 0x7BFFu}, std::tuple{fp16_of(-2), kFp16MinusInf, 0xFBFFu}}) {
    expect_per_preset(formats::fp16, formats::fp16, Vector{{max16}, {b}, kFp16PlusZero},
                      {{"sm70", inf},
                       {"sm75", inf},
                       {"sm80", inf},
                       {"sm89", inf},
                       {"sm90", inf},
                       {"sm100", inf},
                       {"exact-rn", inf},
                       {"exact-rz", max}});
  }
  // 65504 + 16 = 65520, exactly half an ulp (32) above 65504, whose significand is odd: RN ties
  // to even, up to 65536, which overflows to Inf; RZ keeps 65504. 65504 + 15 rounds down.
  expect_per_preset(formats::fp16, formats::fp16,
                    Vector{{max16, fp16_of(16)}, {kH1, kH1}, kFp16PlusZero},
                    {{"sm70", kFp16PlusInf},
                     {"sm75", kFp16PlusInf},
                     {"sm80", kFp16PlusInf},
                     {"sm89", kFp16PlusInf},
                     {"sm90", kFp16PlusInf},
                     {"sm100", kFp16PlusInf},
                     {"exact-rn", kFp16PlusInf},
                     {"exact-rz", 0x7BFF}});
  expect_on_all(kFp16Presets, formats::fp16, formats::fp16,
                Vector{{max16, fp16_of(15)}, {kH1, kH1}, kFp16PlusZero}, 0x7BFF);
}

TEST(SpecialValues, OverflowOfTheFp32Output) {
  // bf16 2^127 * 2 = 2^128 > FLT_MAX: Inf under Overflow::infinity (every architecture preset,
  // although their fp32 rounding is RZ) and under IEEE RN (exact-rn); exact-rz (IEEE RZ) gives
  // FLT_MAX = 0x7F7FFFFF. The sum 2^127 + 2^127 likewise. Negated: 0xFF800000 / 0xFF7FFFFF.
  const std::uint32_t big = bf16_of(1, 127), one = bf16_of(1), two = bf16_of(2);
  for (const Vector& v : {Vector{{big}, {two}, 0}, Vector{{big, big}, {one, one}, 0}}) {
    expect_per_preset(formats::bf16, formats::fp32, v,
                      {{"sm80", kFp32PlusInf},
                       {"sm89", kFp32PlusInf},
                       {"sm90", kFp32PlusInf},
                       {"sm100", kFp32PlusInf},
                       {"exact-rn", kFp32PlusInf},
                       {"exact-rz", 0x7F7FFFFF}});
  }
  expect_per_preset(formats::bf16, formats::fp32, Vector{{big}, {bf16_of(-2)}, 0},
                    {{"sm80", kFp32MinusInf},
                     {"sm89", kFp32MinusInf},
                     {"sm90", kFp32MinusInf},
                     {"sm100", kFp32MinusInf},
                     {"exact-rn", kFp32MinusInf},
                     {"exact-rz", 0xFF7FFFFF}});
  // c = FLT_MAX = (2^24 - 1) * 2^104 plus 2^52 * 2^52 = 2^104: exactly 2^128. top = 127, grid
  // 127 - nf <= 103 keeps the product: overflow, as above.
  expect_per_preset(formats::bf16, formats::fp32,
                    Vector{{bf16_of(1, 52)}, {bf16_of(1, 52)}, fp32_of((1 << 24) - 1, 104)},
                    {{"sm80", kFp32PlusInf},
                     {"sm89", kFp32PlusInf},
                     {"sm90", kFp32PlusInf},
                     {"sm100", kFp32PlusInf},
                     {"exact-rn", kFp32PlusInf},
                     {"exact-rz", 0x7F7FFFFF}});
}

}  // namespace
}  // namespace tcemu
