// round_pack, convert and decode against independent references: the host's IEEE binary16
// conversion (_Float16, correctly rounded by the compiler's runtime), the well-known bf16
// rounding formula, and hand-worked bit patterns.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu {
namespace {

TEST(Decode, NormalSubnormalZeroInfNan) {
  const Decoded one = decode(formats::fp16, 0x3C00);
  EXPECT_EQ(one.value_class, ValueClass::finite);
  EXPECT_EQ(one.significand, 0x400u);
  EXPECT_EQ(one.lsb_exponent, -10);
  EXPECT_EQ(one.alignment_exponent(formats::fp16), 0);
  const Decoded tiny = decode(formats::fp16, 0x8001);  // -2^-24
  EXPECT_TRUE(tiny.negative);
  EXPECT_EQ(tiny.significand, 1u);
  EXPECT_EQ(tiny.lsb_exponent, -24);
  EXPECT_EQ(tiny.alignment_exponent(formats::fp16), -14);  // subnormals keep min exponent
  EXPECT_EQ(decode(formats::fp16, 0x8000).value_class, ValueClass::zero);
  EXPECT_EQ(decode(formats::fp16, 0x7C00).value_class, ValueClass::infinity);
  EXPECT_EQ(decode(formats::fp16, 0x7C01).value_class, ValueClass::nan);
  EXPECT_EQ(decode(formats::e4m3, 0x7F).value_class, ValueClass::nan);
  EXPECT_EQ(decode(formats::e4m3, 0x78).value_class, ValueClass::finite);  // 256, not Inf
  EXPECT_EQ(decode(formats::e5m2, 0x7C).value_class, ValueClass::infinity);
  const Decoded t = decode(formats::tf32, 0x3F801FFF);  // padding bits ignored: 1.0
  EXPECT_EQ(t.significand, 0x400u);
  EXPECT_EQ(t.lsb_exponent, -10);
}

TEST(Convert, Fp32ToFp16MatchesHostBinary16ForRandomAndEdgeInputs) {
  std::mt19937 rng(1);
  for (int i = 0; i < 2'000'000; ++i) {
    std::uint32_t bits = static_cast<std::uint32_t>(rng());
    if (i % 2 == 0) {  // exponents near the fp16 range
      bits = (bits & 0x807FFFFFu) | (static_cast<std::uint32_t>(100 + rng() % 60) << 23);
    }
    const float x = std::bit_cast<float>(bits);
    if (std::isnan(x)) continue;
    const auto host = std::bit_cast<std::uint16_t>(static_cast<_Float16>(x));
    ASSERT_EQ(convert(formats::fp32, formats::fp16, bits, Rounding::nearest_even), host)
        << std::hex << "fp32 0x" << bits;
  }
}

TEST(Convert, Fp16ToFp32IsExactForEveryPattern) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const auto half = std::bit_cast<_Float16>(static_cast<std::uint16_t>(h));
    const float f = static_cast<float>(half);
    if (std::isnan(f)) {
      EXPECT_EQ(convert(formats::fp16, formats::fp32, h, Rounding::nearest_even), 0x7FFFFFFFu);
      continue;
    }
    ASSERT_EQ(convert(formats::fp16, formats::fp32, h, Rounding::nearest_even),
              std::bit_cast<std::uint32_t>(f))
        << std::hex << h;
  }
}

TEST(Convert, Fp32ToBf16RoundsToNearestEvenAndTruncatesUnderRz) {
  std::mt19937 rng(2);
  for (int i = 0; i < 1'000'000; ++i) {
    const std::uint32_t bits = static_cast<std::uint32_t>(rng());
    if (std::isnan(std::bit_cast<float>(bits))) continue;
    // The classic formula: add 0x7FFF plus the lowest kept bit, keep the top half.
    const std::uint32_t rn = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16;
    ASSERT_EQ(convert(formats::fp32, formats::bf16, bits, Rounding::nearest_even), rn)
        << std::hex << bits;
    const std::uint32_t rz = bits >> 16;
    const bool overflow_from_rz = (rz & 0x7F80) == 0x7F80;  // only Inf inputs reach it
    if (!overflow_from_rz) {
      ASSERT_EQ(convert(formats::fp32, formats::bf16, bits, Rounding::toward_zero), rz)
          << std::hex << bits;
    }
  }
}

