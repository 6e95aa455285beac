// The Ozaki scheme gives the same bits on the GPU backend as on the emulator backend with the
// GPU's preset (issue 4: reproducible across backends), in every mode, on both GPU GEMM engines
// that compute exact slice products (our mma.sync kernel and cuBLAS), blocked or not, with
// transposes, NaN and Inf, through host arrays and through device-resident matrices; and
// DGEMM-DP-CR (binary64 slices, cublasDgemm) gives the cpu64 backend's bits. Mode cr rounded
// upward, downward and toward zero (Options::rounding, issue 37) gives MPFR's bits on the device
// for every scheme, through host arrays and device-resident matrices. zgemm and cgemm (their real
// form's kernels and the complex epilogue) give the emulator's bits for every scheme and mode,
// through host arrays and device-resident complex matrices.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <complex>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <tcemu/emulator/presets.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/gpu_backend.hpp>
#include <tcemu/host/host_backends.hpp>
#include <tcemu/ozaki/handle.hpp>
#include <tcemu/reference/exact_gemm.hpp>
#include <tcemu/reference/phi_values.hpp>
#include <tcemu/test/double_rounding_cases.hpp>
#include <tcemu/test/same_bits.hpp>

namespace tcemu {
namespace {

// C = alpha op(A) op(B) + beta C, column major as BLAS has it (ldc = m).
template <typename T>
struct Gemm {
  char transa, transb;
  std::int64_t m, n, k;
  const std::vector<T>& a;
  const std::vector<T>& b;
  const std::vector<T>* c;  // C before the call, where beta != 0

  // The inputs of element (i, j): C's element, and what row i of op(A) and column j of op(B)
  // span.
  std::string inputs(std::int64_t i, std::int64_t j) const {
    const auto a_at = [&](std::int64_t p) { return transa == 'N' ? a[p * m + i] : a[i * k + p]; };
    const auto b_at = [&](std::int64_t p) { return transb == 'N' ? b[j * k + p] : b[p * n + j]; };
    std::string out;
    if (c) out = "C " + test::hex_of((*c)[j * m + i]) + ", ";
    return out + "A row " + std::to_string(i) + ": " + test::value_range(k, a_at) + "\nB column " +
           std::to_string(j) + ": " + test::value_range(k, b_at);
  }

