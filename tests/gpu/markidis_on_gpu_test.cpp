// Every error-corrected SGEMM scheme gives the same bits on the GPU backend (our mma.sync kernels
// and the device fp32 steps) as on the emulator backend with the GPU's preset (issue 5): the
// scheme, the datapath and every step's arithmetic are the same, so the bits must be.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/gpu_backend.hpp>
#include <tcemu/markidis/gemm.hpp>
#include <tcemu/markidis/presets.hpp>

namespace tcemu {
namespace {

TEST(MarkidisOnGpu, EverySchemeGivesTheEmulatorsBits) {
  std::string why;
  const auto devices = gpu::list_devices(&why);
  if (devices.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  const std::string arch = devices.front().arch_preset();
  const auto gpu_backend = gpu::make_gpu_backend();
  const auto emulator = make_emulator_backend();
  const std::int64_t m = 150, n = 70, k = 333;
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::normal_distribution<float> normal;
  std::vector<float> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n)),
      c(static_cast<std::size_t>(m * n));
  for (float& x : a) x = uniform(rng) * std::exp(2.0f * normal(rng));
  for (float& x : b) x = uniform(rng) * std::exp(2.0f * normal(rng));
  for (float& x : c) x = uniform(rng);
  a[7] = INFINITY;  // NaN and Inf propagate as SGEMM's do, on both backends
  b[100] = NAN;
  for (const std::string_view scheme_name : markidis::scheme_names()) {
    const std::string name(scheme_name);
    const markidis::Scheme scheme = markidis::scheme_by_name(name);
    const Datapath dp = markidis::scheme_datapath(scheme, arch, "mma.sync");
    std::vector<float> on_gpu = c, on_emulator = c;
    try {
      markidis::sgemm(*gpu_backend, scheme, dp, 'N', 'T', m, n, k, 1.5f, a.data(), m, b.data(), n,
                      -0.5f, on_gpu.data(), m);
    } catch (const std::invalid_argument& e) {
      // A scheme without scaling refuses inputs outside its part format; both backends must.
      EXPECT_THROW(markidis::sgemm(*emulator, scheme, dp, 'N', 'T', m, n, k, 1.5f, a.data(), m,
                                   b.data(), n, -0.5f, on_emulator.data(), m),
                   std::invalid_argument)
          << name;
      std::printf("%s: refused on both backends (%s)\n", name.c_str(), e.what());
      continue;
    }
    markidis::sgemm(*emulator, scheme, dp, 'N', 'T', m, n, k, 1.5f, a.data(), m, b.data(), n, -0.5f,
                    on_emulator.data(), m);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < on_gpu.size(); ++i) {
      differ +=
          std::bit_cast<std::uint32_t>(on_gpu[i]) != std::bit_cast<std::uint32_t>(on_emulator[i]);
    }
    EXPECT_EQ(differ, 0u) << name;
    std::printf(
        "%s on %s mma.sync, %lld x %lld x %lld: %zu elements differ between GPU and "
        "emulator\n",
        name.c_str(), arch.c_str(), static_cast<long long>(m), static_cast<long long>(n),
        static_cast<long long>(k), differ);
  }
}

}  // namespace
}  // namespace tcemu
