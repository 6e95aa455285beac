// The binary64 block functions on one lane per call (ScalarLanes, the lanes the GPU's emulated
// engine runs) against block_fma, bit for bit, on the host: the formulation the GPU kernel uses is
// checked here without a GPU (the CPU fast path runs the same functions on vector lanes,
// fast_path_test.cpp). Random finite blocks over wide exponent ranges, on the presets whose grids
// binary64 holds and on overridden fields; both the binary64 rounding and the round_pack lanes
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

// One block through the binary64 functions, as the GPU kernel calls them; `exceptional` counts
// the results left to round_pack.
std::uint32_t binary64_block(const Datapath& dp, const std::vector<std::uint32_t>& a,
                             const std::vector<std::uint32_t>& b, std::uint32_t c,
                             int& exceptional) {
  const detail::Binary64Grid g = detail::binary64_grid(dp);
  const double chain = to_double(dp.accumulator, c);
  detail::BlockSum<Lanes> s{};
  s.emax = detail::c_alignment<Lanes>(g, chain);
  for (std::size_t r = 0; r < a.size(); ++r) {
    s.emax = detail::raise_alignment(s.emax, detail::binary64_operand(dp.input, a[r]).exponent +
                                                 detail::binary64_operand(dp.input, b[r]).exponent);
  }
  const double scale = detail::start_block(g, s, chain);
  for (std::size_t r = 0; r < a.size(); ++r) {
    detail::add_product(s,
                        detail::binary64_operand(dp.input, a[r]).value *
                            detail::binary64_operand(dp.input, b[r]).value,
                        scale);
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
  ASSERT_GT(datapaths.size(), 20u);
  std::mt19937_64 rng(64);
  int exceptional = 0, compared = 0;
  for (const Datapath& dp : datapaths) {
    const int top = (1 << dp.input.exponent_bits) - 2;
    const int accumulator_top = (1 << dp.accumulator.exponent_bits) - 2;
    for (int trial = 0; trial < 3000; ++trial) {
      // Narrow ranges give cancellations and near ties; wide ones subnormal and huge results.
      const int spread = trial % 3 == 0 ? 2 : top;
      const int middle = std::uniform_int_distribution<int>(0, top)(rng);
      std::vector<std::uint32_t> a(static_cast<std::size_t>(dp.block_terms)), b(a.size());
      for (std::size_t r = 0; r < a.size(); ++r) {
        a[r] = random_value(dp.input, rng, middle - spread, middle + spread);
        b[r] = random_value(dp.input, rng, middle - spread, middle + spread);
      }
      const std::uint32_t c = random_value(dp.accumulator, rng, 0, accumulator_top);
      std::vector<Decoded> da, db;
      for (std::size_t r = 0; r < a.size(); ++r) {
        da.push_back(decode(dp.input, a[r]));
        db.push_back(decode(dp.input, b[r]));
      }
      const std::uint32_t want = block_fma(dp, da, db, c);
      ASSERT_EQ(binary64_block(dp, a, b, c, exceptional), want)
          << describe(dp) << ", trial " << trial;
      ++compared;
    }
  }
  EXPECT_GT(exceptional, 0);             // round_pack's lanes were reached
  EXPECT_LT(exceptional, compared / 2);  // and the binary64 rounding decided most blocks
}

}  // namespace
}  // namespace tcemu
