// A kernel of this project's own, checked against tcemu: one warp computes D = A B + C (16 x 8 x
// 16, fp16 inputs, fp32 accumulator) with one mma.sync, and tcemu::gpu::check_gemm compares its D
// with the emulated GEMM through the GPU's preset, bit for bit. Skipped where no GPU is present.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/emulator/presets.hpp>
#include <tcemu/gpu/check_gemm.hpp>
#include <tcemu/gpu/device.hpp>

namespace {

constexpr int M = 16, N = 8, K = 16;

// A (M x K, row major) and B (K x N, column major) hold fp16 bits, C and D (M x N, row major)
// fp32 bits. Lane 4 group + tig holds the fragments of the PTX ISA ("Matrix fragments for
// mma.m16n8k16 with floating point type"): A register r = 0..3 the elements (group + 8 (r & 1),
// 2 tig + 8 (r >> 1)) and the next column, low half first; B register r = 0..1 the elements
// k = 2 tig + 8 r and k + 1 of column group; C and D register e = 0..3 the element
// (group + 8 (e >> 1), 2 tig + (e & 1)).
__global__ void mma_m16n8k16(const std::uint16_t* a, const std::uint16_t* b, const std::uint32_t* c,
                             std::uint32_t* d) {
  const int group = static_cast<int>(threadIdx.x) / 4, tig = static_cast<int>(threadIdx.x) % 4;
  unsigned ra[4], rb[2], rc[4], rd[4];
  for (int r = 0; r < 4; ++r) {
    const std::uint16_t* p = a + (group + 8 * (r & 1)) * K + 2 * tig + 8 * (r >> 1);
    ra[r] = p[0] | unsigned{p[1]} << 16;
  }
  for (int r = 0; r < 2; ++r) {
    const std::uint16_t* p = b + group * K + 2 * tig + 8 * r;
    rb[r] = p[0] | unsigned{p[1]} << 16;
  }
  for (int e = 0; e < 4; ++e) rc[e] = c[(group + 8 * (e >> 1)) * N + 2 * tig + (e & 1)];
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%11,%12,%13};\n"
      : "=r"(rd[0]), "=r"(rd[1]), "=r"(rd[2]), "=r"(rd[3])
      : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]), "r"(rc[0]),
        "r"(rc[1]), "r"(rc[2]), "r"(rc[3]));
  for (int e = 0; e < 4; ++e) d[(group + 8 * (e >> 1)) * N + 2 * tig + (e & 1)] = rd[e];
}

void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(call) + ": " + cudaGetErrorString(status));
  }
}

struct CudaFree {
  void operator()(void* p) const { cudaFree(p); }
};

// A copy of `host` in device memory.
template <class T>
std::unique_ptr<T, CudaFree> to_device(const std::vector<T>& host) {
  void* p = nullptr;
  check(cudaMalloc(&p, host.size() * sizeof(T)), "cudaMalloc");
  std::unique_ptr<T, CudaFree> device(static_cast<T*>(p));
  check(cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  return device;
}

tcemu::ConstMatrixView view(const void* device, const tcemu::FloatFormat& format, int rows,
                            int cols, tcemu::Layout layout) {
  return {static_cast<const unsigned char*>(device),        format, rows, cols,
          layout == tcemu::Layout::row_major ? cols : rows, layout};
}

// Normal values of both signs with exponents from -5 to 5 (fp16) or -2 to 8 (fp32), so that the
// products and C are aligned across many bits and the datapath's truncation shows.
std::vector<std::uint16_t> random_fp16(std::size_t count, std::mt19937& rng) {
  std::vector<std::uint16_t> v(count);
  for (auto& x : v) {
    const unsigned sign = rng() & 1, exponent = 10 + rng() % 11, fraction = rng() & 0x3ff;
    x = static_cast<std::uint16_t>(sign << 15 | exponent << 10 | fraction);
  }
  return v;
}
std::vector<std::uint32_t> random_fp32(std::size_t count, std::mt19937& rng) {
  std::vector<std::uint32_t> v(count);
  for (auto& x : v) {
    const unsigned sign = rng() & 1, exponent = 125 + rng() % 11, fraction = rng() & 0x7fffff;
    x = sign << 31 | exponent << 23 | fraction;
  }
  return v;
}

TEST(ConsumerMmaKernel, GivesTheEmulatedGemmsBits) {
  std::string why;
  const auto devices = tcemu::gpu::list_devices(&why);
  if (devices.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  const std::string arch = devices.front().arch_preset();
  if (devices.front().compute_major < 8 || arch.empty()) {
    GTEST_SKIP() << devices.front().name << " has no mma.sync.m16n8k16 or no tcemu preset";
  }

  std::mt19937 rng(2024);
  const auto a = to_device(random_fp16(M * K, rng));
  const auto b = to_device(random_fp16(K * N, rng));
  const auto c = to_device(random_fp32(M * N, rng));
  const auto d = to_device(std::vector<std::uint32_t>(M * N));
  mma_m16n8k16<<<1, 32>>>(a.get(), b.get(), c.get(), d.get());
  check(cudaGetLastError(), "mma_m16n8k16<<<1, 32>>>");

  using tcemu::formats::fp16, tcemu::formats::fp32, tcemu::Layout;
  const tcemu::GemmOptions options{
      .alpha = 1, .beta = 1, .c_input = tcemu::CInput::initial_accumulator};
  tcemu::Datapath datapath = tcemu::preset(arch, fp16, fp32);
  const auto check_with = [&](const tcemu::Datapath& dp) {
    return tcemu::gpu::check_gemm(dp, options, view(a.get(), fp16, M, K, Layout::row_major),
                                  view(b.get(), fp16, K, N, Layout::column_major),
                                  view(c.get(), fp32, M, N, Layout::row_major),
                                  view(d.get(), fp32, M, N, Layout::row_major));
  };
  const tcemu::GemmCheck same = check_with(datapath);
  EXPECT_TRUE(same.passed()) << arch << " preset:\n" << same.report;
  std::printf("%s, %s preset:\n%s", devices.front().name.c_str(), arch.c_str(),
              same.report.c_str());

  // The same check is not fooled by a datapath that rounds its blocks to nearest.
  datapath.block_rounding = tcemu::Rounding::nearest_even;
  const tcemu::GemmCheck rounded = check_with(datapath);
  EXPECT_FALSE(rounded.passed());
  std::printf("against %s with round-to-nearest blocks:\n%s", arch.c_str(), rounded.report.c_str());
}

}  // namespace
