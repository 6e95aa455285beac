// The present GPU's sparse MMA (mma.sp m16n8k8, m16n8k16, m16n8k32, and fp8 m16n8k64) against the
// sparse presets of its architecture, bit for bit, on the probe's random and crafted cases of every
// format pair; and the runner's refusals.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <tcemu/cases/sparse_probe_cases.hpp>
#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/sparse_presets.hpp>
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
  ASSERT_EQ(gpu::sparse_probe_instructions(cc).size(), cc >= 89 ? 4u : 3u);
  // Every shape the runner issues has a preset (fp8 mma.sp.m16n8k64 on sm_89+).
  for (std::string_view instruction : sparse_instruction_names(arch)) {
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

// The fp8 runner's fragments and metadata, whatever the datapath: small integers whose sums are
// exact in every fp8 datapath (products and partial sums below 2^12), with random metadata and
// distinct values in every row of B, so a kept a meeting a wrong row of B changes d.
TEST(SparseRunner, Fp8FragmentsGiveExactSums) {
  std::string why;
  const auto devices = gpu::list_devices(&why);
  if (devices.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  if (devices.front().compute_major * 10 + devices.front().compute_minor < 89) {
    GTEST_SKIP() << devices.front().name << " has no fp8 mma.sp (sm_89+)";
  }
  // e4m3 and e5m2 bits of the integers 0-7 (e4m3 bias 7, e5m2 bias 15, 3 and 2 fraction bits).
  constexpr std::uint32_t kE4m3[8] = {0x00, 0x38, 0x40, 0x44, 0x48, 0x4A, 0x4C, 0x4E};
  constexpr std::uint32_t kE5m2[8] = {0x00, 0x3C, 0x40, 0x42, 0x44, 0x45, 0x46, 0x47};
  constexpr std::uint8_t kPairs[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
  for (const FloatFormat& input : {formats::e4m3, formats::e5m2}) {
    const std::uint32_t* bits = input == formats::e4m3 ? kE4m3 : kE5m2;
    for (int v = 0; v < 8; ++v) ASSERT_EQ(to_double(input, bits[v]), v) << input.name;
    std::mt19937 rng(64);
    std::vector<SparseMmaCase> cases;
    std::vector<double> sums;
    std::size_t distinct_index_words = 0;
    for (int n = 0; n < 2000; ++n) {
      SparseMmaCase c;
      double sum = 0;
      std::vector<int> b(64);
      for (int& v : b) v = static_cast<int>(rng() % 8);
      for (int v : b) c.b.push_back(bits[v]);
      for (int group = 0; group < 16; ++group) {
        const std::uint8_t* pair = kPairs[rng() % 6];
        for (int e = 0; e < 2; ++e) {
          const int a = static_cast<int>(rng() % 8);
          c.a.push_back(bits[a]);
          c.index.push_back(pair[e]);
          sum += a * b[static_cast<std::size_t>(4 * group + pair[e])];
        }
      }
      // The four 16-bit pieces of the row's metadata (one per thread of a quad) not all equal.
      for (std::size_t j = 8; j < 32; ++j) {
        if (c.index[j] != c.index[j % 8]) {
          ++distinct_index_words;
          break;
        }
      }
      c.c = 0;
      cases.push_back(c);
      sums.push_back(sum);
    }
    ASSERT_GT(distinct_index_words, 1900u);  // the generator varies the metadata
    const std::vector<std::uint32_t> d =
        gpu::run_sparse("mma.sp.m16n8k64", input, formats::fp32, cases);
    ASSERT_EQ(d.size(), cases.size());
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < d.size(); ++i) {
      float got = 0;
      std::memcpy(&got, &d[i], sizeof got);
      if (static_cast<double>(got) != sums[i] && ++wrong <= 3) {
        ADD_FAILURE() << input.name << ": GPU " << got << ", exact " << sums[i] << " for "
                      << format_sparse_case_line(cases[i], input, formats::fp32);
      }
    }
    EXPECT_EQ(wrong, 0u) << input.name;
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
  EXPECT_THROW(gpu::run_sparse("mma.sp.m16n8k64", formats::e4m3, formats::fp16, cases),
               std::invalid_argument);  // fp8 with an fp16 accumulator: no runner
  EXPECT_THROW(gpu::run_sparse("mma.sp.m16n8k64", formats::fp16, formats::fp32, cases),
               std::invalid_argument);  // fp16 has no k64 sparse shape
  EXPECT_THROW(gpu::run_sparse("mma.sp.m16n8k64", formats::e4m3, formats::fp32, cases),
               std::invalid_argument);  // K = 16 for the k64 shape
  c.index[1] = 0;
  EXPECT_THROW(gpu::run_sparse("mma.sp.m16n8k16", formats::fp16, formats::fp32,
                               std::vector<SparseMmaCase>{c}),
               std::invalid_argument);  // indices 00
}

}  // namespace
}  // namespace tcemu
