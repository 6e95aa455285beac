#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
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
  EXPECT_GE(entries.size(), 90u);
  // Each entry is the preset of its own key.
  for (const PresetEntry& e : entries) {
    EXPECT_EQ(preset(e.arch, e.datapath.input, e.datapath.b_format(), e.datapath.accumulator,
                     e.instruction),
              e.datapath)
        << e.arch << " " << e.instruction;
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

std::string message_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const std::invalid_argument& e) {
    return std::string(e.what());
  }
  return "no error";
}

TEST(Presets, MissingHardwareIsAClearError) {
  const auto starts = [](const std::string& text, const std::string& prefix) {
    return text.starts_with(prefix) ? testing::AssertionSuccess()
                                    : testing::AssertionFailure() << text;
  };
  EXPECT_TRUE(starts(message_of([] { preset("sm70", formats::bf16, formats::fp32); }),
                     "no preset: sm70 mma.sync has no bf16 MMA with an fp32 accumulator; sm70 "
                     "has no bf16 -> fp32 MMA at all (its instructions: mma.sync, "
                     "mma.sync.m8n8k4, wmma.m16n16k16"));
  EXPECT_TRUE(starts(message_of([] { preset("sm80", formats::e4m3, formats::fp32); }),
                     "no preset: sm80 mma.sync has no e4m3 MMA with an fp32 accumulator"));
  EXPECT_TRUE(starts(message_of([] { preset("sm90", formats::bf16, formats::fp16); }),
                     "no preset: sm90 mma.sync has no bf16 MMA with an fp16 accumulator"));
  EXPECT_TRUE(starts(message_of([] { preset("sm80", formats::fp16, formats::fp32, "wgmma"); }),
                     "no preset: sm80 wgmma has no fp16 MMA with an fp32 accumulator; sm80 has "
                     "no instruction 'wgmma'; sm80 runs fp16 -> fp32 on: mma.sync, "
                     "mma.sync.m16n8k8, mma.sync.m16n8k16, wmma.m16n16k16, wmma.m32n8k16, "
                     "wmma.m8n32k16"));
  EXPECT_EQ(message_of([] { preset("sm42", formats::fp16, formats::fp32); }),
            "unknown architecture preset 'sm42'");
  // A shape of another format: tf32 has m16n8k4, fp16 has not.
  EXPECT_TRUE(
      starts(message_of([] { preset("sm90", formats::fp16, formats::fp32, "mma.sync.m16n8k4"); }),
             "no preset: sm90 mma.sync.m16n8k4 has no fp16 MMA with an fp32 accumulator; sm90 "
             "runs fp16 -> fp32 on: mma.sync, mma.sync.m8n8k4, mma.sync.m16n8k8, "
             "mma.sync.m16n8k16, wmma.m16n16k16, wmma.m32n8k16, wmma.m8n32k16, wgmma"));
  EXPECT_NE(message_of([] {
              preset("sm90", formats::fp16, formats::fp32, "mma.sync.m16n8k64");
            }).find("sm90 has no instruction 'mma.sync.m16n8k64'"),
            std::string::npos);
  // wgmma's N: multiples of 8 up to 256; its K is the format's.
  EXPECT_NO_THROW(preset("sm90", formats::fp16, formats::fp32, "wgmma.m64n256k16"));
  EXPECT_THROW(preset("sm90", formats::fp16, formats::fp32, "wgmma.m64n12k16"),
               std::invalid_argument);
  EXPECT_THROW(preset("sm90", formats::fp16, formats::fp32, "wgmma.m64n8k32"),
               std::invalid_argument);
  EXPECT_THROW(preset("sm90", formats::fp16, formats::fp32, "wgmma.m64n264k16"),
               std::invalid_argument);
}

