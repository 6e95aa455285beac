// tcemu::gpu::check_gemm (tcemu/gpu/check_gemm.hpp): the kernel-test check on device views. The
// GPU backend's mma.sync GEMM passes it; one changed element of its D is found and listed; views
// that do not fit are refused before any device memory is read.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/backend/backend.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/gpu/check_gemm.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/gpu_backend.hpp>

namespace tcemu {
namespace {

// A view of a matrix in a backend buffer, at the buffer's device address.
ConstMatrixView device_view(const Buffer& buffer, const FloatFormat& format, std::int64_t rows,
                            std::int64_t cols, Layout layout) {
  return {static_cast<const unsigned char*>(buffer.address()), format, rows, cols,
          layout == Layout::row_major ? cols : rows,           layout};
}

TEST(GpuCheckGemm, RefusesViewsThatDoNotFitBeforeReadingTheDevice) {
  // Never dereferenced: the operand check comes first, and needs no GPU.
  const auto* nowhere = reinterpret_cast<const unsigned char*>(std::uintptr_t{16});
  const Datapath dp = preset("sm90", formats::fp16, formats::fp32);
  const ConstMatrixView a{nowhere, formats::fp16, 4, 8, 4, Layout::row_major};  // ld < 8
  const ConstMatrixView b{nowhere, formats::fp16, 8, 2, 2, Layout::row_major};
  const ConstMatrixView d{nowhere, formats::fp32, 4, 2, 2, Layout::row_major};
  try {
    gpu::check_gemm(dp, {}, a, b, std::nullopt, d);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("tcemu::gpu::check_gemm"), std::string::npos) << e.what();
  }
}

TEST(GpuCheckGemm, PassesTheMmaSyncGemmAndListsAChangedElement) {
  std::string why;
  const auto devices = gpu::list_devices(&why);
  if (devices.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  const std::string arch = devices.front().arch_preset();
  if (arch.empty()) GTEST_SKIP() << "no emulator preset for " << devices.front().name;

  const std::int64_t m = 40, n = 24, k = 72;
  std::mt19937 rng(15);
  std::vector<std::uint16_t> a(m * k), b(k * n);
  std::vector<std::uint32_t> c(m * n), d(m * n);
  // fp16 and fp32 normal values of both signs, exponents -4..3.
  for (auto& x : a) x = static_cast<std::uint16_t>((rng() & 0x83ff) | (11 + rng() % 8) << 10);
  for (auto& x : b) x = static_cast<std::uint16_t>((rng() & 0x83ff) | (11 + rng() % 8) << 10);
  for (auto& x : c) x = static_cast<std::uint32_t>((rng() & 0x807fffffu) | (123 + rng() % 8) << 23);

  const auto gpu = gpu::make_gpu_backend();
  const auto put = [&](const auto& host) {
    Buffer buffer = gpu->allocate(host.size() * sizeof(host[0]));
    gpu->copy_in(host.data(), buffer, host.size() * sizeof(host[0]));
    return buffer;
  };
  const Buffer ba = put(a), bb = put(b), bc = put(c);
  Buffer bd = put(d);
  const Datapath dp = preset(arch, formats::fp16, formats::fp32);
  const GemmOptions options{.beta = 1, .c_input = CInput::initial_accumulator};
  gpu->mma_gemm(dp, options, {&ba, 0, formats::fp16, m, k, k, Layout::row_major},
                {&bb, 0, formats::fp16, k, n, k, Layout::column_major},
                BufferMatrix{&bc, 0, formats::fp32, m, n, n, Layout::row_major},
                {&bd, 0, formats::fp32, m, n, n, Layout::row_major});

  const ConstMatrixView av = device_view(ba, formats::fp16, m, k, Layout::row_major);
  const ConstMatrixView bv = device_view(bb, formats::fp16, k, n, Layout::column_major);
  const ConstMatrixView cv = device_view(bc, formats::fp32, m, n, Layout::row_major);
  const ConstMatrixView dv = device_view(bd, formats::fp32, m, n, Layout::row_major);
  const GemmCheck same = gpu::check_gemm(dp, options, av, bv, cv, dv);
  EXPECT_TRUE(same.passed()) << same.report;

  // D(3, 5) one ulp up, on the device.
  gpu->copy_out(bd, d.data(), d.size() * sizeof(d[0]));
  const std::uint32_t changed = d[3 * n + 5] + 1;
  gpu->copy_in(&changed, bd, sizeof(changed), (3 * n + 5) * sizeof(changed));
  const GemmCheck one_off = gpu::check_gemm(dp, options, av, bv, cv, dv);
  ASSERT_EQ(one_off.comparison.differing, 1) << one_off.report;
  ASSERT_EQ(one_off.comparison.first.size(), 1u);
  EXPECT_EQ(one_off.comparison.first[0].row, 3);
  EXPECT_EQ(one_off.comparison.first[0].col, 5);
  EXPECT_EQ(one_off.comparison.first[0].got, changed);
  EXPECT_NE(one_off.report.find("(3, 5)"), std::string::npos) << one_off.report;
}

}  // namespace
}  // namespace tcemu
