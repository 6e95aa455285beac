// The fp32 pair-FMA emulation of sm90 mma.sync.m8n8k4 fp16 -> fp16 (pair_fma_emulation.hpp) on
// hand-made cases whose bits follow from its SASS: the fp32 rounding before the fp16 one, the
// order (c + p01) + p23, special values, chaining and refusals.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <tcemu/emulator/pair_fma_emulation.hpp>

namespace tcemu {
namespace {

// fp16 bits.
constexpr std::uint32_t kOne = 0x3C00, kZero = 0x0000, kInf = 0x7C00, kNan = 0x7FFF;
constexpr std::uint32_t kTwoToMinus11 = 0x1000;  // 2^-11
constexpr std::uint32_t kTwoToMinus15 = 0x0200;  // 2^-15, subnormal
constexpr std::uint32_t k8192 = 0x7000, k4096 = 0x6C00, kMinus8192 = 0xF000;

std::uint32_t d4(std::array<std::uint32_t, 4> a, std::array<std::uint32_t, 4> b, std::uint32_t c) {
  return sm90_m8n8k4_fp16_element(a, b, c);
}

// 1 + 2^-11 + 2^-30: fp32 keeps 1 + 2^-11, a tie in fp16 that goes to the even 1.0; one rounding
// of the exact sum would give 1 + 2^-10 (0x3C01).
TEST(PairFmaEmulation, RoundsToFp32BeforeFp16) {
  EXPECT_EQ(d4({kTwoToMinus11, kTwoToMinus15, 0, 0}, {kOne, kTwoToMinus15, 0, 0}, kOne), kOne);
  // 2^-11 twice instead: exactly 1 + 2^-10, no rounding anywhere.
  EXPECT_EQ(d4({kTwoToMinus11, kTwoToMinus11, 0, 0}, {kOne, kOne, 0, 0}, kOne), 0x3C01u);
}

// c + p01 first: 1 + 2^25 rounds to 2^25 in fp32 before -2^25 comes, so d = +0 where the exact
// sum is 1.
TEST(PairFmaEmulation, AddsCToTheFirstPairBeforeTheSecond) {
  EXPECT_EQ(d4({k8192, 0, kMinus8192, 0}, {k4096, 0, k4096, 0}, kOne), kZero);
  // The same with products of 2^12, where c + p01 = 2^12 + 1 is exact in fp32: d = 1.
  EXPECT_EQ(d4({0x5400, 0, 0xD400, 0}, {0x5400, 0, 0x5400, 0}, kOne), kOne);  // 64 * 64 = 2^12
}

TEST(PairFmaEmulation, SpecialValuesFollowIeee) {
  EXPECT_EQ(d4({kInf, 0, 0, 0}, {kOne, 0, 0, 0}, kZero), kInf);
  EXPECT_EQ(d4({kInf, 0, 0, 0}, {kZero, 0, 0, 0}, kZero), kNan);         // Inf * 0
  EXPECT_EQ(d4({kInf, 0xFC00, 0, 0}, {kOne, kOne, 0, 0}, kZero), kNan);  // Inf - Inf
  EXPECT_EQ(d4({0x7E00, 0, 0, 0}, {kOne, 0, 0, 0}, kZero), kNan);        // a NaN in
  // 65504 + 16 = 65520 is fp16's overflow tie: to nearest even, Inf.
  EXPECT_EQ(d4({0x4C00, 0, 0, 0}, {kOne, 0, 0, 0}, 0x7BFF), kInf);     // 16 * 1 + 65504
  EXPECT_EQ(d4({0x4A00, 0, 0, 0}, {kOne, 0, 0, 0}, 0x7BFF), 0x7BFFu);  // + 12: 65516 -> 65504
  // -0 + (-0) products and c: IEEE gives -0; x + (-x) gives +0.
  EXPECT_EQ(d4({0x8000, 0x8000, 0x8000, 0x8000}, {kOne, kOne, kOne, kOne}, 0x8000), 0x8000u);
  EXPECT_EQ(d4({kOne, 0, 0, 0}, {kOne, 0, 0, 0}, 0xBC00), kZero);
}

// K = 8: two instructions, the first one's fp16 d the second one's c.
TEST(PairFmaEmulation, LongerKChainsThroughFp16) {
  const std::vector<std::uint32_t> a = {kTwoToMinus11, kTwoToMinus15, 0, 0, kTwoToMinus11, 0, 0, 0};
  const std::vector<std::uint32_t> b = {kOne, kTwoToMinus15, 0, 0, kOne, 0, 0, 0};
  const std::uint32_t first = d4({a[0], a[1], a[2], a[3]}, {b[0], b[1], b[2], b[3]}, kOne);
  EXPECT_EQ(first, kOne);
  EXPECT_EQ(sm90_m8n8k4_fp16_element(a, b, kOne),
            d4({a[4], a[5], a[6], a[7]}, {b[4], b[5], b[6], b[7]}, first));
  EXPECT_EQ(sm90_m8n8k4_fp16_element({}, {}, 0x1234), 0x1234u);  // K = 0: c
}

TEST(PairFmaEmulation, RefusesKThatIsNoMultipleOfFour) {
  const std::vector<std::uint32_t> three(3, kOne), four(4, kOne);
  EXPECT_THROW(sm90_m8n8k4_fp16_element(three, three, kZero), std::invalid_argument);
  EXPECT_THROW(sm90_m8n8k4_fp16_element(four, three, kZero), std::invalid_argument);
}

}  // namespace
}  // namespace tcemu
