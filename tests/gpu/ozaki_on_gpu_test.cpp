// The Ozaki scheme gives the same bits on the GPU backend as on the emulator backend with the
// GPU's preset (issue 4: reproducible across backends), in every mode.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <tcemu/emulator/presets.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/gpu_backend.hpp>
#include <tcemu/ozaki/handle.hpp>

namespace tcemu {
namespace {

TEST(OzakiOnGpu, EveryModeGivesTheEmulatorsBits) {
  std::string why;
  const auto devices = gpu::list_devices(&why);
  if (devices.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  const std::string arch = devices.front().arch_preset();
  const auto gpu_backend = gpu::make_gpu_backend();
  const auto emulator = make_emulator_backend();
  const std::int64_t m = 70, n = 50, k = 130;
  std::mt19937_64 rng(8);
  std::uniform_real_distribution<double> uniform(-0.5, 0.5);
  std::normal_distribution<double> normal;
  std::vector<double> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n)),
      c(static_cast<std::size_t>(m * n));
  for (double& x : a) x = uniform(rng) * std::exp(4.0 * normal(rng));
  for (double& x : b) x = uniform(rng) * std::exp(4.0 * normal(rng));
  for (double& x : c) x = uniform(rng);
  const ozaki::TensorCoreProducts products{preset(arch, formats::fp16, formats::fp32, "mma.sync")};
  for (const ozaki::Mode mode : {ozaki::Mode::dp, ozaki::Mode::cr, ozaki::Mode::tunable}) {
    ozaki::Options options{.mode = mode};
    if (mode == ozaki::Mode::tunable) options.splits = 3;
    const double beta = mode == ozaki::Mode::cr ? 0.0 : 0.5;
    std::vector<double> on_gpu = c, on_emulator = c;
    ozaki::Handle(*gpu_backend, products, options)
        .dgemm('N', 'N', m, n, k, 1.0, a.data(), m, b.data(), k, beta, on_gpu.data(), m);
    ozaki::Handle(*emulator, products, options)
        .dgemm('N', 'N', m, n, k, 1.0, a.data(), m, b.data(), k, beta, on_emulator.data(), m);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < on_gpu.size(); ++i) {
      differ +=
          std::bit_cast<std::uint64_t>(on_gpu[i]) != std::bit_cast<std::uint64_t>(on_emulator[i]);
    }
    EXPECT_EQ(differ, 0u) << "mode " << static_cast<int>(mode);
    std::printf(
        "dgemm-tc mode %d on %s, %lld x %lld x %lld: %zu elements differ between GPU and "
        "emulator\n",
        static_cast<int>(mode), arch.c_str(), static_cast<long long>(m), static_cast<long long>(n),
        static_cast<long long>(k), differ);
  }
}

}  // namespace
}  // namespace tcemu