  // `got` against `want`, bit for bit.
  test::BitComparison compare(const std::vector<T>& want, const std::vector<T>& got) const {
    return test::compare_bits(want, got, m, n, {.inputs = [this](std::int64_t i, std::int64_t j) {
                                return inputs(i, j);
                              }});
  }
};

std::string skip_reason() {
  std::string why;
  if (gpu::list_devices(&why).empty()) return "no CUDA device: " + why;
  return "";
}

using ozaki::mode_name;

struct DgemmRun {
  ozaki::Options options;
  char transa, transb;
};

std::vector<DgemmRun> dgemm_runs() {
  std::vector<DgemmRun> runs;
  for (const std::size_t workspace : {std::size_t{512} << 20, std::size_t{2} << 20}) {
    runs.push_back({{.mode = ozaki::Mode::dp, .workspace_bytes = workspace}, 'N', 'N'});
    runs.push_back({{.mode = ozaki::Mode::dp, .workspace_bytes = workspace}, 'T', 'T'});
    runs.push_back({{.mode = ozaki::Mode::cr, .workspace_bytes = workspace}, 'T', 'N'});
    runs.push_back(
        {{.mode = ozaki::Mode::tunable, .splits = 3, .workspace_bytes = workspace}, 'N', 'T'});
    runs.push_back(
        {{.mode = ozaki::Mode::tunable, .splits = 4, .fast = false, .workspace_bytes = workspace},
         'T',
         'T'});
  }
  return runs;
}

TEST(OzakiOnGpu, EveryModeGivesTheEmulatorsBits) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const std::string arch = gpu::list_devices().front().arch_preset();
  const auto emulator = host::make_emulator_backend();
  const std::int64_t m = 70, n = 50, k = 130;
  std::mt19937_64 rng(8);
  auto a = reference::phi_values<double>(m * k, 4.0, rng),
       b = reference::phi_values<double>(k * n, 4.0, rng);
  const auto c = reference::phi_values<double>(m * n, 1.0, rng);
  const ozaki::TensorCoreProducts products{preset(arch, formats::fp16, formats::fp32, "mma.sync")};
  for (const gpu::GemmEngine engine : {gpu::GemmEngine::mma_sync, gpu::GemmEngine::cublas}) {
    const auto gpu_backend = gpu::make_gpu_backend({.engine = engine});
    for (const bool special : {false, true}) {
      if (special) {  // NaN and Inf in a row of A and a column of B
        a[3] = INFINITY;
        a[static_cast<std::size_t>(5 * m + 9)] = NAN;
        b[static_cast<std::size_t>(2 * k + 7)] = -INFINITY;
      }
      for (const DgemmRun& run : dgemm_runs()) {
        const double beta = run.options.mode == ozaki::Mode::cr ? 0.0 : 0.5;
        const std::int64_t lda = run.transa == 'N' ? m : k, ldb = run.transb == 'N' ? k : n;
        std::vector<double> on_gpu = c, on_emulator = c;
        ozaki::Handle gh(*gpu_backend, products, run.options);
        gh.dgemm(run.transa, run.transb, m, n, k, 1.0, a.data(), lda, b.data(), ldb, beta,
                 on_gpu.data(), m);
        ozaki::Handle(*emulator, products, run.options)
            .dgemm(run.transa, run.transb, m, n, k, 1.0, a.data(), lda, b.data(), ldb, beta,
                   on_emulator.data(), m);
        const Gemm<double> gemm{run.transa, run.transb, m, n, k, a, b, beta != 0.0 ? &c : nullptr};
        const test::BitComparison same = gemm.compare(on_emulator, on_gpu);
        EXPECT_TRUE(same.result) << mode_name(run.options.mode) << " " << run.transa << run.transb
                                 << (special ? ", NaN and Inf" : "");
        std::printf(
            "dgemm-tc %s (%c%c, %lld blocks, %s engine%s) on %s, %lld x %lld x %lld: %lld "
            "elements differ between GPU and emulator\n",
            mode_name(run.options.mode), run.transa, run.transb,
            static_cast<long long>(gh.report().blocks),
            engine == gpu::GemmEngine::cublas ? "cublas" : "mma.sync",
            special ? ", NaN and Inf" : "", arch.c_str(), static_cast<long long>(m),
            static_cast<long long>(n), static_cast<long long>(k),
            static_cast<long long>(same.differing));
      }
    }
  }
}

TEST(OzakiOnGpu, SgemmTcGivesTheEmulatorsBits) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const std::string arch = gpu::list_devices().front().arch_preset();
  const auto gpu_backend = gpu::make_gpu_backend();
  const auto emulator = host::make_emulator_backend();
  const std::int64_t m = 90, n = 45, k = 200;
  std::mt19937_64 rng(9);
  auto a = reference::phi_values<float>(m * k, 3.0, rng),
       b = reference::phi_values<float>(k * n, 3.0, rng);
  const auto c = reference::phi_values<float>(m * n, 1.0, rng);
  a[11] = NAN;
  const ozaki::TensorCoreProducts products{preset(arch, formats::fp16, formats::fp32, "mma.sync")};
  for (const ozaki::Options& options :
       {ozaki::Options{.mode = ozaki::Mode::sp},
        ozaki::Options{.mode = ozaki::Mode::tunable, .splits = 2}}) {
    std::vector<float> on_gpu = c, on_emulator = c;
    ozaki::Handle(*gpu_backend, products, options)
        .sgemm('N', 'N', m, n, k, 1.5f, a.data(), m, b.data(), k, -0.25f, on_gpu.data(), m);
    ozaki::Handle(*emulator, products, options)
        .sgemm('N', 'N', m, n, k, 1.5f, a.data(), m, b.data(), k, -0.25f, on_emulator.data(), m);
    const test::BitComparison same =
        Gemm<float>{'N', 'N', m, n, k, a, b, &c}.compare(on_emulator, on_gpu);
    EXPECT_TRUE(same.result) << mode_name(options.mode);
    std::printf("sgemm-tc %s on %s: %lld elements differ between GPU and emulator\n",
                mode_name(options.mode), arch.c_str(), static_cast<long long>(same.differing));
  }
}

