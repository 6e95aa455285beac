// The present GPU's integer mma.sync (IMMA) against the emulator preset of its architecture and
// shape, bit for bit, without and with .satfinite, on random and crafted cases of every shape
// and pair of operand formats.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <tcemu/cases/integer_probe_cases.hpp>
#include <tcemu/emulator/integer_presets.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/imma_runner.hpp>

namespace tcemu {
namespace {

TEST(ImmaRunner, EveryShapeMatchesItsPreset) {
  const auto devices = gpu::list_devices();
  if (devices.empty()) GTEST_SKIP() << "no CUDA device";
  const gpu::DeviceInfo& device = devices.front();
  const int cc = device.compute_major * 10 + device.compute_minor;
  if (device.arch_preset().empty() || cc < 75) {
    GTEST_SKIP() << device.name << " has no integer tensor cores with a preset";
  }
  using namespace integer_formats;
  const std::pair<IntegerFormat, IntegerFormat> pairs[] = {{s8, s8}, {s8, u8}, {u8, s8}, {u8, u8},
                                                           {s4, s4}, {s4, u4}, {u4, s4}, {u4, u4}};
  std::size_t shapes = 0;
  for (const auto& [a, b] : pairs) {
    for (const std::string_view shape : gpu::imma_sync_shapes(cc, a.bits)) {
      ++shapes;
      for (const bool satfinite : {false, true}) {
        const IntegerDatapath dp = integer_preset(device.arch_preset(), a, b, shape, satfinite);
        const IntegerProbeCases probe = integer_probe_cases(a, b, dp.instruction_k, 5000, 14);
        const std::vector<std::int32_t> d = gpu::run_imma_sync(shape, a, b, satfinite, probe.cases);
        ASSERT_EQ(d.size(), probe.cases.size());
        std::size_t mismatches = 0;
        for (std::size_t i = 0; i < d.size(); ++i) {
          const IntegerMmaCase& c = probe.cases[i];
          const std::int32_t expected = integer_mma_element(dp, c.a, c.b, c.c);
          if (expected != d[i] && ++mismatches <= 3) {
            ADD_FAILURE() << shape << (satfinite ? ".satfinite " : " ") << a.name << " x " << b.name
                          << " " << (probe.names[i].empty() ? "random" : probe.names[i]) << ": GPU "
                          << to_hex(s32, d[i]) << ", emulated " << to_hex(s32, expected) << "\n  "
                          << format_integer_case_line(c, a, b);
          }
        }
        EXPECT_EQ(mismatches, 0u) << shape << " " << a.name << " x " << b.name;
      }
    }
  }
  EXPECT_EQ(shapes, cc >= 80 ? 24u : 8u);
}

TEST(ImmaRunner, WgmmaMatchesItsPreset) {
  const auto devices = gpu::list_devices();
  if (devices.empty()) GTEST_SKIP() << "no CUDA device";
  const gpu::DeviceInfo& device = devices.front();
  if (device.compute_major != 9 || device.compute_minor != 0) {
    GTEST_SKIP() << device.name << " has no wgmma (sm_90a only)";
  }
  using namespace integer_formats;
  const std::pair<IntegerFormat, IntegerFormat> pairs[] = {{s8, s8}, {s8, u8}, {u8, s8}, {u8, u8}};
  for (const auto& [a, b] : pairs) {
    for (const bool satfinite : {false, true}) {
      const IntegerDatapath dp = integer_preset("sm90", a, b, "wgmma.m64nNk32", satfinite);
      const IntegerProbeCases probe = integer_probe_cases(a, b, 32, 5000, 15);
      const std::vector<std::int32_t> d = gpu::run_imma_wgmma(a, b, satfinite, probe.cases);
      ASSERT_EQ(d.size(), probe.cases.size());
      std::size_t mismatches = 0;
      for (std::size_t i = 0; i < d.size(); ++i) {
        const IntegerMmaCase& c = probe.cases[i];
        const std::int32_t expected = integer_mma_element(dp, c.a, c.b, c.c);
        if (expected != d[i] && ++mismatches <= 3) {
          ADD_FAILURE() << "wgmma" << (satfinite ? ".satfinite " : " ") << a.name << " x " << b.name
                        << " " << (probe.names[i].empty() ? "random" : probe.names[i]) << ": GPU "
                        << to_hex(s32, d[i]) << ", emulated " << to_hex(s32, expected) << "\n  "
                        << format_integer_case_line(c, a, b);
        }
      }
      EXPECT_EQ(mismatches, 0u) << "wgmma " << a.name << " x " << b.name;
    }
  }
  IntegerMmaCase four{std::vector<std::int32_t>(32, 1), std::vector<std::int32_t>(32, 1), 0,
                      std::nullopt};
  EXPECT_THROW(gpu::run_imma_wgmma(s4, s4, false, {&four, 1}), std::invalid_argument);
}

TEST(ImmaRunner, RefusesCasesThatDoNotFitTheShape) {
  using namespace integer_formats;
  IntegerMmaCase short_case{{1, 2}, {3, 4}, 0, std::nullopt};
  EXPECT_THROW(gpu::run_imma_sync("mma.sync.m16n8k32", s8, s8, false, {&short_case, 1}),
               std::invalid_argument);
  IntegerMmaCase out_of_range{std::vector<std::int32_t>(32, 8), std::vector<std::int32_t>(32, 1), 0,
                              std::nullopt};
  EXPECT_THROW(gpu::run_imma_sync("mma.sync.m16n8k32", s4, s4, false, {&out_of_range, 1}),
               std::invalid_argument);
  EXPECT_THROW(gpu::run_imma_sync("mma.sync.m16n8k64", s8, s8, false, {}), std::invalid_argument);
  EXPECT_THROW(gpu::run_imma_sync("mma.sync.m16n8k32", s8, u4, false, {}), std::invalid_argument);
}

}  // namespace
}  // namespace tcemu