TEST(RoundPack, WorkedExamples) {
  // 1 + 2^-11 (a tie between 1 and 1 + 2^-10 in fp16): RN to even keeps 1, RZ keeps 1.
  EXPECT_EQ(
      round_pack(formats::fp16, false, {0x801, -11, false}, Rounding::nearest_even, Overflow::ieee),
      0x3C00u);
  // The same tie plus a sticky bit rounds up under RN only.
  EXPECT_EQ(
      round_pack(formats::fp16, false, {0x801, -11, true}, Rounding::nearest_even, Overflow::ieee),
      0x3C01u);
  EXPECT_EQ(
      round_pack(formats::fp16, false, {0x801, -11, true}, Rounding::toward_zero, Overflow::ieee),
      0x3C00u);
  // 1 + 3 * 2^-11: a tie to the odd neighbour rounds to 1 + 2^-9 (even).
  EXPECT_EQ(
      round_pack(formats::fp16, false, {0x803, -11, false}, Rounding::nearest_even, Overflow::ieee),
      0x3C02u);
  // 1 - 2^-11 has 11 significant bits: exact. 1 - 2^-12 needs 12: a tie, carried to 1.0.
  EXPECT_EQ(
      round_pack(formats::fp16, false, {0x7FF, -11, false}, Rounding::nearest_even, Overflow::ieee),
      0x3BFFu);
  EXPECT_EQ(
      round_pack(formats::fp16, false, {0xFFF, -12, false}, Rounding::nearest_even, Overflow::ieee),
      0x3C00u);
  // Smallest subnormal fp32 and a value half of it (ties to even: zero).
  EXPECT_EQ(
      round_pack(formats::fp32, true, {1, -149, false}, Rounding::nearest_even, Overflow::ieee),
      0x80000001u);
  EXPECT_EQ(
      round_pack(formats::fp32, false, {1, -150, false}, Rounding::nearest_even, Overflow::ieee),
      0x00000000u);
  EXPECT_EQ(
      round_pack(formats::fp32, false, {3, -151, false}, Rounding::nearest_even, Overflow::ieee),
      0x00000001u);
  // Overflow rules: RN to Inf, RZ to the largest finite value, unless Overflow says otherwise.
  EXPECT_EQ(
      round_pack(formats::fp32, false, {1, 128, false}, Rounding::nearest_even, Overflow::ieee),
      0x7F800000u);
  EXPECT_EQ(
      round_pack(formats::fp32, false, {1, 128, false}, Rounding::toward_zero, Overflow::ieee),
      0x7F7FFFFFu);
  EXPECT_EQ(
      round_pack(formats::fp32, true, {1, 128, false}, Rounding::toward_zero, Overflow::infinity),
      0xFF800000u);
  EXPECT_EQ(
      round_pack(formats::fp16, false, {1, 20, false}, Rounding::nearest_even, Overflow::saturate),
      0x7BFFu);
  // E4M3 has no Inf: overflow under RN is NaN; 464 (between 448 and 480) rounds to 448.
  EXPECT_EQ(round_pack(formats::e4m3, false, {1, 9, false}, Rounding::nearest_even, Overflow::ieee),
            0x7Fu);
  EXPECT_EQ(
      round_pack(formats::e4m3, false, {29, 4, false}, Rounding::nearest_even, Overflow::ieee),
      0x7Eu);
  // Reduced precision: 1 + 2^-20 kept to 14 significant bits truncates to 1.0.
  EXPECT_EQ(round_pack(formats::fp32, false, {(1u << 20) + 1, -20, false}, Rounding::toward_zero,
                       Overflow::ieee, 14),
            0x3F800000u);
}

}  // namespace
}  // namespace tcemu
