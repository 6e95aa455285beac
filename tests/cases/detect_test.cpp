// fit_datapath recovers a datapath from results it produced: the emulator of a preset (or of a
// preset with a field changed) stands in for the GPU.
#include <gtest/gtest.h>

#include <algorithm>

#include <tcemu/cases/case_generator.hpp>
#include <tcemu/cases/detect.hpp>
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

TEST(Detect, RefusesCasesWithoutResults) {
  std::vector<MmaCase> cases(1);
  cases[0].a.assign(16, 0);
  cases[0].b.assign(16, 0);
  EXPECT_THROW(fit_datapath(preset("sm90", formats::fp16, formats::fp32), cases),
               std::invalid_argument);
}

}  // namespace
}  // namespace tcemu