TEST(OzakiOnGpu, DgemmDpCrWithCublasDgemmGivesTheCpu64Bits) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const auto gpu_backend = gpu::make_gpu_backend();
  const auto cpu64 = host::make_cpu64_backend();
  const std::int64_t m = 64, n = 80, k = 300;
  std::mt19937_64 rng(10);
  const auto a = reference::phi_values<double>(m * k, 2.0, rng),
             b = reference::phi_values<double>(k * n, 2.0, rng);
  for (const ozaki::Mode mode : {ozaki::Mode::dp, ozaki::Mode::cr}) {
    std::vector<double> on_gpu(static_cast<std::size_t>(m * n)), on_cpu(on_gpu.size());
    ozaki::Handle(*gpu_backend, ozaki::Fp64Products{}, {.mode = mode})
        .dgemm('N', 'N', m, n, k, 1.0, a.data(), m, b.data(), k, 0.0, on_gpu.data(), m);
    ozaki::Handle(*cpu64, ozaki::Fp64Products{}, {.mode = mode})
        .dgemm('N', 'N', m, n, k, 1.0, a.data(), m, b.data(), k, 0.0, on_cpu.data(), m);
    const test::BitComparison same =
        Gemm<double>{'N', 'N', m, n, k, a, b, nullptr}.compare(on_cpu, on_gpu);
    EXPECT_TRUE(same.result) << mode_name(mode);
    std::printf("dgemm-dp-cr %s: %lld elements differ between GPU (cublasDgemm) and cpu64\n",
                mode_name(mode), static_cast<long long>(same.differing));
  }
}

// Ozaki-I on int8 (IntegerProducts) and Ozaki-II (CrtProducts): the GPU's cublasGemmEx int8 ->
// int32 products and step kernels give the emulator's bits in every mode, blocked or not, with
// transposes, an Inf and a NaN, and on an odd k (operands padded for cuBLAS) and a k past 8192.
TEST(OzakiOnGpu, IntegerAndCrtProductsGiveTheEmulatorsBits) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const auto gpu_backend = gpu::make_gpu_backend();
  const auto emulator = host::make_emulator_backend();
  struct Shape {
    std::int64_t m, n, k;
  };
  for (const bool crt : {false, true}) {
    const ozaki::Products products =
        crt ? ozaki::Products(ozaki::CrtProducts{}) : ozaki::Products(ozaki::IntegerProducts{});
    // n = 20000: the GPU's integer GEMM goes as column blocks of 8192 and 11808; m = 64 and k =
    // 100 (multiples of 4): the CRT steps' four-byte residue stores and loads.
    for (const Shape shape :
         {Shape{70, 50, 130}, Shape{33, 17, 9001}, Shape{5, 20000, 40}, Shape{64, 36, 100}}) {
      const auto [m, n, k] = shape;
      std::mt19937_64 rng(static_cast<std::uint64_t>(k));
      auto a = reference::phi_values<double>(m * k, 4.0, rng),
           b = reference::phi_values<double>(k * n, 4.0, rng);
      a[5] = INFINITY;
      b[static_cast<std::size_t>(3 * k + 1)] = NAN;
      for (const DgemmRun& run : dgemm_runs()) {
        // Ozaki-I's CR mode takes minutes on the emulator at this k.
        if (!crt && k > 1000 && run.options.mode == ozaki::Mode::cr) continue;
        std::vector<double> on_gpu(static_cast<std::size_t>(m * n)), on_emulator(on_gpu.size());
        const std::int64_t lda = run.transa == 'N' ? m : k, ldb = run.transb == 'N' ? k : n;
        ozaki::Handle(*gpu_backend, products, run.options)
            .dgemm(run.transa, run.transb, m, n, k, 1.0, a.data(), lda, b.data(), ldb, 0.0,
                   on_gpu.data(), m);
        ozaki::Handle(*emulator, products, run.options)
            .dgemm(run.transa, run.transb, m, n, k, 1.0, a.data(), lda, b.data(), ldb, 0.0,
                   on_emulator.data(), m);
        const test::BitComparison same =
            Gemm<double>{run.transa, run.transb, m, n, k, a, b, nullptr}.compare(on_emulator,
                                                                                 on_gpu);
        EXPECT_TRUE(same.result) << (crt ? "crt " : "int8 ") << mode_name(run.options.mode) << " k "
                                 << k << " workspace " << run.options.workspace_bytes;
        std::printf("%s %s k %lld workspace %zu: %lld elements differ (GPU vs emulator)\n",
                    crt ? "crt" : "int8", mode_name(run.options.mode), static_cast<long long>(k),
                    run.options.workspace_bytes, static_cast<long long>(same.differing));
      }
    }
  }
}

