// Dot2 and the ExBLAS-style inner products give the same bits on the GPU backend as on the host
// (Backend::inner_products defines them): DOT (the Dot2 lane tree; the exact sum split over many
// threads and merged limb by limb), GEMV (one element per thread) and GEMM (shared-memory tiles),
// fp64 and fp32, with transposes, increments, alpha and beta, and NaN/Inf.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <tcemu/accurate/handle.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/gpu_backend.hpp>
#include <tcemu/host/host_backends.hpp>
#include <tcemu/reference/accumulator_gemm.hpp>
#include <tcemu/reference/phi_values.hpp>
#include <tcemu/test/same_bits.hpp>

namespace tcemu {
namespace {

using reference::phi_values;

std::uint64_t bits(double v) {
  return std::bit_cast<std::uint64_t>(v);
}

class AccurateOnGpu : public ::testing::TestWithParam<InnerProduct> {
 protected:
  void SetUp() override {
    std::string why;
    if (gpu::list_devices(&why).empty()) GTEST_SKIP() << "no CUDA device: " << why;
    gpu_ = gpu::make_gpu_backend();
    host_ = host::make_cpu64_backend();
  }
  std::unique_ptr<Backend> gpu_, host_;
};

TEST_P(AccurateOnGpu, DotGivesTheHostsBits) {
  accurate::Handle on_gpu(*gpu_, GetParam()), on_host(*host_, GetParam());
  for (std::int64_t n : {1, 5, 1000, 16384, 16385, 3000001}) {
    const auto x = phi_values(n, 10, 1), y = phi_values(n, 10, 2);
    const double want = on_host.ddot(n, x.data(), 1, y.data(), 1);
    EXPECT_EQ(bits(on_gpu.ddot(n, x.data(), 1, y.data(), 1)), bits(want)) << "n " << n;
    const std::vector<float> xf(x.begin(), x.end()), yf(y.begin(), y.end());
    EXPECT_EQ(on_gpu.sdot(n, xf.data(), 1, yf.data(), 1),
              on_host.sdot(n, xf.data(), 1, yf.data(), 1))
        << "fp32, n " << n;
  }
  // Every term enters the exact sum once: the GPU's exact DOT is the correctly rounded one.
  if (GetParam() == InnerProduct::exact) {
    const std::int64_t n = 1 << 22;
    const auto x = phi_values(n, 12, 3), y = phi_values(n, 12, 4);
    EXPECT_EQ(bits(on_gpu.ddot(n, x.data(), 1, y.data(), 1)),
              bits(reference::accumulator_gemm(1, 1, n, x, y)[0]));
  }
}

TEST_P(AccurateOnGpu, GemvAndGemmGiveTheHostsBits) {
  accurate::Handle on_gpu(*gpu_, GetParam()), on_host(*host_, GetParam());
  const std::int64_t m = 133, n = 71, k = 517;
  const auto a = phi_values(m * k, 6, 5), b = phi_values(k * n, 6, 6), c0 = phi_values(m * n, 1, 7);
  for (char ta : {'N', 'T'}) {
    for (char tb : {'N', 'T'}) {
      std::vector<double> want = c0, got = c0;
      const std::int64_t lda = ta == 'N' ? m : k, ldb = tb == 'N' ? k : n;
      on_host.dgemm(ta, tb, m, n, k, 1.5, a.data(), lda, b.data(), ldb, -0.5, want.data(), m);
      on_gpu.dgemm(ta, tb, m, n, k, 1.5, a.data(), lda, b.data(), ldb, -0.5, got.data(), m);
      ASSERT_TRUE(test::same_bits(want, got, m, n)) << ta << tb;
    }
  }
  std::vector<double> want(2 * m, 1.0), got(2 * m, 1.0);
  on_host.dgemv('N', m, k, 1.0, a.data(), m, b.data(), 1, 0.0, want.data(), -2);
  on_gpu.dgemv('N', m, k, 1.0, a.data(), m, b.data(), 1, 0.0, got.data(), -2);
  EXPECT_TRUE(test::same_bits(want, got, 2 * m, 1)) << "y, incy -2";
  std::vector<double> want_t(m), got_t(m);
  on_host.dgemv('T', k, m, 1.0, a.data(), k, b.data(), 3, 0.0, want_t.data(), 1);
  on_gpu.dgemv('T', k, m, 1.0, a.data(), k, b.data(), 3, 0.0, got_t.data(), 1);
  EXPECT_TRUE(test::same_bits(want_t, got_t, m, 1)) << "y of A^T x";
  const std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end());
  std::vector<float> want_f(m * n), got_f(m * n);
  on_host.sgemm('N', 'N', m, n, k, 1.0f, af.data(), m, bf.data(), k, 0.0f, want_f.data(), m);
  on_gpu.sgemm('N', 'N', m, n, k, 1.0f, af.data(), m, bf.data(), k, 0.0f, got_f.data(), m);
  for (std::size_t e = 0; e < got_f.size(); ++e) ASSERT_EQ(got_f[e], want_f[e]) << "fp32 " << e;
}

TEST_P(AccurateOnGpu, NanAndInfAsOnTheHost) {
  accurate::Handle on_gpu(*gpu_, GetParam()), on_host(*host_, GetParam());
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> a = {inf, 1e300, 1.0, -1e300, std::nan(""), 2.0};  // 2 x 3
  std::vector<double> b = {2.0, 0.0, 1.0, 1e300, 1e300, 0.0};            // 3 x 2
  std::vector<double> want(4), got(4);
  on_host.dgemm('N', 'N', 2, 2, 3, 1.0, a.data(), 2, b.data(), 3, 0.0, want.data(), 2);
  on_gpu.dgemm('N', 'N', 2, 2, 3, 1.0, a.data(), 2, b.data(), 3, 0.0, got.data(), 2);
  EXPECT_TRUE(
      test::same_bits(want, got, 2, 2, {.inputs = [&](std::int64_t i, std::int64_t j) {
                        return "A row " + std::to_string(i) + ": " +
                               test::value_range(3, [&](std::int64_t p) { return a[p * 2 + i]; }) +
                               "; B column " + std::to_string(j) + ": " +
                               test::value_range(3, [&](std::int64_t p) { return b[j * 3 + p]; });
                      }}));
  std::vector<double> x = {1e300, 1e300, inf}, y = {1e300, -1e300, 1.0};
  EXPECT_EQ(bits(on_gpu.ddot(3, x.data(), 1, y.data(), 1)),
            bits(on_host.ddot(3, x.data(), 1, y.data(), 1)));
}

INSTANTIATE_TEST_SUITE_P(Methods, AccurateOnGpu,
                         ::testing::Values(InnerProduct::dot2, InnerProduct::exact),
                         [](const auto& param_info) {
                           return param_info.param == InnerProduct::dot2 ? "dot2" : "exact";
                         });

}  // namespace
}  // namespace tcemu
