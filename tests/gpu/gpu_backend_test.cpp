// The GPU backend against the emulator backend (issue 3): our tiled mma.sync kernel gives the
// bits of the emulated GEMM with the GPU's preset on whole matrices (1024^3 and odd sizes such as
// 1000 x 77 x 333, every layout, both ways of C entering, take-out, special values; the mma_sync
// and fastest engines), the device conversions give the emulator's bits, cuBLAS (with C as the
// initial accumulator and take-out composed around it) agrees wherever the order of summation
// cannot matter, and bad requests get errors that name the problem.
#include <gtest/gtest.h>

#include <cstdlib>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/backend/backend.hpp>
#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/gpu_backend.hpp>
#include <tcemu/gpu/mma_runner.hpp>
#include <tcemu/host/host_backends.hpp>
#include <tcemu/test/same_bits.hpp>

#include "gemm_comparison.hpp"

namespace tcemu {
namespace {

using namespace gpu_test;  // NOLINT(google-build-using-namespace): the shared GEMM test helpers

std::vector<std::pair<FloatFormat, FloatFormat>> pairs_of_this_gpu() {
  const auto device = gpu::list_devices().front();
  return gpu::mma_sync_pairs(device.compute_major * 10 + device.compute_minor);
}

TEST(GpuBackend, TiledMmaSyncGemmIsBitIdenticalToTheEmulatedGemm) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const auto gpu = gpu::make_gpu_backend();
  const std::string arch = gpu::list_devices().front().arch_preset();
  std::mt19937_64 rng(11);
  struct Shape {
    std::int64_t m, n, k;
  };
  const std::vector<Shape> shapes = reduced_sizes()
                                        ? std::vector<Shape>{{256, 128, 64}, {100, 77, 33}}
                                        : std::vector<Shape>{{1024, 1024, 1024}, {1000, 77, 333}};
  for (const Shape s : shapes) {
    for (const auto& [input, accumulator] : pairs_of_this_gpu()) {
      // The shape the kernel issues (m16n8k16 fp16/bf16, m16n8k8 tf32, m16n8k32 fp8), which is
      // also the plain mma.sync preset's.
      const std::string shape =
          gpu::kernel_instruction(gpu::GemmEngine::mma_sync, input, accumulator);
      EXPECT_EQ(shape,
                "mma.sync.m16n8k" + std::to_string(preset(arch, input, accumulator).instruction_k));
      const Datapath dp = preset(arch, input, accumulator, shape);
      HostMatrix a(input, s.m, s.k, Layout::row_major), b(input, s.k, s.n, Layout::column_major);
      HostMatrix c(accumulator, s.m, s.n, Layout::row_major),
          d(accumulator, s.m, s.n, Layout::row_major);
      fill(a, rng, 1.0);
      fill(b, rng, 1.0);
      fill(c, rng, 1.0);
      const test::BitComparison same = compare_gemms(
          *gpu, dp, {.beta = 1.0f, .c_input = CInput::initial_accumulator}, a, b, c, d);
      EXPECT_TRUE(same.result) << input.name << " -> " << accumulator.name;
      std::printf(
          "%s tiled mma.sync GEMM %lld x %lld x %lld %s -> %s, C initial: %lld of %lld "
          "elements differ\n",
          arch.c_str(), static_cast<long long>(s.m), static_cast<long long>(s.n),
          static_cast<long long>(s.k), std::string(input.name).c_str(),
          std::string(accumulator.name).c_str(), static_cast<long long>(same.differing),
          static_cast<long long>(s.m * s.n));
    }
  }
}

// The engines of our own kernels on this GPU, each with the instruction whose preset it is asked
// for: mma.sync everywhere, wgmma on sm_90a, and the fastest engine with the mma.sync preset
// (wgmma where that preset is also wgmma's).
struct OwnEngine {
  gpu::GemmEngine engine;
  const char* instruction;
};
std::vector<OwnEngine> own_engines() {
  const auto device = gpu::list_devices().front();
  std::vector<OwnEngine> engines = {{gpu::GemmEngine::mma_sync, "mma.sync"},
                                    {gpu::GemmEngine::fastest, "mma.sync"}};
  if (device.compute_major == 9 && device.compute_minor == 0) {
    engines.push_back({gpu::GemmEngine::wgmma, "wgmma"});
  }
  return engines;
}

bool wgmma_takes(const FloatFormat& input, const FloatFormat& accumulator) {
  return accumulator == formats::fp32 &&
         (input == formats::fp16 || input == formats::bf16 || input == formats::tf32);
}

// Every layout and padded leading dimension, the alpha/beta epilogue, take-out, k tails and
// special values, for each of our engines.
TEST(GpuBackend, EveryLayoutOptionAndSpecialValueMatchesTheEmulator) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const std::string arch = gpu::list_devices().front().arch_preset();
  std::mt19937_64 rng(5);
  for (const OwnEngine& own : own_engines()) {
    const auto gpu = gpu::make_gpu_backend({.engine = own.engine});
    for (const auto& [input, accumulator] : pairs_of_this_gpu()) {
      if (own.engine == gpu::GemmEngine::wgmma && !wgmma_takes(input, accumulator)) continue;
      const Datapath dp = preset(arch, input, accumulator, own.instruction);
      const bool fp32 = accumulator == formats::fp32;
      std::vector<GemmOptions> options = {{.alpha = 1.0f, .beta = 0.0f},
                                          {.alpha = -1.5f, .beta = 0.75f},
                                          {.beta = 1.0f, .c_input = CInput::initial_accumulator}};
      if (fp32) {
        options.push_back({.alpha = 2.0f, .beta = -1.0f, .takeout_every_k = dp.instruction_k});
        options.push_back({.beta = 1.0f,
                           .c_input = CInput::initial_accumulator,
                           .takeout_every_k = 3 * dp.instruction_k});
      }
      for (const Layout la : {Layout::row_major, Layout::column_major}) {
        for (const Layout lb : {Layout::row_major, Layout::column_major}) {
          for (const std::int64_t k : {std::int64_t{0}, std::int64_t{5},
                                       3 * std::int64_t{dp.instruction_k}, std::int64_t{301}}) {
            const std::int64_t m = reduced_sizes() ? 35 : 131, n = reduced_sizes() ? 19 : 67;
            HostMatrix a(input, m, k, la, 3), b(input, k, n, lb, 1);
            HostMatrix c(accumulator, m, n, lb, 2), d(accumulator, m, n, la, 1);
            fill(a, rng, 2.0, 0.02);
            fill(b, rng, 2.0, 0.02);
            fill(c, rng, 2.0, 0.02);
            for (const GemmOptions& o : options) {
              EXPECT_TRUE(compare_gemms(*gpu, dp, o, a, b, c, d).result)
                  << own.instruction << " " << input.name << " -> " << accumulator.name
                  << " k=" << k << " A " << (la == Layout::row_major ? "row" : "col") << " B "
                  << (lb == Layout::row_major ? "row" : "col") << " alpha=" << o.alpha
                  << " beta=" << o.beta << " takeout=" << o.takeout_every_k << " on "
                  << gpu->name();
            }
          }
        }
      }
    }
  }
}

