// The present GPU's mma.sync against the emulator preset of its architecture, bit for bit, on
// generated and crafted cases of every input format and accumulator it supports.
#include <gtest/gtest.h>

#include <tcemu/emulator/case_generator.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/mma_runner.hpp>

namespace tcemu {
namespace {

TEST(MmaRunner, EveryFormatMatchesThePresetOfThisGpu) {
  std::string why;
  const auto devices = gpu::list_devices(&why);
  if (devices.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  const std::string arch = devices.front().arch_preset();
  if (arch.empty()) GTEST_SKIP() << "no emulator preset for " << devices.front().name;
  const auto pairs =
      gpu::mma_sync_pairs(devices.front().compute_major * 10 + devices.front().compute_minor);
  for (const auto& [input, accumulator] : pairs) {
    const Datapath dp = preset(arch, input, accumulator);
    const auto k = static_cast<std::size_t>(gpu::mma_sync_k(input));
    std::vector<MmaCase> cases(20000);
    CaseGenerator generator(dp, 2026);
    for (MmaCase& c : cases) generator.next(c, k);
    for (NamedCase& c : crafted_cases(input, accumulator, static_cast<int>(k))) {
      cases.push_back(c.values);
    }
    const std::vector<std::uint32_t> gpu_bits = gpu::run_mma_sync(input, accumulator, cases);
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const std::uint32_t emulated = mma_element(dp, cases[i].a, cases[i].b, cases[i].c);
      if (emulated == gpu_bits[i]) continue;
      if (++mismatches <= 3) {
        ADD_FAILURE() << arch << " " << input.name << " -> " << accumulator.name << ": GPU "
                      << to_hex(accumulator, gpu_bits[i]) << ", emulator "
                      << to_hex(accumulator, emulated) << " on\n  "
                      << format_case_line(cases[i], input, accumulator);
      }
    }
    EXPECT_EQ(mismatches, 0u) << arch << " " << input.name << " -> " << accumulator.name;
    std::printf("%s mma.sync %s -> %s: %zu cases, %zu mismatches\n", arch.c_str(),
                std::string(input.name).c_str(), std::string(accumulator.name).c_str(),
                cases.size(), mismatches);
  }
}

TEST(MmaRunner, WrongKIsRefused) {
  std::vector<MmaCase> cases(1);
  cases[0].a.assign(8, 0);
  cases[0].b.assign(8, 0);
  EXPECT_THROW(gpu::run_mma_sync(formats::fp16, formats::fp32, cases), std::invalid_argument);
}

}  // namespace
}  // namespace tcemu