// Ozaki-II dp's count from its bound of |A||B| (crt_magnitude_bound and crt_bound_need on the
// GPU's kernels and cublasGemmEx): the same bound, count and bits as the emulator's at every
// spread, both layouts, the whole and in blocks (a small workspace), k a multiple of 4 and odd
// (the transposed quanta's four-byte stores and their byte fallback), and k = 8192, where the
// bound on the leading k / 16 terms decides (phi = 0.1: at most one modulus more than the least)
// or hands over to the whole (phi = 4).
TEST(OzakiOnGpu, CrtDpBoundGivesTheEmulatorsCountAndBits) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const auto gpu_backend = gpu::make_gpu_backend();
  const auto emulator = host::make_emulator_backend();
  const std::int64_t m = 45, n = 38;
  for (const auto& [phi, k] :
       {std::pair{0.1, 700}, {1.0, 333}, {4.0, 700}, {8.0, 333}, {0.1, 8192}, {4.0, 8192}}) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(phi * 10));
    const auto a = reference::phi_values<double>(m * k, phi, rng),
               b = reference::phi_values<double>(k * n, phi, rng);
    const std::size_t small = k < 4096 ? std::size_t{200} << 10 : std::size_t{4} << 20;
    for (const std::size_t workspace : {std::size_t{512} << 20, small}) {
      for (const char trans : {'N', 'T'}) {
        const ozaki::Options options{.mode = ozaki::Mode::dp, .workspace_bytes = workspace};
        std::vector<double> on_gpu(static_cast<std::size_t>(m * n)), on_emulator(on_gpu.size());
        const std::int64_t lda = trans == 'N' ? m : k, ldb = trans == 'N' ? k : n;
        ozaki::Handle g(*gpu_backend, ozaki::CrtProducts{}, options);
        g.dgemm(trans, trans, m, n, k, 1.0, a.data(), lda, b.data(), ldb, 0.0, on_gpu.data(), m);
        ozaki::Handle e(*emulator, ozaki::CrtProducts{}, options);
        e.dgemm(trans, trans, m, n, k, 1.0, a.data(), lda, b.data(), ldb, 0.0, on_emulator.data(),
                m);
        const test::BitComparison same =
            Gemm<double>{trans, trans, m, n, k, a, b, nullptr}.compare(on_emulator, on_gpu);
        EXPECT_TRUE(same.result) << "phi " << phi << " " << trans << " workspace " << workspace;
        EXPECT_EQ(g.report().dp_bound_bits, e.report().dp_bound_bits) << "phi " << phi;
        EXPECT_EQ(g.report().slices_a, e.report().slices_a) << "phi " << phi;
        EXPECT_EQ(g.report().dp_bound_terms, e.report().dp_bound_terms) << "phi " << phi;
        if (k >= 4096) {
          EXPECT_EQ(g.report().dp_bound_terms, phi < 1 ? k / 16 : k) << "phi " << phi;
        }
        std::printf(
            "crt dp phi %g k %d %c workspace %zu: bound %d on %lld terms, %d moduli, %lld "
            "elements differ\n",
            phi, k, trans, workspace, g.report().dp_bound_bits,
            static_cast<long long>(g.report().dp_bound_terms), g.report().slices_a,
            static_cast<long long>(same.differing));
      }
    }
  }
}

