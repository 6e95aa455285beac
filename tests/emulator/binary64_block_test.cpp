// The binary64 block functions on one lane per call (ScalarLanes, the lanes the GPU's emulated
// engine runs) against block_fma, bit for bit, on the host: the formulation the GPU kernel uses is
// checked here without a GPU (the CPU fast path runs the same functions on vector lanes,
// fast_path_test.cpp). Random finite blocks over wide exponent ranges, on the presets whose grids
// binary64 holds (kind::f8f6f4 pairs and kind::mxf8f6f4 with its scales among them) and on
// overridden fields (ue4m3 scales); both the binary64 rounding and the round_pack lanes
// (subnormal, overflowing results) are reached.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <tcemu/emulator/binary64_block.hpp>
#include <tcemu/emulator/block_fma.hpp>
#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/presets.hpp>

namespace tcemu {
namespace {

using Lanes = detail::ScalarLanes;

// Operand r of A (or B) as the fast paths stage it: decoded in its format, times its scale where
// the datapath is block-scaled.
detail::Binary64Operand operand(const Datapath& dp, bool is_a, const std::vector<std::uint32_t>& x,
                                const std::vector<std::uint32_t>& scales, std::size_t r) {
  const detail::Binary64Operand v = detail::binary64_operand(is_a ? dp.input : dp.b_format(), x[r]);
  if (!dp.block_scaled()) return v;
  return detail::scaled_operand(
      v, detail::binary64_scale(is_a ? dp.block_scaling.scale_a : dp.block_scaling.scale_b,
                                scales[r]));
}

// One block through the binary64 functions, as the GPU kernel calls them; `exceptional` counts
// the results left to round_pack. scale_a[r] and scale_b[r]: the scales of term r (block-scaled
// datapaths only).
std::uint32_t binary64_block(const Datapath& dp, const std::vector<std::uint32_t>& a,
                             const std::vector<std::uint32_t>& b,
                             const std::vector<std::uint32_t>& scale_a,
                             const std::vector<std::uint32_t>& scale_b, std::uint32_t c,
                             int& exceptional) {
  const detail::Binary64Grid g = detail::binary64_grid(dp);
  const double chain = to_double(dp.accumulator, c);
  detail::BlockSum<Lanes> s{};
  s.emax = detail::c_alignment<Lanes>(g, chain);
  for (std::size_t r = 0; r < a.size(); ++r) {
    s.emax = detail::raise_alignment(s.emax, operand(dp, true, a, scale_a, r).exponent +
                                                 operand(dp, false, b, scale_b, r).exponent);
  }
  const double scale = detail::start_block(g, s, chain);
  for (std::size_t r = 0; r < a.size(); ++r) {
    detail::add_product(
        s, operand(dp, true, a, scale_a, r).value * operand(dp, false, b, scale_b, r).value, scale);
  }
  const detail::RoundedBlock<Lanes> rounded = detail::round_block(g, s, chain);
  double result = rounded.result;
  if (!rounded.fast) {
    ++exceptional;
    result = detail::exceptional_block_result(dp, g, chain, static_cast<std::int64_t>(s.sum),
                                              s.emax, rounded.exact);
  }
  return detail::accumulator_bits(dp, result);
}

// A finite value of `f` with an exponent anywhere in [low, high] (subnormals and zeros included
// when low reaches them), random sign and fraction.
std::uint32_t random_value(const FloatFormat& f, std::mt19937_64& rng, int low, int high) {
  std::uniform_int_distribution<int> exponent(low, high);
  const int e = std::clamp(exponent(rng), 0, (1 << f.exponent_bits) - 2);
  const std::uint32_t fraction = static_cast<std::uint32_t>(rng()) & ((1u << f.fraction_bits) - 1);
  const std::uint32_t sign = static_cast<std::uint32_t>(rng() & 1);
  return ((sign << (f.exponent_bits + f.fraction_bits)) |
          (static_cast<std::uint32_t>(e) << f.fraction_bits) | fraction)
         << f.padding_bits;
}

// A finite scale code of `f` (ue8m0 0..254, ue4m3 0..126: zero and subnormals included), within
// two binades of 1 every third trial; 0 for a datapath without scales (never read).
std::uint32_t scale_code(const FloatFormat& f, int trial, std::mt19937_64& rng) {
  if (!is_scale_format(f)) return 0;
  const bool e8m0 = f == formats::ue8m0;
  const std::uint32_t codes = e8m0 ? 255 : 127, one = e8m0 ? 127 : 0x38;
  return trial % 3 == 0 ? one - 2 * (f.fraction_bits + 1) +
                              static_cast<std::uint32_t>(rng() % (4 * (f.fraction_bits + 1) + 1))
                        : static_cast<std::uint32_t>(rng() % codes);
}

// binary64_scale's shortcut for ue8m0 against binary64_operand's decoding, every code (255: NaN).
TEST(Binary64Block, Ue8m0ScalesFromTheirFieldAreTheDecodedOnes) {
  for (std::uint32_t code = 0; code < 256; ++code) {
    const detail::Binary64Operand fast = detail::binary64_scale(formats::ue8m0, code);
    const detail::Binary64Operand decoded = detail::binary64_operand(formats::ue8m0, code);
    if (code == 255) {
      EXPECT_TRUE(std::isnan(fast.value) && std::isnan(decoded.value));
      continue;
    }
    EXPECT_EQ(std::bit_cast<std::uint64_t>(fast.value), std::bit_cast<std::uint64_t>(decoded.value))
        << code;
    EXPECT_EQ(fast.exponent, decoded.exponent) << code;
  }
}

TEST(Binary64Block, ScalarLanesGiveTheBitsOfBlockFma) {
  std::vector<Datapath> datapaths;
  for (const PresetEntry& entry : all_presets()) {
    if (detail::binary64_applies(entry.datapath)) datapaths.push_back(entry.datapath);
  }
  Datapath variant = preset("sm80", formats::fp16, formats::fp32, "mma.sync");
  variant.block_rounding = Rounding::nearest_even;
  variant.block_result_precision = 12;
  variant.zero_sign = ZeroSign::positive;
  variant.overflow = Overflow::saturate;
  datapaths.push_back(variant);
  variant.block_result_precision = 1;
  variant.alignment_floor = 3;
  datapaths.push_back(variant);
  // kind::mxf8f6f4 with ue4m3 scales (significand bits in the scaled operands: 4 bits of headroom)
  // and e4m3 x e2m1 under ZeroSign::ieee.
  Datapath ue4m3 =
      preset("sm100", formats::e4m3, formats::e5m2, formats::fp32, "tcgen05.mxf8f6f4.block32");
  ue4m3.block_scaling.scale_a = ue4m3.block_scaling.scale_b = formats::ue4m3;
  ue4m3.zero_sign = ZeroSign::ieee;
  ASSERT_TRUE(detail::binary64_applies(ue4m3));
  datapaths.push_back(ue4m3);
  int scaled = 0, mixed = 0;
  for (const Datapath& dp : datapaths) {
    scaled += dp.block_scaled() ? 1 : 0;
    mixed += dp.has_input_b ? 1 : 0;
  }
  EXPECT_GT(scaled, 20);  // both architectures' kind::mxf8f6f4 pairs
  EXPECT_GT(mixed, 40);
  ASSERT_GT(datapaths.size(), 20u);
  std::mt19937_64 rng(64);
  int exceptional = 0, compared = 0;
  for (const Datapath& dp : datapaths) {
    const FloatFormat& fb = dp.b_format();
    const int top = (1 << dp.input.exponent_bits) - 2;
    const int top_b = (1 << fb.exponent_bits) - 2;
    const int accumulator_top = (1 << dp.accumulator.exponent_bits) - 2;
    for (int trial = 0; trial < 3000; ++trial) {
      // Narrow ranges give cancellations and near ties; wide ones subnormal and huge results.
      const int spread = trial % 3 == 0 ? 2 : top;
      const int middle = std::uniform_int_distribution<int>(0, top)(rng);
      const int middle_b = std::uniform_int_distribution<int>(0, top_b)(rng);
      const int spread_b = trial % 3 == 0 ? 2 : top_b;
      std::vector<std::uint32_t> a(static_cast<std::size_t>(dp.block_terms)), b(a.size());
      std::vector<std::uint32_t> scale_a(a.size()), scale_b(a.size());
      for (std::size_t r = 0; r < a.size(); ++r) {
        a[r] = random_value(dp.input, rng, middle - spread, middle + spread);
        b[r] = random_value(fb, rng, middle_b - spread_b, middle_b + spread_b);
        scale_a[r] = scale_code(dp.block_scaling.scale_a, trial, rng);
        scale_b[r] = scale_code(dp.block_scaling.scale_b, trial, rng);
      }
      const std::uint32_t c = random_value(dp.accumulator, rng, 0, accumulator_top);
      std::vector<Decoded> da, db, dsa, dsb;
      for (std::size_t r = 0; r < a.size(); ++r) {
        da.push_back(decode(dp.input, a[r]));
        db.push_back(decode(fb, b[r]));
        if (dp.block_scaled()) {
          dsa.push_back(decode(dp.block_scaling.scale_a, scale_a[r]));
          dsb.push_back(decode(dp.block_scaling.scale_b, scale_b[r]));
        }
      }
      const std::uint32_t want =
          dp.block_scaled() ? detail::exact_scaled_block(dp, da.data(), db.data(), dsa.data(),
                                                         dsb.data(), da.size(), c)
                            : block_fma(dp, da, db, c);
      ASSERT_EQ(binary64_block(dp, a, b, scale_a, scale_b, c, exceptional), want)
          << describe(dp) << ", trial " << trial;
      ++compared;
    }
  }
  EXPECT_GT(exceptional, 0);             // round_pack's lanes were reached
  EXPECT_LT(exceptional, compared / 2);  // and the binary64 rounding decided most blocks
}

}  // namespace
}  // namespace tcemu
