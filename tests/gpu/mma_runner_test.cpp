// The present GPU's MMA instructions (mma.sync, every probed instruction shape, wgmma) against the
// emulator preset of its architecture for that instruction, bit for bit, on generated and crafted
// cases of every input format and accumulator each takes.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <tcemu/cases/case_generator.hpp>
#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/pair_fma_emulation.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/mma_runner.hpp>
#include <tcemu/test/same_bits.hpp>

namespace tcemu {
namespace {

using Runner = std::function<std::vector<std::uint32_t>(const FloatFormat&, const FloatFormat&,
                                                        std::span<const MmaCase>)>;

// `generated` generated and all crafted cases per format pair through `run`, against the preset
// of this GPU's architecture for `instruction`, of that instruction's K.
void expect_gpu_matches_preset(const std::string& arch, const std::string& instruction,
                               const std::vector<std::pair<FloatFormat, FloatFormat>>& pairs,
                               const Runner& run, std::size_t generated = 20000) {
  ASSERT_FALSE(pairs.empty()) << instruction;
  for (const auto& [input, accumulator] : pairs) {
    const Datapath dp = preset(arch, input, accumulator, instruction);
    const auto k =
        static_cast<std::size_t>(instruction_shape_k(arch, input, accumulator, instruction));
    std::vector<MmaCase> cases(generated);
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
  expect_gpu_matches_preset(
      devices.front().arch_preset(), "wgmma", gpu::wgmma_pairs(cc),
      [](const FloatFormat& in, const FloatFormat& acc, std::span<const MmaCase> cases) {
        return gpu::run_wgmma(in, acc, cases);  // N = 8
      });
}

// Every instruction shape the probe runners issue (mma.sync m8n8k4 to m16n8k32, the WMMA shapes,
// wgmma), 5000 generated and all crafted cases per shape and format pair.
TEST(ShapeRunner, EveryShapeMatchesItsPresetOfThisGpu) {
  std::string why;
  const auto devices = gpu::list_devices(&why);
  if (devices.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  const std::string arch = devices.front().arch_preset();
  if (arch != "sm90") GTEST_SKIP() << "the shape presets are measured on sm90 only";
  const int cc = devices.front().compute_major * 10 + devices.front().compute_minor;
  for (std::string_view name : gpu::probe_instructions(cc)) {
    const std::string instruction(name);
    expect_gpu_matches_preset(
        arch, instruction, gpu::instruction_pairs(name, cc),
        [&](const FloatFormat& in, const FloatFormat& acc, std::span<const MmaCase> cases) {
          return gpu::run_instruction(instruction, in, acc, cases);
        },
        5000);
  }
}

// wgmma at every N the runner issues beyond 8 (16, 64, 128, 256; fp32 and fp16 accumulators):
// the one wgmma preset of the pair, whatever N.
TEST(WgmmaRunner, EveryWideShapeMatchesTheWgmmaPresetOfThisGpu) {
  std::string why;
  const auto devices = gpu::list_devices(&why);
  if (devices.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  const int cc = devices.front().compute_major * 10 + devices.front().compute_minor;
  if (gpu::wgmma_pairs(cc).empty()) GTEST_SKIP() << devices.front().name << " has no wgmma";
  ASSERT_EQ(gpu::wide_wgmma_instructions(cc).size(), 12u);
  for (std::string_view name : gpu::wide_wgmma_instructions(cc)) {
    const std::string instruction(name);
    expect_gpu_matches_preset(
        devices.front().arch_preset(), instruction, gpu::instruction_pairs(name, cc),
        [&](const FloatFormat& in, const FloatFormat& acc, std::span<const MmaCase> cases) {
          return gpu::run_instruction(instruction, in, acc, cases);
        },
        5000);
  }
}

TEST(WgmmaRunner, WideShapesRefuseWhatTheyDoNotRun) {
  std::vector<MmaCase> cases(1);
  cases[0].a.assign(16, 0);
  cases[0].b.assign(16, 0);
  // N = 32 is not issued (with either accumulator), K = 8 is tf32's.
  EXPECT_THROW(gpu::run_instruction("wgmma.m64n32k16", formats::fp16, formats::fp32, cases),
               std::invalid_argument);
  EXPECT_THROW(gpu::run_wgmma(formats::fp16, formats::fp16, cases, 32), std::invalid_argument);
  EXPECT_THROW(gpu::run_instruction("wgmma.m64n16k8", formats::fp16, formats::fp32, cases),
               std::invalid_argument);
  EXPECT_EQ(gpu::instruction_pairs("wgmma.m64n64k8", 90).size(), 1u);  // tf32 -> fp32
  // fp16 -> fp32, fp16 -> fp16, bf16 -> fp32; e4m3 and e5m2 -> fp32 and fp16.
  EXPECT_EQ(gpu::instruction_pairs("wgmma.m64n64k16", 90).size(), 3u);
  EXPECT_EQ(gpu::instruction_pairs("wgmma.m64n256k32", 90).size(), 4u);
  EXPECT_TRUE(gpu::wide_wgmma_instructions(89).empty());
}

// sm90 m8n8k4 fp16 -> fp16 (ptxas's fp32 emulation, no preset) against its exact model,
// pair_fma_emulation.hpp: generated cases (c in fp16) and the crafted ones.
TEST(ShapeRunner, M8n8k4Fp16AccumulatorIsThePairFmaEmulation) {
  std::string why;
  const auto devices = gpu::list_devices(&why);
  if (devices.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  if (devices.front().arch_preset() != "sm90") GTEST_SKIP() << "the model is sm90's";
  Datapath shape = preset("sm90", formats::fp16, formats::fp32, "mma.sync.m8n8k4");
  shape.accumulator = formats::fp16;
  shape.block_result_precision = 11;
  std::vector<MmaCase> cases(50000);
  CaseGenerator generator(shape, 2026);
  for (MmaCase& c : cases) generator.next(c, 4);
  for (NamedCase& c : crafted_cases(formats::fp16, formats::fp16, 4)) cases.push_back(c.values);
  const std::vector<std::uint32_t> d =
      gpu::run_instruction("mma.sync.m8n8k4", formats::fp16, formats::fp16, cases);
  ASSERT_EQ(d.size(), cases.size());
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::uint32_t model = sm90_m8n8k4_fp16_element(cases[i].a, cases[i].b, cases[i].c);
    if (model != d[i] && ++mismatches <= 3) {
      ADD_FAILURE() << "GPU " << to_hex(formats::fp16, d[i]) << ", model "
                    << to_hex(formats::fp16, model) << " for "
                    << format_case_line(cases[i], formats::fp16, formats::fp16);
    }
  }
  EXPECT_EQ(mismatches, 0u) << "of " << cases.size();
}

TEST(ShapeRunner, WrongKAndMissingShapesAreRefused) {
  std::vector<MmaCase> cases(1);
  cases[0].a.assign(16, 0);
  cases[0].b.assign(16, 0);
  EXPECT_THROW(gpu::run_instruction("mma.sync.m16n8k8", formats::fp16, formats::fp32, cases),
               std::invalid_argument);
  EXPECT_THROW(gpu::run_instruction("mma.sync.m16n8k64", formats::fp16, formats::fp32, cases),
               std::invalid_argument);
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