// Handle::gemm on matrices already in device memory gives the bits of Handle::dgemm.
TEST(OzakiOnGpu, DeviceResidentGemmGivesTheHostArrayBits) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const std::string arch = gpu::list_devices().front().arch_preset();
  const auto gpu_backend = gpu::make_gpu_backend({.engine = gpu::GemmEngine::cublas});
  const std::int64_t m = 33, n = 65, k = 129;
  std::mt19937_64 rng(12);
  const auto a = reference::phi_values<double>(m * k, 1.0, rng),
             b = reference::phi_values<double>(k * n, 1.0, rng);
  const auto c = reference::phi_values<double>(m * n, 1.0, rng);
  const ozaki::TensorCoreProducts products{preset(arch, formats::fp16, formats::fp32)};
  ozaki::Handle h(*gpu_backend, products, {.mode = ozaki::Mode::dp});
  std::vector<double> expected = c;
  h.dgemm('N', 'N', m, n, k, 2.0, a.data(), m, b.data(), k, -1.0, expected.data(), m);
  Buffer ab = gpu_backend->allocate(a.size() * 8), bb = gpu_backend->allocate(b.size() * 8),
         cb = gpu_backend->allocate(c.size() * 8);
  gpu_backend->copy_in(a.data(), ab, a.size() * 8);
  gpu_backend->copy_in(b.data(), bb, b.size() * 8);
  gpu_backend->copy_in(c.data(), cb, c.size() * 8);
  h.gemm(2.0, {&ab, 0, Real::fp64, m, k, m, Layout::column_major},
         {&bb, 0, Real::fp64, k, n, k, Layout::column_major}, -1.0,
         {&cb, 0, Real::fp64, m, n, m, Layout::column_major});
  std::vector<double> got(c.size());
  gpu_backend->copy_out(cb, got.data(), got.size() * 8);
  EXPECT_TRUE((Gemm<double>{'N', 'N', m, n, k, a, b, &c}.compare(expected, got).result));
  EXPECT_THROW(h.gemm(1.0, {&ab, 0, Real::fp64, m, k, m, Layout::column_major},
                      {&bb, 0, Real::fp64, k - 1, n, k, Layout::column_major}, 0.0,
                      {&cb, 0, Real::fp64, m, n, m, Layout::column_major}),
               std::invalid_argument);
}

// The schemes with mode cr on the GPU backend (tensor cores of preset `arch`), by their products.
std::vector<std::pair<const char*, ozaki::Products>> cr_schemes(const std::string& arch) {
  return {{"tc", ozaki::TensorCoreProducts{preset(arch, formats::fp16, formats::fp32, "mma.sync")}},
          {"int8", ozaki::IntegerProducts{}},
          {"crt", ozaki::CrtProducts{}},
          {"binary64 slices", ozaki::Fp64Products{}}};
}

TEST(OzakiOnGpu, DirectedCrGivesMpfrsBitsOnTheDevice) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const std::string arch = gpu::list_devices().front().arch_preset();
  const std::int64_t m = 67, n = 45, k = 150;
  std::mt19937_64 rng(37);
  auto a = reference::phi_values<double>(m * k, 2.0, rng),
       b = reference::phi_values<double>(k * n, 2.0, rng);
  for (std::int64_t p = 0; p < k; ++p) a[static_cast<std::size_t>(p * m + 1)] *= 0x1p-1060;
  const auto gpu_backend = gpu::make_gpu_backend({});
  const auto schemes = cr_schemes(arch);
  const std::vector<double> nearest = reference::correctly_rounded_gemm(m, n, k, a, b);
  for (const fp64::Direction d :
       {fp64::Direction::upward, fp64::Direction::downward, fp64::Direction::toward_zero}) {
    const std::vector<double> expected = reference::correctly_rounded_gemm(m, n, k, a, b, d);
    std::size_t apart = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) apart += expected[i] != nearest[i];
    EXPECT_GT(apart, expected.size() / 4) << "the inputs must make the direction matter";
    for (const auto& [name, products] : schemes) {
      ozaki::Handle h(*gpu_backend, products, {.mode = ozaki::Mode::cr, .rounding = d});
      std::vector<double> got(static_cast<std::size_t>(m * n), 7.0);
      h.dgemm('N', 'N', m, n, k, 1.0, a.data(), m, b.data(), k, 0.0, got.data(), m);
      const Gemm<double> gemm{'N', 'N', m, n, k, a, b, nullptr};
      const test::BitComparison same = gemm.compare(expected, got);
      EXPECT_TRUE(same.result) << name << ", " << ozaki::rounding_name(d);
      std::printf("%s cr rounded %s on %s, %lld x %lld x %lld: %lld elements differ from MPFR's\n",
                  name, ozaki::rounding_name(d), arch.c_str(), static_cast<long long>(m),
                  static_cast<long long>(n), static_cast<long long>(k),
                  static_cast<long long>(same.differing));
    }
  }
}