// The wgmma engine (sm_90a): the same bits as the emulated GEMM with the wgmma preset, whole
// matrices, both ways of C entering, take-out, packed and in-place operands; and signed zeros
// where the kernel's zero-filled instructions past k and take-out's restarted chains could show
// (C = -0 with products of -0).
TEST(GpuBackend, WgmmaGemmIsBitIdenticalToTheEmulatedGemm) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const auto device = gpu::list_devices().front();
  if (device.compute_major != 9 || device.compute_minor != 0) {
    GTEST_SKIP() << device.name << " has no wgmma";
  }
  const auto gpu = gpu::make_gpu_backend({.engine = gpu::GemmEngine::wgmma});
  std::mt19937_64 rng(12);
  struct Shape {
    std::int64_t m, n, k;
  };
  const std::vector<Shape> shapes =
      reduced_sizes() ? std::vector<Shape>{{256, 128, 64}, {100, 77, 33}, {130, 30, 5}}
                      : std::vector<Shape>{{1024, 1024, 1024}, {1000, 77, 333}, {130, 300, 5}};
  for (const Shape s : shapes) {
    for (const FloatFormat& input : {formats::fp16, formats::bf16, formats::tf32}) {
      // The shape the kernel issues: wgmma.m64n256k16 (tf32 k8), N = 128 with take-out.
      const Datapath dp =
          preset(device.arch_preset(), input, formats::fp32,
                 gpu::kernel_instruction(gpu::GemmEngine::wgmma, input, formats::fp32));
      for (const Layout la : {Layout::row_major, Layout::column_major}) {
        HostMatrix a(input, s.m, s.k, la), b(input, s.k, s.n, Layout::column_major);
        HostMatrix c(formats::fp32, s.m, s.n, Layout::row_major),
            d(formats::fp32, s.m, s.n, Layout::column_major);
        fill(a, rng, 1.0, 0.001);
        fill(b, rng, 1.0, 0.001);
        fill(c, rng, 1.0);
        for (const GemmOptions& o :
             {GemmOptions{.beta = 1.0f, .c_input = CInput::initial_accumulator},
              GemmOptions{.alpha = 0.5f, .beta = -2.0f},
              GemmOptions{.beta = 1.0f,
              .c_input = CInput::initial_accumulator,
              .takeout_every_k = dp.instruction_k},
              GemmOptions{.takeout_every_k = 5 * dp.instruction_k}}) {
          const test::BitComparison same = compare_gemms(*gpu, dp, o, a, b, c, d);
          EXPECT_TRUE(same.result) << input.name << " " << s.m << "x" << s.n << "x" << s.k
                                   << " takeout " << o.takeout_every_k;
          std::printf(
              "sm90 wgmma GEMM %lld x %lld x %lld %s -> fp32, A %s, C %s, take-out every %lld: "
              "%lld of %lld elements differ\n",
              static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k),
              std::string(input.name).c_str(),
              la == Layout::row_major ? "row major" : "column major",
              o.c_input == CInput::initial_accumulator ? "initial" : "epilogue",
              static_cast<long long>(o.takeout_every_k), static_cast<long long>(same.differing),
              static_cast<long long>(s.m * s.n));
        }
      }
      // Signed zeros: A of zeros of both signs (every product a zero, some -0), C = -0.
      HostMatrix a(input, 70, 40, Layout::row_major), b(input, 40, 33, Layout::column_major);
      HostMatrix c(formats::fp32, 70, 33, Layout::row_major), d = c;
      fill(a, rng, 1.0);
      fill(b, rng, 1.0);
      for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t j = 0; j < a.cols; ++j) {
          a.view().set(i, j, (rng() % 2) ? input.sign_mask() << input.padding_bits : 0u);
        }
      }
      for (std::int64_t i = 0; i < c.rows; ++i) {
        for (std::int64_t j = 0; j < c.cols; ++j) c.view().set(i, j, 0x80000000u);
      }
      for (const std::int64_t takeout : {std::int64_t{0}, std::int64_t{dp.instruction_k}}) {
        EXPECT_TRUE(
            compare_gemms(
                *gpu, dp,
                {.beta = 1.0f, .c_input = CInput::initial_accumulator, .takeout_every_k = takeout},
                a, b, c, d)
                .result)
            << input.name << " signed zeros, take-out " << takeout;
      }
    }
  }
}

