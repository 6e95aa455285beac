// The Ozaki scheme through its handle: CR mode against MPFR, DP mode against plain DGEMM,
// reproducibility across runs, thread counts, presets and backends, blocking, SP mode.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include <tcemu/emulator/presets.hpp>
#include <tcemu/host/host_backends.hpp>
#include <tcemu/ozaki/handle.hpp>
#include <tcemu/ozaki/split_rule.hpp>

#include "ozaki_support.hpp"

namespace tcemu::ozaki {
namespace {

using testing::correctly_rounded_product;
using testing::max_relative_error;
using testing::phi_matrix;
using testing::plain_dgemm;
using testing::same_product_bits;

Products tensor_cores(const char* arch = "sm90") {
  return TensorCoreProducts{preset(arch, formats::fp16, formats::fp32)};
}

// C = A B (alpha 1, beta 0) through a handle; A m x k, B k x n column-major.
std::vector<double> run(Backend& backend, const Products& products, Options options, std::int64_t m,
                        std::int64_t n, std::int64_t k, const std::vector<double>& a,
                        const std::vector<double>& b, Report* report = nullptr) {
  Handle h(backend, products, options);
  std::vector<double> c(static_cast<std::size_t>(m * n), std::numeric_limits<double>::quiet_NaN());
  h.dgemm('N', 'N', m, n, k, 1.0, a.data(), m, b.data(), k, 0.0, c.data(), m);
  if (report) *report = h.report();
  return c;
}

TEST(SplitRule, SliceBitsKeepEveryProductExact) {
  // fp16 on an fp32 accumulator: k 2^(2b) < 2^24.
  EXPECT_EQ(slice_bits(tensor_cores(), 1), 11);  // capped by fp16's 11 significant bits
  EXPECT_EQ(slice_bits(tensor_cores(), 1000), 7);
  EXPECT_EQ(slice_bits(tensor_cores(), 1024), 6);
  EXPECT_EQ(slice_bits(Fp64Products{}, 1000), 21);
  for (std::int64_t k : {1, 2, 3, 100, 1000, 1023, 1024, 1025, 65536}) {
    const int b = slice_bits(tensor_cores(), k);
    EXPECT_LT(static_cast<double>(k) * std::ldexp(1.0, 2 * b), 0x1p24) << k;
    if (b < 11) {
      EXPECT_GE(static_cast<double>(k) * std::ldexp(1.0, 2 * b + 2), 0x1p24) << k;  // widest
    }
  }
  // Binary64 slices: the rule of Ozaki et al. behind Algorithm 1 (and OzBLAS's getRho), rho =
  // ceil((53 + log2 k) / 2) and b = 53 - rho, the widest b with k 2^(2b) <= 2^53 (partial sums
  // up to 2^53 are exact in binary64): at k = 2^j with j odd one bit wider than a strict bound.
  EXPECT_EQ(slice_bits(Fp64Products{}, 32), 24);
  EXPECT_EQ(slice_bits(Fp64Products{}, 2), 26);
  for (std::int64_t k :
       {1, 2, 3, 8, 32, 64, 100, 128, 257, 512, 1000, 1024, 2048, 8192, 65536, 1 << 20}) {
    const int b = slice_bits(Fp64Products{}, k);
    const double kd = static_cast<double>(k);
    EXPECT_LE(kd * std::ldexp(1.0, 2 * b), 0x1p53) << k;
    EXPECT_GT(kd * std::ldexp(1.0, 2 * b + 2), 0x1p53) << k;  // the widest
    EXPECT_EQ(b, 53 - static_cast<int>(std::ceil((53.0 + std::log2(kd)) / 2.0))) << k;
  }
  // sm70 keeps 23 alignment bits: P = 24 as well; an fp16 accumulator is refused.
  EXPECT_EQ(exact_product_bits(tensor_cores("sm70")), 24);
  EXPECT_THROW(exact_product_bits(TensorCoreProducts{preset("sm90", formats::fp16, formats::fp16)}),
               std::invalid_argument);
}

// Algorithm 1 of Mukunoki et al. (ISC 2020) takes tau = ceil(log2 mu) for a vector whose
// largest magnitude is mu, and sigma = 0.75 * 2^(rho + tau): its first slice keeps every
// multiple of 2^(tau - b) up to 2^tau. Row 0 of A has mu = 1 = 2^0, so one slice (tunable,
// d = 1) holds 1 and 2^-b exactly and the product with a column of ones is 1 + 2^-b. Row 1 has
// mu = 1.5, tau = 1: 2^-b is half its unit, a tie rounded to the even 0, so the product is 1.5.
// (A unit taken from the leading exponent plus one, 2^(1 - b) for both rows, gives 1 for row
// 0.) On tensor cores (fp16 slices) and on binary64 slices, on both host backends.
TEST(SplitRule, AlgorithmOnesTauKeepsTheBitBelowAPowerOfTwoMaximum) {
  auto emulator = host::make_emulator_backend();
  auto cpu64 = host::make_cpu64_backend();
  const std::int64_t k = 2;
  struct Run {
    Backend* backend;
    Products products;
  };
  for (const Run& r : {Run{emulator.get(), tensor_cores()}, Run{emulator.get(), Fp64Products{}},
                       Run{cpu64.get(), Fp64Products{}}}) {
    const int b = slice_bits(r.products, k);
    const double below = std::ldexp(1.0, -b);
    const std::vector<double> a = {1.0, 1.5, below, below};  // 2 x 2, column-major
    const std::vector<double> ones = {1.0, 1.0};
    Report report;
    const std::vector<double> c =
        run(*r.backend, r.products, {.mode = Mode::tunable, .splits = 1, .fast = false}, 2, 1, k, a,
            ones, &report);
    EXPECT_EQ(report.slices_a, 1);
    EXPECT_EQ(c[0], 1.0 + below) << "b = " << b;
    EXPECT_EQ(c[1], 1.5) << "b = " << b;
  }
}

struct CrCase {
  double phi;
  std::int64_t m, n, k;
};

// Names the case in test output ("phi 4, 7 x 6 x 25").
void PrintTo(const CrCase& c, std::ostream* out) {
  *out << "phi " << c.phi << ", " << c.m << " x " << c.n << " x " << c.k;
}

class CorrectlyRounded : public ::testing::TestWithParam<CrCase> {};

TEST_P(CorrectlyRounded, EveryElementEqualsMpfrOnEmulatorAndCpu64) {
  const CrCase c = GetParam();
  const auto a = phi_matrix(c.m, c.k, c.phi, 11);
  const auto b = phi_matrix(c.k, c.n, c.phi, 12);
  const auto reference = correctly_rounded_product(c.m, c.n, c.k, a, b);
  auto emulator = host::make_emulator_backend();
  auto cpu64 = host::make_cpu64_backend();
  const Options cr{.mode = Mode::cr, .max_splits = 64, .workspace_bytes = 64 << 20};
  Report report;
  const auto on_emulator = run(*emulator, tensor_cores(), cr, c.m, c.n, c.k, a, b, &report);
  EXPECT_TRUE(same_product_bits(reference, on_emulator, c.m, c.n, c.k, a, b))
      << "phi " << c.phi << ", " << report.slices_a << " x " << report.slices_b << " slices";
  const auto on_cpu64 = run(*cpu64, Fp64Products{}, cr, c.m, c.n, c.k, a, b);
  EXPECT_TRUE(same_product_bits(reference, on_cpu64, c.m, c.n, c.k, a, b)) << "phi " << c.phi;
}

INSTANTIATE_TEST_SUITE_P(Phi, CorrectlyRounded,
                         ::testing::Values(CrCase{0.1, 9, 7, 33}, CrCase{1, 8, 9, 40},
                                           CrCase{4, 7, 6, 25}, CrCase{10, 5, 4, 16},
                                           CrCase{1, 3, 4, 1}));

// Rows and columns built to cancel, to spread over the whole exponent range and to be subnormal.
TEST(CorrectlyRoundedAdversarial, CancellationSpreadAndSubnormals) {
  const std::int64_t m = 6, n = 5, k = 12;
  std::vector<double> a(m * k), b(k * n);
  auto A = [&](std::int64_t i, std::int64_t p) -> double& { return a[p * m + i]; };
  auto B = [&](std::int64_t p, std::int64_t j) -> double& { return b[j * k + p]; };
  const auto noise = phi_matrix(m + n, k, 1.0, 5);
  for (std::int64_t p = 0; p < k; ++p) {
    for (std::int64_t i = 0; i < m; ++i) A(i, p) = noise[p * (m + n) + i];
    for (std::int64_t j = 0; j < n; ++j) B(p, j) = noise[p * (m + n) + m + j];
  }
  // Row 0: x, -x, tiny: the sum is the tiny term (catastrophic cancellation).
  A(0, 0) = 0x1.23456789abcdep+40;
  A(0, 1) = -0x1.23456789abcdep+40;
  for (std::int64_t j = 0; j < n; ++j) {
    B(0, j) = 1.0 + 0x1p-52 * static_cast<double>(j);  // row 0: x j 2^-52 survives
    B(1, j) = B(2, j) = 1.0;
  }
  // Row 1: exponents from 2^-600 to 2^+600.
  for (std::int64_t p = 0; p < k; ++p)
    A(1, p) = std::ldexp(1.0 + 0.1 * static_cast<double>(p), -600 + 100 * static_cast<int>(p));
  // Row 2: subnormals, with a column of B large enough to bring the products to normal range.
  for (std::int64_t p = 0; p < k; ++p)
    A(2, p) = std::ldexp(static_cast<double>(p + 1), -1074 + 3 * static_cast<int>(p));
  for (std::int64_t p = 0; p < k; ++p)
    B(p, 2) = std::ldexp(1.0 + 0x1p-30 * static_cast<double>(p), 1000);
  // Row 3: exact ties, (1 + j 2^-52) + 2^-54 + 2^-54, halfway between two binary64 numbers.
  for (std::int64_t p = 0; p < k; ++p) A(3, p) = 0.0;
  A(3, 0) = 1.0;
  A(3, 1) = 0x1p-54;
  A(3, 2) = 0x1p-54;
  // Row 4: zero.
  for (std::int64_t p = 0; p < k; ++p) A(4, p) = 0.0;
  const auto reference = correctly_rounded_product(m, n, k, a, b);
  auto emulator = host::make_emulator_backend();
  const Options cr{.mode = Mode::cr, .max_splits = 200, .workspace_bytes = 256 << 20};
  EXPECT_TRUE(same_product_bits(reference, run(*emulator, tensor_cores(), cr, m, n, k, a, b), m, n,
                                k, a, b));
  auto cpu64 = host::make_cpu64_backend();
  EXPECT_TRUE(
      same_product_bits(reference, run(*cpu64, Fp64Products{}, cr, m, n, k, a, b), m, n, k, a, b));
}

TEST(CorrectlyRounded, TooFewSlicesIsAnError) {
  const auto a = phi_matrix(3, 8, 4.0, 1), b = phi_matrix(8, 3, 4.0, 2);
  auto backend = host::make_emulator_backend();
  EXPECT_THROW(run(*backend, tensor_cores(), {.mode = Mode::cr, .max_splits = 2}, 3, 3, 8, a, b),
               std::runtime_error);
}

// DP promises FP64 accuracy: a max_splits its operands need more than is refused like CR's
// (it returned a 128% error without a word), with the levels needed in the message; SP still
// stops at max_splits.
TEST(DoublePrecision, TooFewSlicesIsAnErrorNamingTheLevelsNeeded) {
  const auto a = phi_matrix(3, 8, 4.0, 1), b = phi_matrix(8, 3, 4.0, 2);
  for (const bool fp64_products : {false, true}) {
    auto backend = fp64_products ? host::make_cpu64_backend() : host::make_emulator_backend();
    const Products products = fp64_products ? Products{Fp64Products{}} : tensor_cores();
    try {
      run(*backend, products, {.mode = Mode::dp, .max_splits = 1}, 3, 3, 8, a, b);
      ADD_FAILURE() << "DP with max_splits 1 returned a result";
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("DP mode needs more than 1 slices"), std::string::npos) << what;
      EXPECT_NE(what.find("max_splits = 1"), std::string::npos) << what;
      EXPECT_NE(what.find("are zero after "), std::string::npos) << what;
    }
  }
  // The same operands with the default max_splits, and SP with max_splits 1, still run.
  auto backend = host::make_emulator_backend();
  EXPECT_NO_THROW(run(*backend, tensor_cores(), {.mode = Mode::dp}, 3, 3, 8, a, b));
  const std::vector<float> a32(a.begin(), a.end()), b32(b.begin(), b.end());
  std::vector<float> c32(9);
  Handle sp(*backend, tensor_cores(), {.mode = Mode::sp, .max_splits = 1});
  EXPECT_NO_THROW(
      sp.sgemm('N', 'N', 3, 3, 8, 1.0f, a32.data(), 3, b32.data(), 8, 0.0f, c32.data(), 3));
}

TEST(Reproducibility, BitsDoNotDependOnPresetThreadsOrBlocking) {
  const std::int64_t m = 20, n = 18, k = 50;
  const auto a = phi_matrix(m, k, 2.0, 21), b = phi_matrix(k, n, 2.0, 22);
  for (const Options& options :
       {Options{.mode = Mode::dp}, Options{.mode = Mode::tunable, .splits = 3, .fast = false},
        // 81 products: more than the stack of held products (64), so the sum is passed over
        // mid-level with the default workspace and once per level with the small one.
        Options{.mode = Mode::tunable, .splits = 9, .fast = false},
        Options{.mode = Mode::cr, .max_splits = 16}}) {
    auto one_thread = host::make_emulator_backend(1);
    const auto expected = run(*one_thread, tensor_cores("sm90"), options, m, n, k, a, b);
    for (const char* arch : {"sm70", "sm80", "sm90", "sm100", "exact-rn", "exact-rz"}) {
      auto two_threads = host::make_emulator_backend(2);
      EXPECT_TRUE(same_product_bits(
          expected, run(*two_threads, tensor_cores(arch), options, m, n, k, a, b), m, n, k, a, b))
          << arch;
    }
    // A workspace that forces blocks in m and n.
    Options small = options;
    small.workspace_bytes = options.mode == Mode::cr ? 120 << 10 : 24 << 10;
    Report report;
    auto backend = host::make_emulator_backend();
    EXPECT_TRUE(same_product_bits(
        expected, run(*backend, tensor_cores(), small, m, n, k, a, b, &report), m, n, k, a, b));
    EXPECT_GT(report.blocks, 1);
    // The same call again.
    EXPECT_TRUE(same_product_bits(expected, run(*backend, tensor_cores(), options, m, n, k, a, b),
                                  m, n, k, a, b));
  }
}

// Options::progress: called after every slice product with a fraction that grows to 1 (blocks
// counting equally), on tensor-core and binary64 products, and the bits do not change.
TEST(Progress, ReportsEveryProductUpToOneAndLeavesTheBits) {
  const std::int64_t m = 12, n = 10, k = 30;
  const auto a = phi_matrix(m, k, 2.0, 61), b = phi_matrix(k, n, 2.0, 62);
  auto backend = host::make_emulator_backend();
  for (const Products& products : {tensor_cores(), Products(Fp64Products{})}) {
    for (const Options& given : {Options{.mode = Mode::dp}, Options{.mode = Mode::cr},
                                 Options{.mode = Mode::dp, .workspace_bytes = 24 << 10}}) {
      Options options = given;
      Report plain, watched;
      const auto expected = run(*backend, products, options, m, n, k, a, b, &plain);
      std::vector<double> fractions;
      options.progress = [&](double f) { fractions.push_back(f); };
      EXPECT_TRUE(same_product_bits(
          expected, run(*backend, products, options, m, n, k, a, b, &watched), m, n, k, a, b));
      EXPECT_EQ(static_cast<std::int64_t>(fractions.size()), plain.gemms);
      ASSERT_FALSE(fractions.empty());
      EXPECT_GT(fractions.front(), 0.0);
      EXPECT_TRUE(std::is_sorted(fractions.begin(), fractions.end()));
      EXPECT_DOUBLE_EQ(fractions.back(), 1.0);
      EXPECT_EQ(watched.gemms, plain.gemms);
    }
  }
}

TEST(DpMode, ManyLevelsGiveTheSameBitsWhicheverWayTheyAreCounted) {
  // Rows and columns spanning 2^-312 .. 1 need more levels than DP's first split of the whole
  // matrices keeps (24): the count comes from that split and the slices from a second one. A
  // small workspace counts by blocks instead; the bits must not change.
  const std::int64_t m = 6, n = 5, k = 40;
  auto a = phi_matrix(m, k, 1.0, 51), b = phi_matrix(k, n, 1.0, 52);
  for (std::int64_t p = 0; p < k; ++p) {
    for (std::int64_t i = 0; i < m; ++i)
      a[static_cast<std::size_t>(p * m + i)] *= std::ldexp(1.0, static_cast<int>(-8 * p));
    for (std::int64_t j = 0; j < n; ++j)
      b[static_cast<std::size_t>(j * k + p)] *= std::ldexp(1.0, static_cast<int>(-7 * p));
  }
  auto backend = host::make_emulator_backend();
  Report whole, blocked;
  const auto expected = run(*backend, tensor_cores(), {.mode = Mode::dp}, m, n, k, a, b, &whole);
  EXPECT_GT(std::max(whole.slices_a, whole.slices_b), 24);
  EXPECT_EQ(whole.blocks, 1);
  const auto small = run(*backend, tensor_cores(), {.mode = Mode::dp, .workspace_bytes = 28 << 10},
                         m, n, k, a, b, &blocked);
  EXPECT_GT(blocked.blocks, 1);
  EXPECT_EQ(blocked.slices_a, whole.slices_a);
  EXPECT_TRUE(same_product_bits(expected, small, m, n, k, a, b));
  const auto reference = correctly_rounded_product(m, n, k, a, b);
  EXPECT_LE(max_relative_error(expected, reference),
            4 * max_relative_error(plain_dgemm(m, n, k, a, b), reference));
}

TEST(DpMode, ErrorComparableToPlainDgemm) {
  const std::int64_t m = 24, n = 24, k = 200;
  for (double phi : {0.1, 1.0, 4.0, 10.0}) {
    const auto a = phi_matrix(m, k, phi, 31), b = phi_matrix(k, n, phi, 32);
    const auto reference = correctly_rounded_product(m, n, k, a, b);
    const double plain = max_relative_error(plain_dgemm(m, n, k, a, b), reference);
    auto backend = host::make_emulator_backend();
    Report report;
    const auto dp = run(*backend, tensor_cores(), {.mode = Mode::dp}, m, n, k, a, b, &report);
    const double error = max_relative_error(dp, reference);
    EXPECT_LE(error, 4 * plain) << "phi " << phi << ": DP " << error << ", plain " << plain;
    const int d = std::max(report.slices_a, report.slices_b);
    EXPECT_LE(report.gemms, d * (d + 1) / 2) << "fast mode";
    auto cpu64 = host::make_cpu64_backend();
    const double error64 = max_relative_error(
        run(*cpu64, Fp64Products{}, {.mode = Mode::dp}, m, n, k, a, b), reference);
    EXPECT_LE(error64, 4 * plain) << "phi " << phi << ": cpu64 DP " << error64;
  }
}

TEST(TunableMode, MoreSlicesAreMoreAccurateAndFullModeIsNoWorseThanFast) {
  const std::int64_t m = 10, n = 10, k = 64;
  const auto a = phi_matrix(m, k, 1.0, 41), b = phi_matrix(k, n, 1.0, 42);
  const auto reference = correctly_rounded_product(m, n, k, a, b);
  auto backend = host::make_emulator_backend();
  double previous = INFINITY;
  for (int d = 1; d <= 6; ++d) {
    Report fast_report, full_report;
    const double fast = max_relative_error(
        run(*backend, tensor_cores(), {.mode = Mode::tunable, .splits = d, .fast = true}, m, n, k,
            a, b, &fast_report),
        reference);
    const double full = max_relative_error(
        run(*backend, tensor_cores(), {.mode = Mode::tunable, .splits = d, .fast = false}, m, n, k,
            a, b, &full_report),
        reference);
    EXPECT_LT(fast, previous) << "d = " << d;
    EXPECT_LE(full, fast * 1.01) << "d = " << d;
    EXPECT_EQ(fast_report.gemms, d * (d + 1) / 2);
    EXPECT_EQ(full_report.gemms, d * d);
    previous = fast;
  }
}

TEST(SpMode, SgemmTcIsAsAccurateAsFp32) {
  const std::int64_t m = 16, n = 12, k = 100;
  const auto a64 = phi_matrix(m, k, 1.0, 51), b64 = phi_matrix(k, n, 1.0, 52);
  std::vector<float> a(a64.begin(), a64.end()), b(b64.begin(), b64.end());
  const std::vector<double> aw(a.begin(), a.end()), bw(b.begin(), b.end());
  const auto reference = correctly_rounded_product(m, n, k, aw, bw);
  std::vector<double> plain32(static_cast<std::size_t>(m * n));
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = 0; i < m; ++i) {
      float s = 0.0f;
      for (std::int64_t p = 0; p < k; ++p) s = s + a[p * m + i] * b[j * k + p];
      plain32[j * m + i] = s;
    }
  }
  auto backend = host::make_emulator_backend();
  Handle h(*backend, tensor_cores(), {.mode = Mode::sp});
  std::vector<float> c(static_cast<std::size_t>(m * n));
  h.sgemm('N', 'N', m, n, k, 1.0f, a.data(), m, b.data(), k, 0.0f, c.data(), m);
  const double error = max_relative_error(std::vector<double>(c.begin(), c.end()), reference);
  EXPECT_LE(error, 4 * max_relative_error(plain32, reference));
  // SGEMM-TC splits the same values into the same slices as DGEMM-TC on the widened operands
  // and sums them the same way: its result is DP mode's, rounded to fp32.
  Handle dp(*backend, tensor_cores(), {.mode = Mode::dp});
  std::vector<double> c64(static_cast<std::size_t>(m * n));
  dp.dgemm('N', 'N', m, n, k, 1.0, aw.data(), m, bw.data(), k, 0.0, c64.data(), m);
  const std::vector<float> c64_rounded(c64.begin(), c64.end());
  EXPECT_TRUE(test::same_bits(c64_rounded, c, m, n,
                              {.inputs = test::gemm_inputs(m, k, a.data(), b.data())}));
  EXPECT_EQ(h.report().slices_a, dp.report().slices_a);
  EXPECT_THROW(h.dgemm('N', 'N', 1, 1, 1, 1.0, aw.data(), 1, bw.data(), 1, 0.0, nullptr, 1),
               std::invalid_argument);
}

}  // namespace
}  // namespace tcemu::ozaki
