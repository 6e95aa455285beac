// The GPU backend's block-scaled GEMM in every caller state: the emulated engine's three kernels
// (scaled_gemms.hpp: binary64, exact, group) with C through the epilogue, as the initial
// accumulator and with take-out, on a backend made and used by the calling thread (several threads
// at once, each its own), give the bits of the CPU's emulated_gemm in the default state. Skips
// without a CUDA device.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <tcemu/backend/backend.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/gpu_backend.hpp>

#include "caller_state.hpp"
#include "scaled_gemms.hpp"

namespace tcemu {
namespace {

// D's bits of `g` under `options` on `backend`.
void run_on(Backend& backend, const test::ScaledGemm& g, const GemmOptions& options,
            std::vector<std::uint32_t>& out) {
  const auto put = [&](const test::Codes& x, std::vector<Buffer>& keep) {
    keep.push_back(backend.allocate(x.bytes.size()));
    backend.copy_in(x.bytes.data(), keep.back(), x.bytes.size());
    return BufferMatrix{&keep.back(), 0, x.format, x.rows, x.cols, x.cols, Layout::row_major};
  };
  std::vector<Buffer> keep;
  keep.reserve(6);  // the matrices point into it
  const BufferMatrix a = put(g.a, keep), b = put(g.b, keep), c = put(g.c, keep), d = put(g.c, keep),
                     sa = put(g.sa, keep), sb = put(g.sb, keep);
  backend.mma_gemm(g.dp, options, a, b, c, d, ScaleBuffers{sa, sb});
  std::vector<unsigned char> bytes(g.c.bytes.size());
  backend.copy_out(keep[3], bytes.data(), bytes.size());
  const ConstMatrixView dv{bytes.data(), g.c.format, g.c.rows,
                           g.c.cols,     g.c.cols,   Layout::row_major};
  for (std::int64_t i = 0; i < g.c.rows; ++i) {
    for (std::int64_t j = 0; j < g.c.cols; ++j) out.push_back(dv.get(i, j));
  }
}

TEST(CallerState, GpuBlockScaledGemmOnEveryKernel) {
  std::string why;
  if (gpu::list_devices(&why).empty()) GTEST_SKIP() << "no CUDA device: " << why;
  const std::vector<test::ScaledGemm> gemms = test::scaled_gemms();
  const auto on_gpu = [&] {
    const auto gpu = gpu::make_gpu_backend({.engine = gpu::GemmEngine::emulated});
    std::vector<std::uint32_t> out;
    for (const test::ScaledGemm& g : gemms) {
      for (const GemmOptions& options : test::scaled_gemm_options(g.dp)) {
        run_on(*gpu, g, options, out);
      }
    }
    return out;
  };
  std::vector<std::uint32_t> cpu;
  for (const test::ScaledGemm& g : gemms) {
    for (const GemmOptions& options : test::scaled_gemm_options(g.dp)) g.run(options, cpu);
  }
  EXPECT_EQ(on_gpu(), cpu) << "the GPU's bits are not the CPU's";
  test::expect_same_in_every_caller_state([&] { return test::words(on_gpu()); });
}

}  // namespace
}  // namespace tcemu