TEST(GpuBackend, ConvertGivesTheEmulatorsBits) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const auto gpu = gpu::make_gpu_backend();
  const FloatFormat all[] = {formats::fp32, formats::fp16, formats::bf16,
                             formats::tf32, formats::e4m3, formats::e5m2};
  std::mt19937_64 rng(9);
  for (const FloatFormat& from : all) {
    HostMatrix src(from, 257, 129, Layout::row_major, 3);
    const MatrixView v = src.view();
    for (std::int64_t i = 0; i < src.rows; ++i) {
      for (std::int64_t j = 0; j < src.cols; ++j) {
        v.set(
            i, j,
            static_cast<std::uint32_t>(rng()) &
                ((from.container_bits() == 32 ? 0xFFFFFFFFu : (1u << from.container_bits()) - 1)));
      }
    }
    const OnBackend on_gpu = put(*gpu, src);
    for (const FloatFormat& to : all) {
      for (const Rounding rounding : {Rounding::nearest_even, Rounding::toward_zero}) {
        HostMatrix dst(to, src.rows, src.cols, Layout::column_major, 1);
        OnBackend out = put(*gpu, dst);
        gpu->convert(on_gpu.matrix, out.matrix, rounding);
        dst.bytes = take(*gpu, out);
        EXPECT_TRUE(test::same_bits_at(
            src.rows, src.cols,
            [&](std::int64_t i, std::int64_t j) {
              return convert(from, to, v.get(i, j), rounding);
            },
            [&](std::int64_t i, std::int64_t j) { return dst.cview().get(i, j); },
            {.inputs =
                 [&](std::int64_t i, std::int64_t j) {
                   return "x " + test::hex(v.get(i, j), hex_digits(from));
                 },
             .value = reading(to)}))
            << from.name << " -> " << to.name << " " << name_of(rounding);
      }
    }
  }
}

// Integers in [-8, 8]: a GEMM of them (k of a few hundred) is exact in fp32 in any order.
void fill_small_integers(HostMatrix& x, std::mt19937_64& rng) {
  const MatrixView v = x.view();
  for (std::int64_t i = 0; i < x.rows; ++i) {
    for (std::int64_t j = 0; j < x.cols; ++j) {
      const auto value = static_cast<float>(static_cast<int>(rng() % 17) - 8);
      v.set(i, j,
            convert(formats::fp32, x.format, std::bit_cast<std::uint32_t>(value),
                    Rounding::nearest_even));
    }
  }
}

