// The probe's crafted cases: shape, and the answers the sm90 preset gives on the ones whose
// answer the literature states.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include <tcemu/cases/case_generator.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>

namespace tcemu {
namespace {

TEST(CraftedCases, EveryCaseHasKTermsAndAUniqueName) {
  for (const FloatFormat& in :
       {formats::fp16, formats::bf16, formats::tf32, formats::e4m3, formats::e5m2}) {
    for (int k : {8, 16, 32}) {
      std::map<std::string, int> seen;
      for (const NamedCase& c : crafted_cases(in, formats::fp32, k)) {
        EXPECT_EQ(c.values.a.size(), static_cast<std::size_t>(k)) << c.name;
        EXPECT_EQ(c.values.b.size(), static_cast<std::size_t>(k)) << c.name;
        EXPECT_EQ(++seen[c.name], 1) << c.name;
      }
      EXPECT_GE(seen.size(), 15u) << in.name;
    }
  }
}

std::map<std::string, std::uint32_t> results(const Datapath& dp, int k) {
  std::map<std::string, std::uint32_t> out;
  for (const NamedCase& c : crafted_cases(dp.input, dp.accumulator, k)) {
    out[c.name] = mma_element(dp, c.values.a, c.values.b, c.values.c);
  }
  return out;
}

TEST(CraftedCases, BlockSizeCasesFindTheBlockOfEveryPreset) {
  // The first j whose small term survives is the block size (crafted_cases.cpp explains why).
  for (const auto& [arch, in, block] :
       std::vector<std::tuple<const char*, FloatFormat, int>>{{"sm70", formats::fp16, 4},
                                                              {"sm80", formats::bf16, 8},
                                                              {"sm80", formats::tf32, 4},
                                                              {"sm89", formats::e4m3, 16}}) {
    const Datapath dp = preset(arch, in, formats::fp32);
    const int k = std::max(dp.instruction_k, 2 * block);  // sm70's K = 4 chains two instructions
    const auto r = results(dp, k);
    int first_kept = 0;
    for (int j = 2; j < k && first_kept == 0; ++j) {
      if (r.at("block-size-small-term-at-" + std::to_string(j)) != 0) first_kept = j;
    }
    EXPECT_EQ(first_kept, block) << arch << " " << in.name;
  }
}

TEST(CraftedCases, Sm90AnswersMatchTheLiterature) {
  const auto r = results(preset("sm90", formats::fp16, formats::fp32), 16);
  EXPECT_EQ(r.at("fttn-extra-bits"), 0x3F8FFFFFu);     // two or more extra bits (FTTN)
  EXPECT_EQ(r.at("zeros-all-negative"), 0x00000000u);  // measured on the H100: always +0
  EXPECT_EQ(r.at("zeros-negative-products-positive-c"), 0x00000000u);
  EXPECT_EQ(r.at("nan-in-a"), 0x7FFFFFFFu);
  EXPECT_EQ(r.at("inf-times-zero"), 0x7FFFFFFFu);
  EXPECT_EQ(r.at("inf-propagates"), 0x7F800000u);
  // fp16 products cannot overflow fp32: FLT_MAX plus them truncates back to FLT_MAX.
  EXPECT_EQ(r.at("overflow"), 0x7F7FFFFFu);
  EXPECT_EQ(results(preset("sm90", formats::bf16, formats::fp32), 16).at("overflow"), 0x7F800000u);
  EXPECT_EQ(r.at("block-rounding"), 0x3F800000u);  // RZ keeps 1.0
  // One 16-term block: the small term is lost wherever it sits.
  EXPECT_EQ(r.at("block-size-small-term-at-2"), 0u);
  EXPECT_EQ(r.at("block-size-small-term-at-15"), 0u);
  const auto v100 = results(preset("sm70", formats::fp16, formats::fp32), 16);
  EXPECT_EQ(v100.at("fttn-extra-bits"), 0x3F900000u);  // no extra bit
  // Four-term blocks: the small term survives once it is in a later block than the pair.
  EXPECT_EQ(v100.at("block-size-small-term-at-3"), 0u);
  EXPECT_EQ(v100.at("block-size-small-term-at-4"), 0x31C00000u);  // 1.5 * 2^-28
}

}  // namespace
}  // namespace tcemu
