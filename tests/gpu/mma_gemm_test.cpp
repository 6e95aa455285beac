// Our mma.sync GEMM on the GPU and the emulated GEMM with the GPU's preset give identical bits on
// whole matrices (issue 3): 1024^3 and 1000 x 77 x 333 (a k tail shorter than one instruction).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/mma_gemm.hpp>

namespace tcemu {
namespace {

struct Matrix {
  FloatFormat format;
  std::int64_t rows, cols;
  std::vector<unsigned char> bytes;
  Matrix(FloatFormat f, std::int64_t r, std::int64_t c)
      : format(f), rows(r), cols(c), bytes(static_cast<std::size_t>(r * c) * container_bytes(f)) {}
  MatrixView view() { return {{bytes.data(), format, rows, cols, cols, Layout::row_major}}; }
  ConstMatrixView cview() const {
    return {bytes.data(), format, rows, cols, cols, Layout::row_major};
  }
};

// The papers' inputs: (rand - 0.5) * exp(phi * randn), rounded to the format.
void fill(Matrix& x, std::mt19937_64& rng, double phi) {
  std::uniform_real_distribution<double> uniform(-0.5, 0.5);
  std::normal_distribution<double> normal;
  MatrixView v = x.view();
  for (std::int64_t i = 0; i < x.rows; ++i) {
    for (std::int64_t j = 0; j < x.cols; ++j) {
      const auto value = static_cast<float>(uniform(rng) * std::exp(phi * normal(rng)));
      v.set(i, j,
            convert(formats::fp32, x.format, std::bit_cast<std::uint32_t>(value),
                    Rounding::nearest_even));
    }
  }
}

TEST(MmaSyncGemm, BitIdenticalToTheEmulatedGemm) {
  std::string why;
  const auto devices = gpu::list_devices(&why);
  if (devices.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  const std::string arch = devices.front().arch_preset();
  if (arch.empty()) GTEST_SKIP() << "no emulator preset for " << devices.front().name;
  const bool fp8 = devices.front().compute_major * 10 + devices.front().compute_minor >= 89;
  std::vector<std::pair<FloatFormat, FloatFormat>> pairs = {{formats::fp16, formats::fp32},
                                                            {formats::fp16, formats::fp16},
                                                            {formats::bf16, formats::fp32},
                                                            {formats::tf32, formats::fp32}};
  if (fp8) pairs.emplace_back(formats::e4m3, formats::fp32);
  std::mt19937_64 rng(11);
  for (const auto& [m, n, k] :
       std::vector<std::array<std::int64_t, 3>>{{1024, 1024, 1024}, {1000, 77, 333}}) {
    for (const auto& [input, accumulator] : pairs) {
      SCOPED_TRACE(std::to_string(m) + " x " + std::to_string(n) + " x " + std::to_string(k) + " " +
                   std::string(input.name) + " -> " + std::string(accumulator.name));
      Matrix a(input, m, k), b(input, k, n), c(accumulator, m, n);
      fill(a, rng, 1.0);
      fill(b, rng, 1.0);
      fill(c, rng, 1.0);
      Matrix gpu_d(accumulator, m, n), emulated_d(accumulator, m, n);
      gpu::mma_sync_gemm(a.cview(), b.cview(), c.cview(), gpu_d.view());
      const Datapath dp = preset(arch, input, accumulator);
      emulated_gemm(dp, {.beta = 1.0f, .c_input = CInput::initial_accumulator}, a.cview(),
                    b.cview(), c.cview(), emulated_d.view());
      std::size_t differ = 0;
      for (std::int64_t i = 0; i < m; ++i) {
        for (std::int64_t j = 0; j < n; ++j) {
          differ += gpu_d.cview().get(i, j) != emulated_d.cview().get(i, j);
        }
      }
      EXPECT_EQ(differ, 0u);
      std::printf("%s mma.sync GEMM %lld x %lld x %lld %s -> %s: %zu of %lld elements differ\n",
                  arch.c_str(), static_cast<long long>(m), static_cast<long long>(n),
                  static_cast<long long>(k), std::string(input.name).c_str(),
                  std::string(accumulator.name).c_str(), differ, static_cast<long long>(m * n));
    }
  }
}

TEST(MmaSyncGemm, ShapesThatDoNotChainAreRefused) {
  Matrix a(formats::fp16, 4, 8), b(formats::fp16, 9, 3), c(formats::fp32, 4, 3),
      d(formats::fp32, 4, 3);
  EXPECT_THROW(gpu::mma_sync_gemm(a.cview(), b.cview(), c.cview(), d.view()),
               std::invalid_argument);
}

}  // namespace
}  // namespace tcemu