// Small integers: every product and partial sum is exact in fp32, so cuBLAS's own order of
// summation cannot change a bit, and its result must be the emulator's: the plain call, C as the
// initial accumulator (through beta) and take-out composed from k chunks (a short last chunk, more
// than one batch of chunks only at larger sizes).
TEST(GpuBackend, CublasEngineIsExactWhereOrderCannotMatter) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const auto gpu = gpu::make_gpu_backend({.engine = gpu::GemmEngine::cublas});
  const std::string arch = gpu::list_devices().front().arch_preset();
  std::mt19937_64 rng(2);
  for (const FloatFormat& input : {formats::fp16, formats::bf16, formats::tf32}) {
    const Datapath dp = preset(arch, input, formats::fp32, "mma.sync");
    for (const Layout la : {Layout::row_major, Layout::column_major}) {
      for (const Layout ld : {Layout::row_major, Layout::column_major}) {
        const std::int64_t m = 97, n = 45, k = 200;
        HostMatrix a(input, m, k, la, 2), b(input, k, n, Layout::row_major);
        HostMatrix c(formats::fp32, m, n, ld), d(formats::fp32, m, n, ld, 1);
        for (HostMatrix* x : {&a, &b, &c}) fill_small_integers(*x, rng);
        for (const GemmOptions& o :
             {GemmOptions{.alpha = 2.0f, .beta = -1.0f},
              GemmOptions{.beta = 1.0f, .c_input = CInput::initial_accumulator},
              GemmOptions{.alpha = 2.0f, .beta = -1.0f, .takeout_every_k = dp.instruction_k},
              GemmOptions{.alpha = 0.5f, .takeout_every_k = 3 * dp.instruction_k},
              GemmOptions{.beta = 1.0f,
              .c_input = CInput::initial_accumulator,
              .takeout_every_k = 3 * dp.instruction_k}}) {
          EXPECT_TRUE(compare_gemms(*gpu, dp, o, a, b, c, d).result)
              << input.name << " beta=" << o.beta << " takeout=" << o.takeout_every_k;
        }
      }
    }
  }
}

// A batch of small-integer products (exact in any order) on the cuBLAS engine, batched (the
// default limit: these products are small) and one call per product (limit 0), against the
// emulator backend: the same bits in every D, for column- and row-major D, alpha != 1, and more
// products than one cublasGemmBatchedEx takes (130).
TEST(GpuBackend, CublasBatchesGiveTheEmulatorsProducts) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const auto batched = gpu::make_gpu_backend({.engine = gpu::GemmEngine::cublas});
  const auto one_by_one = gpu::make_gpu_backend(
      {.engine = gpu::GemmEngine::cublas, .batched_gemm_max_multiply_adds = 0});
  const auto emulator = host::make_emulator_backend();
  const std::string arch = gpu::list_devices().front().arch_preset();
  std::mt19937_64 rng(3);
  for (const FloatFormat& input : {formats::fp16, formats::bf16, formats::tf32}) {
    const Datapath dp = preset(arch, input, formats::fp32, "mma.sync");
    for (const Layout ld : {Layout::row_major, Layout::column_major}) {
      for (const std::size_t count : {std::size_t{2}, std::size_t{130}}) {
        const std::int64_t m = 33, n = 20, k = 64;
        HostMatrix a(input, m, k, Layout::row_major, 1), b(input, k, n, Layout::column_major, 2);
        const HostMatrix d(formats::fp32, m, n, ld, 1);
        std::vector<unsigned char> as, bs;
        for (std::size_t i = 0; i < count; ++i) {
          fill_small_integers(a, rng);
          fill_small_integers(b, rng);
          as.insert(as.end(), a.bytes.begin(), a.bytes.end());
          bs.insert(bs.end(), b.bytes.begin(), b.bytes.end());
        }
        const std::vector<unsigned char> ds(d.bytes.size() * count, 0xA5);
        std::vector<unsigned char> results[3];
        Backend* backends[3] = {batched.get(), one_by_one.get(), emulator.get()};
        for (int which = 0; which < 3; ++which) {
          Backend& be = *backends[which];
          Buffer ab = be.allocate(as.size()), bb = be.allocate(bs.size()),
                 db = be.allocate(ds.size());
          be.copy_in(as.data(), ab, as.size());
          be.copy_in(bs.data(), bb, bs.size());
          be.copy_in(ds.data(), db, ds.size());
          std::vector<GemmProduct> batch;
          for (std::size_t i = 0; i < count; ++i) {
            batch.push_back({{&ab, i * a.bytes.size(), input, m, k, a.ld, a.layout},
                             {&bb, i * b.bytes.size(), input, k, n, b.ld, b.layout},
                             {&db, i * d.bytes.size(), formats::fp32, m, n, d.ld, d.layout}});
          }
          be.mma_gemm_batch(dp, {.alpha = 2.0f}, batch);
          results[which].resize(ds.size());
          be.copy_out(db, results[which].data(), ds.size());
        }
        const std::string what = std::string(input.name) + ", " + std::to_string(count) +
                                 " products, D " + (ld == Layout::row_major ? "row" : "column") +
                                 " major";
        // Every byte of the Ds, padding included, as fp32 bits: `count` Ds of m x n with their
        // padding row (column major) or column (row major), one after the other.
        const bool by_columns = ld == Layout::column_major;
        const std::int64_t rows = by_columns ? d.ld : m * static_cast<std::int64_t>(count),
                           cols = by_columns ? n * static_cast<std::int64_t>(count) : d.ld;
        const auto words = [](const std::vector<unsigned char>& bytes) {
          std::vector<std::uint32_t> out(bytes.size() / 4);
          std::memcpy(out.data(), bytes.data(), out.size() * 4);
          return out;
        };
        const std::vector<std::uint32_t> want = words(results[2]);
        const test::SameBitsOptions options{
            .order = by_columns ? test::Order::column_major : test::Order::row_major,
            .inputs =
                [&](std::int64_t i, std::int64_t j) {
                  const std::int64_t product = by_columns ? j / n : i / m;
                  const std::int64_t r = by_columns ? i : i % m, c = by_columns ? j % n : j;
                  if (r >= m || c >= n) {
                    return "padding of product " + std::to_string(product) + " (0xa5a5a5a5)";
                  }
                  return "product " + std::to_string(product) + ", D(" + std::to_string(r) + ", " +
                         std::to_string(c) + "); A row " + std::to_string(r) + " and B column " +
                         std::to_string(c) + " of small integers";
                },
            .value = test::fp32_value};
        EXPECT_TRUE(test::same_bits(want, words(results[0]), rows, cols, options))
            << "batched, " << what;
        EXPECT_TRUE(test::same_bits(want, words(results[1]), rows, cols, options))
            << "one by one, " << what;
      }
    }
  }
}

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

