// The present GPU's mma.sync against the emulator preset of its architecture, bit for bit, on
// generated and crafted cases of every input format and accumulator it supports.
#include <gtest/gtest.h>

#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include <tcemu/emulator/case_generator.hpp>
#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/mma_runner.hpp>
#include <tcemu/test/same_bits.hpp>

namespace tcemu {
namespace {

using Runner = std::vector<std::uint32_t> (*)(const FloatFormat&, const FloatFormat&,
                                              std::span<const MmaCase>);

// 20000 generated and all crafted cases per format pair through `run`, against the preset of
// this GPU's architecture for `instruction`.
void expect_gpu_matches_preset(const std::string& arch, const std::string& instruction,
                               const std::vector<std::pair<FloatFormat, FloatFormat>>& pairs,
                               Runner run) {
  for (const auto& [input, accumulator] : pairs) {
    const Datapath dp = preset(arch, input, accumulator, instruction);
    const auto k = static_cast<std::size_t>(gpu::mma_sync_k(input));
    std::vector<MmaCase> cases(20000);
    CaseGenerator generator(dp, 2026);
    for (MmaCase& c : cases) generator.next(c, k);
    for (NamedCase& c : crafted_cases(input, accumulator, static_cast<int>(k))) {
      cases.push_back(c.values);
    }
    const std::vector<std::uint32_t> gpu_bits = run(input, accumulator, cases);
    std::vector<std::uint32_t> emulated(cases.size());
    for (std::size_t i = 0; i < cases.size(); ++i) {
      emulated[i] = mma_element(dp, cases[i].a, cases[i].b, cases[i].c);
    }
    // One case a row: the emulator's result expected, the GPU's got, the case line the inputs.
    const test::BitComparison same = test::compare_bits(
        emulated, gpu_bits, static_cast<std::int64_t>(cases.size()), 1,
        {.inputs =
             [&](std::int64_t i, std::int64_t) {
               return "case " +
                      format_case_line(cases[static_cast<std::size_t>(i)], input, accumulator);
             },
         .value =
             [&](std::uint64_t bits) {
               return test::fp32_value(convert(accumulator, formats::fp32,
                                               static_cast<std::uint32_t>(bits),
                                               Rounding::nearest_even));
             }});
    EXPECT_TRUE(same.result) << arch << " " << instruction << " " << input.name << " -> "
                             << accumulator.name;
    std::printf("%s %s %s -> %s: %zu cases, %lld mismatches\n", arch.c_str(), instruction.c_str(),
                std::string(input.name).c_str(), std::string(accumulator.name).c_str(),
                cases.size(), static_cast<long long>(same.differing));
  }
}

TEST(MmaRunner, EveryFormatMatchesThePresetOfThisGpu) {
  std::string why;
  const auto devices = gpu::list_devices(&why);
  if (devices.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  const std::string arch = devices.front().arch_preset();
  if (arch.empty()) GTEST_SKIP() << "no emulator preset for " << devices.front().name;
  const int cc = devices.front().compute_major * 10 + devices.front().compute_minor;
  expect_gpu_matches_preset(arch, "mma.sync", gpu::mma_sync_pairs(cc), gpu::run_mma_sync);
}

TEST(WgmmaRunner, EveryFormatMatchesTheWgmmaPresetOfThisGpu) {
  std::string why;
  const auto devices = gpu::list_devices(&why);
  if (devices.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  const int cc = devices.front().compute_major * 10 + devices.front().compute_minor;
  if (gpu::wgmma_pairs(cc).empty()) GTEST_SKIP() << devices.front().name << " has no wgmma";
  expect_gpu_matches_preset(devices.front().arch_preset(), "wgmma", gpu::wgmma_pairs(cc),
                            gpu::run_wgmma);
}

TEST(WgmmaRunner, ElsewhereItIsRefused) {
  std::string why;
  const auto devices = gpu::list_devices(&why);
  if (!devices.empty() && devices.front().compute_major == 9 &&
      devices.front().compute_minor == 0) {
    GTEST_SKIP() << "this GPU has wgmma";
  }
  std::vector<MmaCase> cases(1);
  cases[0].a.assign(16, 0);
  cases[0].b.assign(16, 0);
  EXPECT_THROW(gpu::run_wgmma(formats::fp16, formats::fp32, cases), std::runtime_error);
}

TEST(MmaRunner, WrongKIsRefused) {
  std::vector<MmaCase> cases(1);
  cases[0].a.assign(8, 0);
  cases[0].b.assign(8, 0);
  EXPECT_THROW(gpu::run_mma_sync(formats::fp16, formats::fp32, cases), std::invalid_argument);
}

}  // namespace
}  // namespace tcemu
