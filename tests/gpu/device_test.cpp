// GPU tests: they need a CUDA device and say so when there is none (CTest reports them as
// skipped, not passed).
#include <gtest/gtest.h>

#include <tcemu/gpu/device.hpp>

namespace {

TEST(GpuDevice, ListsThePresentDevicesWithTheirPreset) {
  std::string why;
  const auto devices = tcemu::gpu::list_devices(&why);
  if (devices.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  for (const auto& d : devices) {
    std::printf("device %d: %s, sm_%d%d, %d SMs, %.1f GiB, preset %s\n", d.index, d.name.c_str(),
                d.compute_major, d.compute_minor, d.multiprocessors,
                static_cast<double>(d.global_memory_bytes) / (1 << 30), d.arch_preset().c_str());
    EXPECT_FALSE(d.name.empty());
    EXPECT_GE(d.compute_major, 7);
    EXPECT_GT(d.multiprocessors, 0);
  }
}

}  // namespace
