// The present GPU's fp64 mma.sync (DMMA) against the emulator preset of its architecture and
// shape, bit for bit, on random and crafted cases of every shape; and the refusals of the runner.
// Where the preset's order or NaN is wrong this fails with the cases that show it: then
// `tcemu probe --instr dmma` prints which neighbour of the preset the GPU follows.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/cases/fp64_probe_cases.hpp>
#include <tcemu/emulator/fp64_presets.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/dmma_runner.hpp>

namespace tcemu {
namespace {

TEST(DmmaRunner, ShapesFollowThePtxTargets) {
  using Names = std::vector<std::string_view>;
  EXPECT_TRUE(gpu::dmma_sync_shapes(75).empty());
  EXPECT_EQ(gpu::dmma_sync_shapes(86), (Names{"mma.sync.m8n8k4"}));
  EXPECT_EQ(gpu::dmma_sync_shapes(90), (Names{"mma.sync.m8n8k4", "mma.sync.m16n8k4",
                                              "mma.sync.m16n8k8", "mma.sync.m16n8k16"}));
  const std::vector<Fp64MmaCase> wrong_k = {Fp64MmaCase{{0, 0}, {0, 0}, 0, {}}};
  EXPECT_THROW(gpu::run_dmma_sync("mma.sync.m16n8k16", wrong_k), std::invalid_argument);
  EXPECT_THROW(gpu::run_dmma_sync("mma.sync.m16n8k32", {}), std::invalid_argument);
}

TEST(DmmaRunner, EveryShapeMatchesItsPreset) {
  const auto devices = gpu::list_devices();
  if (devices.empty()) GTEST_SKIP() << "no CUDA device";
  const gpu::DeviceInfo& device = devices.front();
  const int cc = device.compute_major * 10 + device.compute_minor;
  if (device.arch_preset().empty() || cc < 80) {
    GTEST_SKIP() << device.name << " has no fp64 tensor cores with a preset";
  }
  for (const std::string_view shape : gpu::dmma_sync_shapes(cc)) {
    const Fp64Datapath dp = fp64_preset(device.arch_preset(), shape);
    const Fp64ProbeCases probe = fp64_probe_cases(dp.instruction_k, 5000, 16);
    const std::vector<std::uint64_t> d = gpu::run_dmma_sync(shape, probe.cases);
    ASSERT_EQ(d.size(), probe.cases.size());
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < d.size(); ++i) {
      const Fp64MmaCase& c = probe.cases[i];
      const std::uint64_t expected = fp64_mma_element(dp, c.a, c.b, c.c);
      if (expected != d[i] && ++mismatches <= 3) {
        ADD_FAILURE() << shape << " " << (probe.names[i].empty() ? "random" : probe.names[i])
                      << ": GPU " << fp64_hex(d[i]) << ", emulated " << fp64_hex(expected) << "\n  "
                      << format_fp64_case_line(c);
      }
    }
    EXPECT_EQ(mismatches, 0u) << shape;
  }
}

TEST(DmmaRunner, AGpuBelowTheShapeIsRefusedNamingBoth) {
  const auto devices = gpu::list_devices();
  if (devices.empty()) GTEST_SKIP() << "no CUDA device";
  const gpu::DeviceInfo& device = devices.front();
  if (device.compute_major * 10 + device.compute_minor >= 90) {
    GTEST_SKIP() << device.name << " has every fp64 shape";
  }
  try {
    gpu::run_dmma_sync("mma.sync.m16n8k16", {});
    ADD_FAILURE() << "no refusal";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("needs compute capability 9.0 or newer; " + device.name),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tcemu
