#include <gtest/gtest.h>

#include <stdexcept>

#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>

namespace tcemu {
namespace {

TEST(Presets, EveryPresetIsAValidDatapath) {
  const auto entries = all_presets();
  for (const PresetEntry& e : entries) {
    EXPECT_NO_THROW(validate(e.datapath))
        << e.arch << " " << e.instruction << " " << describe(e.datapath);
  }
  EXPECT_GE(entries.size(), 40u);
  // Each entry is the preset of its own key.
  for (const PresetEntry& e : entries) {
    EXPECT_EQ(preset(e.arch, e.datapath.input, e.datapath.accumulator, e.instruction), e.datapath);
  }
}

TEST(Presets, LiteratureParameters) {
  EXPECT_EQ(preset("sm70", formats::fp16, formats::fp32).block_terms, 4);
  EXPECT_EQ(preset("sm70", formats::fp16, formats::fp32).alignment_fraction_bits, 23);
  EXPECT_EQ(preset("sm80", formats::bf16, formats::fp32).block_terms, 8);
  EXPECT_EQ(preset("sm80", formats::tf32, formats::fp32).block_terms, 4);
  EXPECT_EQ(preset("sm80", formats::fp16, formats::fp32).alignment_fraction_bits, 24);
  EXPECT_EQ(preset("sm90", formats::fp16, formats::fp32).block_terms, 16);
  EXPECT_EQ(preset("sm90", formats::fp16, formats::fp32).alignment_fraction_bits, 25);
  EXPECT_EQ(preset("sm90", formats::fp16, formats::fp32).block_rounding, Rounding::toward_zero);
  EXPECT_EQ(preset("sm90", formats::fp16, formats::fp16).block_rounding, Rounding::nearest_even);
  EXPECT_EQ(preset("sm90", formats::e4m3, formats::fp32, "wgmma").block_terms, 32);
  EXPECT_EQ(preset("sm100", formats::e4m3, formats::fp32, "tcgen05").alignment_fraction_bits, 25);
  const Datapath rn = preset("exact-rn", formats::fp16, formats::fp32);
  EXPECT_FALSE(rn.alignment_fraction_bits);
  EXPECT_EQ(rn.block_rounding, Rounding::nearest_even);
}

TEST(Presets, MissingHardwareIsAClearError) {
  auto message = [](auto&& call) {
    try {
      call();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([] { preset("sm70", formats::bf16, formats::fp32); }),
            "no preset: sm70 mma.sync has no bf16 MMA with an fp32 accumulator");
  EXPECT_EQ(message([] { preset("sm80", formats::e4m3, formats::fp32); }),
            "no preset: sm80 mma.sync has no e4m3 MMA with an fp32 accumulator");
  EXPECT_EQ(message([] { preset("sm90", formats::bf16, formats::fp16); }),
            "no preset: sm90 mma.sync has no bf16 MMA with an fp16 accumulator");
  EXPECT_EQ(message([] { preset("sm80", formats::fp16, formats::fp32, "wgmma"); }),
            "no preset: sm80 wgmma has no fp16 MMA with an fp32 accumulator");
  EXPECT_EQ(message([] { preset("sm42", formats::fp16, formats::fp32); }),
            "unknown architecture preset 'sm42'");
}

TEST(Presets, ValidateNamesTheBadField) {
  Datapath dp = preset("sm90", formats::fp16, formats::fp32);
  dp.instruction_k = 24;
  EXPECT_THROW(validate(dp), std::invalid_argument);
  dp = preset("sm90", formats::fp16, formats::fp32);
  dp.k_group = 3;
  try {
    validate(dp);
    ADD_FAILURE() << "k_group 3 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("k_group"), std::string::npos);
  }
  dp = preset("sm90", formats::fp16, formats::fp32);
  dp.block_result_precision = 25;
  EXPECT_THROW(validate(dp), std::invalid_argument);
}

}  // namespace
}  // namespace tcemu
