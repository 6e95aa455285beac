// The present GPU's sparse MMA (mma.sp m16n8k8, m16n8k16 and m16n8k32) against the sparse presets
// of its architecture, bit for bit, on the probe's random and crafted cases of every format pair;
// and the runner's refusals.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <tcemu/emulator/sparse_presets.hpp>
#include <tcemu/emulator/sparse_probe_cases.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/sparse_runner.hpp>

namespace tcemu {
namespace {

TEST(SparseRunner, EveryShapeMatchesItsSparsePreset) {
  std::string why;
  const auto devices = gpu::list_devices(&why);
  if (devices.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  const std::string arch = devices.front().arch_preset();
  const int cc = devices.front().compute_major * 10 + devices.front().compute_minor;
  if (sparse_instruction_names(arch).empty()) {
    GTEST_SKIP() << "no sparse preset for " << devices.front().name;
  }
  ASSERT_EQ(gpu::sparse_probe_instructions(cc).size(), 3u);
  for (std::string_view instruction : gpu::sparse_probe_instructions(cc)) {
    for (const auto& [input, accumulator] : gpu::sparse_pairs(instruction)) {
      const Datapath dp = sparse_preset(arch, input, accumulator, instruction);
      const SparseProbeCases probe =
          sparse_probe_cases(dp, sparse_instruction_k(instruction), 20000, 2026);
      const std::vector<std::uint32_t> d =
          gpu::run_sparse(instruction, input, accumulator, probe.cases);
      ASSERT_EQ(d.size(), probe.cases.size());
      std::size_t mismatches = 0;
      for (std::size_t i = 0; i < d.size(); ++i) {
        if (sparse_mma_element(dp, probe.cases[i]) == d[i]) continue;
        if (++mismatches <= 3) {
          ADD_FAILURE() << instruction << " " << input.name << " -> " << accumulator.name
                        << ": GPU " << to_hex(accumulator, d[i]) << " for "
                        << format_sparse_case_line(probe.cases[i], input, accumulator);
        }
      }
      EXPECT_EQ(mismatches, 0u) << instruction << " " << input.name << " -> " << accumulator.name;
    }
  }
}

TEST(SparseRunner, RefusesWhatItDoesNotRun) {
  SparseMmaCase c{.a = std::vector<std::uint32_t>(8, 0x3C00),
                  .index = {0, 1, 0, 1, 0, 1, 0, 1},
                  .b = std::vector<std::uint32_t>(16, 0x3C00),
                  .c = 0,
                  .d = std::nullopt};
  const std::vector<SparseMmaCase> cases{c};
  EXPECT_THROW(gpu::run_sparse("mma.sp.m16n8k32", formats::tf32, formats::fp32, cases),
               std::invalid_argument);
  EXPECT_THROW(gpu::run_sparse("mma.sp.m16n8k16", formats::tf32, formats::fp32, cases),
               std::invalid_argument);  // indices 01: no k of the pair 2, 3
  EXPECT_THROW(gpu::run_sparse("mma.sp.m16n8k32", formats::fp16, formats::fp32, cases),
               std::invalid_argument);  // K = 16 for a k32 shape
  c.index[1] = 0;
  EXPECT_THROW(gpu::run_sparse("mma.sp.m16n8k16", formats::fp16, formats::fp32,
                               std::vector<SparseMmaCase>{c}),
               std::invalid_argument);  // indices 00
}

}  // namespace
}  // namespace tcemu
