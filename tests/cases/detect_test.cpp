// fit_datapath recovers a datapath from results it produced: the emulator of a preset (or of a
// preset with a field changed) stands in for the GPU.
#include <gtest/gtest.h>

#include <algorithm>

#include <tcemu/cases/case_generator.hpp>
#include <tcemu/cases/detect.hpp>
#include <tcemu/cases/mmasim_evidence.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>

namespace tcemu {
namespace {

// Cases of one instruction's K, labelled by `hardware`.
std::vector<MmaCase> recorded(const Datapath& hardware, std::size_t random) {
  std::vector<MmaCase> cases(random);
  CaseGenerator generator(hardware, 99);
  const auto k = static_cast<std::size_t>(hardware.instruction_k);
  for (MmaCase& c : cases) generator.next(c, k);
  for (NamedCase& nc :
       crafted_cases(hardware.input, hardware.accumulator, hardware.instruction_k)) {
    cases.push_back(nc.values);
  }
  for (MmaCase& c : cases) c.d = mma_element(hardware, c.a, c.b, c.c);
  return cases;
}

void expect_recovered(const Datapath& hardware) {
  const auto cases = recorded(hardware, 3000);
  const DatapathFit fit = fit_datapath(
      baseline_datapath(hardware.input, hardware.accumulator, hardware.instruction_k), cases);
  EXPECT_EQ(fit.mismatches, 0u) << "hardware " << describe(hardware) << "\nfound    "
                                << describe(fit.datapath);
  const auto decided = [&](const char* field) {
    return std::find(fit.undetermined.begin(), fit.undetermined.end(), field) ==
           fit.undetermined.end();
  };
  // Where the cases decide a field, it must be the hardware's value.
  if (decided("block_terms/k_group")) {
    EXPECT_EQ(fit.datapath.block_terms, hardware.block_terms);
    EXPECT_EQ(fit.datapath.k_group, hardware.k_group);
  }
  if (decided("alignment_fraction_bits")) {
    EXPECT_EQ(fit.datapath.alignment_fraction_bits, hardware.alignment_fraction_bits);
  }
  if (decided("block_rounding")) {
    EXPECT_EQ(fit.datapath.block_rounding, hardware.block_rounding);
  }
  if (decided("zero_sign")) {
    EXPECT_EQ(fit.datapath.zero_sign, hardware.zero_sign);
  }
  EXPECT_TRUE(decided("block_terms/k_group") || hardware.block_terms == hardware.instruction_k)
      << "block size left open for " << describe(hardware);
  EXPECT_TRUE(decided("alignment_fraction_bits")) << describe(hardware);
}

TEST(Detect, RecoversTheSm80AndSm90Presets) {
  expect_recovered(preset("sm80", formats::fp16, formats::fp32));
  expect_recovered(preset("sm80", formats::bf16, formats::fp32));
  expect_recovered(preset("sm90", formats::fp16, formats::fp32));
  expect_recovered(preset("sm90", formats::tf32, formats::fp32));
}

TEST(Detect, RecoversTheInterleavedFp8Halves) {
  expect_recovered(preset("sm90", formats::e4m3, formats::fp32));
}

TEST(Detect, RecoversAChangedField) {
  Datapath rn = preset("sm90", formats::bf16, formats::fp32);
  rn.block_rounding = Rounding::nearest_even;
  rn.alignment_fraction_bits = 27;
  expect_recovered(rn);
}

// Block-scaled cases of every evidence scenario (random, wide-exponent, cancelling, extreme
// scales), labelled by `hardware`, and the fit from the instruction's inputs alone.
DatapathFit fit_block_scaled(const Datapath& hardware, std::uint64_t count) {
  std::vector<MmaCase> cases;
  for (std::uint64_t i = 0; i < count; ++i) {
    MmaCase c = evidence_case(hardware, 7, 1, i);
    c.d = mma_case_element(hardware, c);
    cases.push_back(std::move(c));
  }
  const DatapathFit fit = fit_datapath(baseline_datapath(hardware, hardware.instruction_k), cases);
  EXPECT_EQ(fit.mismatches, 0u) << "hardware " << describe(hardware) << "\nfound    "
                                << describe(fit.datapath);
  return fit;
}

bool decided(const DatapathFit& fit, const char* field) {
  return std::find(fit.undetermined.begin(), fit.undetermined.end(), field) ==
         fit.undetermined.end();
}

TEST(Detect, RecoversTheBlockScaledFieldsOfNvfp4) {
  // MMA-Sim 2.1.1's mxf4nvf4: G = 16, F = 35, e_zero -139 (REFERENCE.md section 7).
  const Datapath nvfp4 =
      preset("sm100", formats::e2m1, formats::fp32, "tcgen05.mxf4nvf4.block16.ue4m3");
  const DatapathFit fit = fit_block_scaled(nvfp4, 4000);
  ASSERT_TRUE(decided(fit, "group_terms"));
  ASSERT_TRUE(decided(fit, "alignment_fraction_bits"));
  EXPECT_EQ(fit.datapath.block_scaling.group_terms, 16);
  EXPECT_EQ(fit.datapath.alignment_fraction_bits, nvfp4.alignment_fraction_bits);
  if (decided(fit, "alignment_floor")) {
    EXPECT_EQ(fit.datapath.alignment_floor, nvfp4.alignment_floor);
  }
}

TEST(Detect, RecoversAChangedBlockScaledField) {
  // mxf8f6f4 with each product's scales applied (G = 1), here with 4-product groups and 30 bits.
  Datapath changed = preset("sm100", formats::e4m3, formats::fp32, "tcgen05.mxf8f6f4.block32");
  changed.block_scaling.group_terms = 4;
  changed.alignment_fraction_bits = 30;
  const DatapathFit fit = fit_block_scaled(changed, 4000);
  ASSERT_TRUE(decided(fit, "group_terms"));
  ASSERT_TRUE(decided(fit, "alignment_fraction_bits"));
  EXPECT_EQ(fit.datapath.block_scaling.group_terms, 4);
  EXPECT_EQ(fit.datapath.alignment_fraction_bits, 30);
}

TEST(Detect, RefusesBlockScaledCasesWithoutTheirScales) {
  const Datapath mx = preset("sm100", formats::e4m3, formats::fp32, "tcgen05.mxf8f6f4.block32");
  std::vector<MmaCase> cases(1);
  cases[0].a.assign(32, 0);
  cases[0].b.assign(32, 0);
  cases[0].d = 0;
  EXPECT_THROW(fit_datapath(baseline_datapath(mx, 32), cases), std::invalid_argument);
}

TEST(Detect, RefusesCasesWithoutResults) {
  std::vector<MmaCase> cases(1);
  cases[0].a.assign(16, 0);
  cases[0].b.assign(16, 0);
  EXPECT_THROW(fit_datapath(preset("sm90", formats::fp16, formats::fp32), cases),
               std::invalid_argument);
}

}  // namespace
}  // namespace tcemu