// A rows x cols complex matrix, column-major with leading dimension ld (padding NaN), parts
// (rand - 0.5) exp(phi randn).
template <typename T>
std::vector<std::complex<T>> complex_values(std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                            double phi, std::mt19937_64& rng) {
  const auto re = reference::phi_values<T>(rows * cols, phi, rng),
             im = reference::phi_values<T>(rows * cols, phi, rng);
  std::vector<std::complex<T>> x(static_cast<std::size_t>(ld * cols), {NAN, NAN});
  for (std::int64_t j = 0; j < cols; ++j) {
    for (std::int64_t i = 0; i < rows; ++i) x[j * ld + i] = {re[j * rows + i], im[j * rows + i]};
  }
  return x;
}

// The parts of two complex m x n arrays (leading dimension ld), bit for bit.
template <typename T>
test::BitComparison compare_parts(const std::vector<std::complex<T>>& want,
                                  const std::vector<std::complex<T>>& got, std::int64_t m,
                                  std::int64_t n, std::int64_t ld) {
  const auto parts = [](const std::vector<std::complex<T>>& x) {
    std::vector<T> p;
    for (const auto& v : x) p.insert(p.end(), {v.real(), v.imag()});
    return p;
  };
  return test::compare_bits(parts(want), parts(got), 2 * m, n, {.ld = 2 * ld});
}