TEST(GpuBackend, BadRequestsAreNamed) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const auto gpu = gpu::make_gpu_backend();
  const std::string arch = gpu::list_devices().front().arch_preset();
  EXPECT_NE(error_of([&] { gpu->allocate(std::size_t{1} << 50); }).find("out of device memory"),
            std::string::npos);
  HostMatrix a(formats::fp16, 32, 32, Layout::row_major), b = a;
  HostMatrix d(formats::fp32, 32, 32, Layout::row_major);
  const OnBackend ba = put(*gpu, a), bb = put(*gpu, b), bd = put(*gpu, d);
  Datapath rn = preset(arch, formats::fp16, formats::fp32, "mma.sync");
  rn.block_rounding = Rounding::nearest_even;
  EXPECT_NE(error_of([&] {
              gpu->mma_gemm(rn, {}, ba.matrix, bb.matrix, std::nullopt, bd.matrix);
            }).find(" computes the " + arch + " preset"),
            std::string::npos);
  const Datapath dp = preset(arch, formats::fp16, formats::fp32, "mma.sync");
  EXPECT_NE(error_of([&] {
              gpu->mma_gemm(dp, {.takeout_every_k = 24}, ba.matrix, bb.matrix, std::nullopt,
                            bd.matrix);
            }).find("takeout_every_k = 24"),
            std::string::npos);
  const auto cublas = gpu::make_gpu_backend({.engine = gpu::GemmEngine::cublas});
  const OnBackend ca = put(*cublas, a), cb = put(*cublas, b), cd = put(*cublas, d);
  EXPECT_NE(error_of([&] {
              cublas->mma_gemm(dp, {.takeout_every_k = 24}, ca.matrix, cb.matrix, std::nullopt,
                               cd.matrix);
            }).find("gpu (cublas): takeout_every_k = 24"),
            std::string::npos);
  EXPECT_NE(error_of([] { gpu::make_gpu_backend({.device = 99}); }).find("no CUDA device 99"),
            std::string::npos);
}

TEST(GpuBackend, WithoutADeviceTheFactoryExplains) {
  std::string why;
  if (!gpu::list_devices(&why).empty()) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_NE(error_of([] { gpu::make_gpu_backend(); }).find("no CUDA device"), std::string::npos);
}

}  // namespace
}  // namespace tcemu