TEST(Presets, EveryShapeHasItsOwnK) {
  using formats::bf16, formats::e4m3, formats::fp16, formats::fp32, formats::tf32;
  // sm80's m16n8k16 runs as two 8-term halves; its m16n8k8 is one such half.
  EXPECT_EQ(preset("sm80", fp16, fp32, "mma.sync.m16n8k16").block_terms, 8);
  EXPECT_EQ(preset("sm80", fp16, fp32, "mma.sync.m16n8k16").instruction_k, 16);
  EXPECT_EQ(preset("sm80", fp16, fp32, "mma.sync.m16n8k8").instruction_k, 8);
  EXPECT_EQ(preset("sm80", tf32, fp32, "mma.sync.m16n8k4").instruction_k, 4);
  EXPECT_EQ(preset("sm90", bf16, fp32, "mma.sync.m16n8k8").instruction_k, 8);
  EXPECT_EQ(preset("sm90", e4m3, fp32, "mma.sync.m16n8k16").instruction_k, 16);
  // "mma.sync" is the largest-K shape of the format.
  EXPECT_EQ(preset("sm90", fp16, fp32), preset("sm90", fp16, fp32, "mma.sync.m16n8k16"));
  EXPECT_EQ(preset("sm90", e4m3, fp32), preset("sm90", e4m3, fp32, "mma.sync.m16n8k32"));
  EXPECT_EQ(preset("sm80", tf32, fp32), preset("sm80", tf32, fp32, "mma.sync.m16n8k8"));
  EXPECT_EQ(preset("sm70", fp16, fp32), preset("sm70", fp16, fp32, "mma.sync.m8n8k4"));
  // WMMA has the datapath of the shape it compiles to, and the K of its own name.
  EXPECT_EQ(wmma_target("sm70", "wmma.m16n16k16", fp16), "mma.sync.m8n8k4");
  EXPECT_EQ(preset("sm70", fp16, fp32, "wmma.m16n16k16").instruction_k, 4);
  EXPECT_EQ(instruction_shape_k("sm70", fp16, fp32, "wmma.m16n16k16"), 16);
  // tf32 m16n16k8 is four HMMA.1684 on sm90: a chain of two k4 instructions per element.
  EXPECT_EQ(preset("sm90", tf32, fp32, "wmma.m16n16k8"),
            preset("sm90", tf32, fp32, "mma.sync.m16n8k4"));
  EXPECT_EQ(instruction_shape_k("sm90", tf32, fp32, "wmma.m16n16k8"), 8);
  // m8n8k4 on sm90 is ptxas's FMA emulation: fp32 accumulator only.
  EXPECT_EQ(preset("sm90", fp16, fp32, "mma.sync.m8n8k4").block_terms, 1);
  EXPECT_THROW(preset("sm90", fp16, fp16, "mma.sync.m8n8k4"), std::invalid_argument);
  EXPECT_EQ(wmma_target("sm90", "wmma.m16n16k16", e4m3), "");
  // Every listed name resolves for some format pair, and only the named shapes check K.
  for (std::string_view arch : preset_names()) {
    for (std::string_view name : instruction_names(arch)) {
      bool some = false;
      for (const PresetEntry& e : all_presets()) {
        some = some ||
               (e.arch == arch &&
                !instruction_names(arch, e.datapath.input, e.datapath.accumulator).empty() &&
                std::ranges::count(
                    instruction_names(arch, e.datapath.input, e.datapath.accumulator), name) == 1);
      }
      EXPECT_TRUE(some) << arch << " " << name;
    }
  }
  EXPECT_NO_THROW(check_shape_k("sm90", fp16, fp32, "mma.sync.m16n8k8", 24));
  EXPECT_NO_THROW(check_shape_k("sm90", fp16, fp32, "mma.sync", 24));
  EXPECT_EQ(message_of([] { check_shape_k("sm90", fp16, fp32, "mma.sync.m16n8k16", 24); }),
            "K = 24 is not a multiple of mma.sync.m16n8k16's K = 16; sm90 runs fp16 -> fp32 on: "
            "mma.sync, mma.sync.m8n8k4, mma.sync.m16n8k8, mma.sync.m16n8k16, wmma.m16n16k16, "
            "wmma.m32n8k16, wmma.m8n32k16, wgmma (mma.sync, wgmma and tcgen05 take any K as a "
            "chain of instructions)");
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