// zgemm and cgemm: the real form (complex_real_form), the scheme on it and the complex epilogue
// on the GPU give the emulator's bits, for every scheme, mode and pair of operations, padded
// leading dimensions, complex alpha and beta, an Inf, and a small workspace (blocks).
TEST(OzakiOnGpu, ComplexGemmGivesTheEmulatorsBits) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const std::string arch = gpu::list_devices().front().arch_preset();
  const auto gpu_backend = gpu::make_gpu_backend();
  const auto emulator = host::make_emulator_backend();
  const std::int64_t m = 37, n = 29, k = 71;
  const std::pair<const char*, ozaki::Products> schemes[] = {
      {"dgemm-tc",
       ozaki::TensorCoreProducts{preset(arch, formats::fp16, formats::fp32, "mma.sync")}},
      {"dgemm-int8", ozaki::IntegerProducts{}},
      {"dgemm-crt", ozaki::CrtProducts{}}};
  struct Run {
    ozaki::Options options;
    char transa, transb;
    bool plain;  // alpha = 1, beta = 0 (a directed rounding needs it)
  };
  const Run runs[] = {
      {{.mode = ozaki::Mode::dp}, 'N', 'N', false},
      {{.mode = ozaki::Mode::dp, .workspace_bytes = std::size_t{256} << 10}, 'C', 'T', false},
      {{.mode = ozaki::Mode::cr}, 'T', 'C', false},
      {{.mode = ozaki::Mode::cr, .rounding = fp64::Direction::downward}, 'C', 'C', true},
      {{.mode = ozaki::Mode::tunable, .splits = 3}, 'N', 'C', false}};
  std::mt19937_64 rng(41);
  for (const auto& [name, products] : schemes) {
    for (const Run& run : runs) {
      const std::int64_t lda = (run.transa == 'N' ? m : k) + 3,
                         ldb = (run.transb == 'N' ? k : n) + 1, ldc = m + 2;
      auto a = complex_values<double>(run.transa == 'N' ? m : k, run.transa == 'N' ? k : m, lda,
                                      2.0, rng);
      const auto b = complex_values<double>(run.transb == 'N' ? k : n, run.transb == 'N' ? n : k,
                                            ldb, 2.0, rng);
      const auto c = complex_values<double>(m, n, ldc, 1.0, rng);
      a[5] = {INFINITY, 0.0};
      const std::complex<double> alpha = run.plain ? 1.0 : std::complex<double>{0.75, -1.5},
                                 beta = run.plain ? 0.0 : std::complex<double>{-0.5, 0.25};
      std::vector<std::complex<double>> on_gpu = c, on_emulator = c;
      ozaki::Handle(*gpu_backend, products, run.options)
          .zgemm(run.transa, run.transb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta,
                 on_gpu.data(), ldc);
      ozaki::Handle(*emulator, products, run.options)
          .zgemm(run.transa, run.transb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta,
                 on_emulator.data(), ldc);
      const test::BitComparison same = compare_parts(on_emulator, on_gpu, m, n, ldc);
      EXPECT_TRUE(same.result) << name << " " << mode_name(run.options.mode) << " " << run.transa
                               << run.transb;
      std::printf("zgemm %s %s %c%c on %s: %lld parts differ between GPU and emulator\n", name,
                  mode_name(run.options.mode), run.transa, run.transb, arch.c_str(),
                  static_cast<long long>(same.differing));
    }
    for (const ozaki::Options& options :
         {ozaki::Options{.mode = ozaki::Mode::sp},
          ozaki::Options{.mode = ozaki::Mode::tunable, .splits = 2}}) {
      const auto a = complex_values<float>(k, m, k, 2.0, rng),
                 b = complex_values<float>(k, n, k, 2.0, rng),
                 c = complex_values<float>(m, n, m, 1.0, rng);
      std::vector<std::complex<float>> on_gpu = c, on_emulator = c;
      const std::complex<float> alpha{1.25f, 0.5f}, beta{0.0f, -1.0f};
      ozaki::Handle(*gpu_backend, products, options)
          .cgemm('C', 'N', m, n, k, alpha, a.data(), k, b.data(), k, beta, on_gpu.data(), m);
      ozaki::Handle(*emulator, products, options)
          .cgemm('C', 'N', m, n, k, alpha, a.data(), k, b.data(), k, beta, on_emulator.data(), m);
      const test::BitComparison same = compare_parts(on_emulator, on_gpu, m, n, m);
      EXPECT_TRUE(same.result) << name << " cgemm " << mode_name(options.mode);
      std::printf("cgemm %s %s on %s: %lld parts differ between GPU and emulator\n", name,
                  mode_name(options.mode), arch.c_str(), static_cast<long long>(same.differing));
    }
  }
}

// sgemm and cgemm in mode cr (the scheme rounds to odd in binary64, the epilogue once to
// binary32 in the direction, on the device): every scheme gives MPFR's binary32 bits in every
// direction on inputs where a double rounding fails, and cgemm the emulator's bits, part for part.
TEST(OzakiOnGpu, SingleCrGivesMpfrsBitsOnTheDevice) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const std::string arch = gpu::list_devices().front().arch_preset();
  const auto gpu_backend = gpu::make_gpu_backend();
  const auto emulator = host::make_emulator_backend();
  const test::DoubleRoundingCases t = test::double_rounding_cases(60, 53);
  const std::vector<float> a(t.a.begin(), t.a.end()), b(t.b.begin(), t.b.end());
  const auto schemes = cr_schemes(arch);
  std::mt19937_64 rng(59);
  for (const fp64::Direction d : {fp64::Direction::nearest_even, fp64::Direction::upward,
                                  fp64::Direction::downward, fp64::Direction::toward_zero}) {
    const std::vector<double> wide =
        reference::correctly_rounded_gemm(t.m, t.n, t.k, t.a, t.b, d, true);
    const std::vector<float> expected(wide.begin(), wide.end());
    for (const auto& [name, products] : schemes) {
      ozaki::Handle h(*gpu_backend, products, {.mode = ozaki::Mode::cr, .rounding = d});
      std::vector<float> got(expected.size(), 7.0f);
      h.sgemm('N', 'N', t.m, t.n, t.k, 1.0f, a.data(), t.m, b.data(), t.k, 0.0f, got.data(), t.m);
      const test::BitComparison same =
          Gemm<float>{'N', 'N', t.m, t.n, t.k, a, b, nullptr}.compare(expected, got);
      EXPECT_TRUE(same.result) << name << ", " << ozaki::rounding_name(d);
      std::printf("sgemm %s cr rounded %s on %s: %lld elements differ from MPFR's\n", name,
                  ozaki::rounding_name(d), arch.c_str(), static_cast<long long>(same.differing));
      if (std::string(name) == "binary64 slices") continue;  // the emulator multiplies no fp64
      const std::int64_t m = 23, n = 19, k = 41;
      const auto ca = complex_values<float>(k, m, k, 2.0, rng),
                 cb = complex_values<float>(k, n, k, 2.0, rng);
      std::vector<std::complex<float>> on_gpu(static_cast<std::size_t>(m * n)),
          on_emulator(on_gpu.size());
      ozaki::Handle(*gpu_backend, products, {.mode = ozaki::Mode::cr, .rounding = d})
          .cgemm('C', 'N', m, n, k, 1.0f, ca.data(), k, cb.data(), k, 0.0f, on_gpu.data(), m);
      ozaki::Handle(*emulator, products, {.mode = ozaki::Mode::cr, .rounding = d})
          .cgemm('C', 'N', m, n, k, 1.0f, ca.data(), k, cb.data(), k, 0.0f, on_emulator.data(), m);
      const test::BitComparison parts = compare_parts(on_emulator, on_gpu, m, n, m);
      EXPECT_TRUE(parts.result) << name << " cgemm cr " << ozaki::rounding_name(d);
    }
  }
}

// Handle::gemm on complex matrices in device memory (what the cuBLAS library hands it) gives
// zgemm's bits.
TEST(OzakiOnGpu, DeviceResidentComplexGemmGivesZgemmsBits) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const auto gpu_backend = gpu::make_gpu_backend();
  const std::int64_t m = 40, n = 33, k = 57, lda = k + 2, ldb = n + 1, ldc = m + 3;
  std::mt19937_64 rng(43);
  using Z = std::complex<double>;
  const auto a = complex_values<double>(k, m, lda, 1.0, rng);  // op 'C'
  const auto b = complex_values<double>(n, k, ldb, 1.0, rng);  // op 'T'
  const auto c = complex_values<double>(m, n, ldc, 1.0, rng);
  ozaki::Handle h(*gpu_backend, ozaki::CrtProducts{}, {.mode = ozaki::Mode::dp});
  const Z alpha{-1.0, 2.0}, beta{0.5, 0.5};
  std::vector<Z> expected = c;
  h.zgemm('C', 'T', m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, expected.data(), ldc);
  const auto on_device = [&](const std::vector<Z>& x) {
    Buffer out = gpu_backend->allocate(x.size() * sizeof(Z));
    gpu_backend->copy_in(x.data(), out, x.size() * sizeof(Z));
    return out;
  };
  Buffer ab = on_device(a), bb = on_device(b), cb = on_device(c);
  h.gemm(alpha, {&ab, 0, Complex::c128, m, k, lda, Layout::row_major}, true,
         {&bb, 0, Complex::c128, k, n, ldb, Layout::row_major}, false, beta,
         {&cb, 0, Complex::c128, m, n, ldc, Layout::column_major});
  std::vector<Z> got(c.size());
  gpu_backend->copy_out(cb, got.data(), got.size() * sizeof(Z));
  EXPECT_TRUE(compare_parts(expected, got, m, n, ldc).result);
}

}  // namespace
}  // namespace tcemu
