// The Ozaki scheme on integer tensor cores (IntegerProducts: int8 slices, Backend::integer_gemm):
// the slice rule, CR mode against MPFR, DP mode against plain DGEMM, tunable and SP modes,
// reproducibility across threads and blocking, and the integer GEMM step itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

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

const Products kInt8 = IntegerProducts{};

std::vector<double> run(Backend& backend, Options options, std::int64_t m, std::int64_t n,
                        std::int64_t k, const std::vector<double>& a, const std::vector<double>& b,
                        Report* report = nullptr) {
  Handle h(backend, kInt8, options);
  std::vector<double> c(static_cast<std::size_t>(m * n), std::numeric_limits<double>::quiet_NaN());
  h.dgemm('N', 'N', m, n, k, 1.0, a.data(), m, b.data(), k, 0.0, c.data(), m);
  if (report) *report = h.report();
  return c;
}

TEST(IntegerSplitRule, SixBitSlicesWhileInt32HoldsEverySum) {
  EXPECT_EQ(exact_product_bits(kInt8), 31);
  // int8 holds |q| <= 2^6; k 2^(2b) < 2^31 narrows the slices only for k >= 2^19, beyond the
  // integer GEMM's k limit, so every accepted k has 6-bit slices.
  for (std::int64_t k : {std::int64_t{1}, std::int64_t{1000}, std::int64_t{8192},
                         std::int64_t{65536}, kIntegerGemmMaxK}) {
    EXPECT_EQ(slice_bits(kInt8, k), 6) << k;
    EXPECT_LT(static_cast<double>(k) * 0x1p12, 0x1p31) << k;
  }
}

TEST(IntegerGemmStep, ExactSumsAtTheInt8ExtremesAndRefusals) {
  auto backend = host::make_emulator_backend();
  // A row of -128 and 127 against a column of -128 and -128: k = 3 terms, sum known in closed
  // form; and k = kIntegerGemmMaxK products of (-128)(-128) would be 2^31 - 2^14 < 2^31.
  const std::int64_t m = 2, n = 2, k = 3;
  const std::vector<std::int8_t> a{-128, 127, -128, 1, 2, 3};    // row major, 2 x 3
  const std::vector<std::int8_t> b{-128, -128, -128, 5, -6, 7};  // column major, 3 x 2
  Buffer buf = backend->allocate(64 + m * n * 8);
  backend->copy_in(a.data(), buf, 6, 0);
  backend->copy_in(b.data(), buf, 6, 16);
  const IntegerMatrix am{&buf, 0, Integer::s8, m, k, k, Layout::row_major};
  const IntegerMatrix bm{&buf, 16, Integer::s8, k, n, k, Layout::column_major};
  const RealMatrix cm{&buf, 64, Real::fp64, m, n, m, Layout::column_major};
  backend->integer_gemm(am, bm, cm);
  std::vector<double> c(4);
  backend->copy_out(buf, c.data(), 32, 64);
  EXPECT_EQ(c[0], 128.0 * 128 - 127.0 * 128 + 128.0 * 128);
  EXPECT_EQ(c[1], -128.0 - 256 - 384);
  EXPECT_EQ(c[2], -128.0 * 5 - 127.0 * 6 - 128.0 * 7);
  EXPECT_EQ(c[3], 5.0 - 12 + 21);
  // Layouts and formats the step does not take.
  IntegerMatrix wrong = am;
  wrong.layout = Layout::column_major;
  wrong.ld = m;
  EXPECT_THROW(backend->integer_gemm(wrong, bm, cm), std::invalid_argument);
  IntegerMatrix s32 = bm;
  s32.format = Integer::s32;
  EXPECT_THROW(backend->integer_gemm(am, s32, cm), std::invalid_argument);
}

struct CrCase {
  double phi;
  std::int64_t m, n, k;
};

class IntegerCorrectlyRounded : public ::testing::TestWithParam<CrCase> {};

TEST_P(IntegerCorrectlyRounded, EveryElementEqualsMpfr) {
  const CrCase c = GetParam();
  const auto a = phi_matrix(c.m, c.k, c.phi, 11);
  const auto b = phi_matrix(c.k, c.n, c.phi, 12);
  auto backend = host::make_emulator_backend();
  Report report;
  const auto got = run(*backend, {.mode = Mode::cr, .max_splits = 200, .workspace_bytes = 64 << 20},
                       c.m, c.n, c.k, a, b, &report);
  EXPECT_EQ(report.slice_bits, 6);
  EXPECT_TRUE(
      same_product_bits(correctly_rounded_product(c.m, c.n, c.k, a, b), got, c.m, c.n, c.k, a, b))
      << "phi " << c.phi << ", " << report.slices_a << " x " << report.slices_b << " slices";
}

INSTANTIATE_TEST_SUITE_P(Phi, IntegerCorrectlyRounded,
                         ::testing::Values(CrCase{0.1, 9, 7, 33}, CrCase{1, 8, 9, 40},
                                           CrCase{4, 7, 6, 25}, CrCase{10, 5, 4, 16},
                                           CrCase{1, 3, 4, 1}));

TEST(IntegerDpMode, ErrorComparableToPlainDgemmInFastMode) {
  const std::int64_t m = 24, n = 24, k = 200;
  for (double phi : {0.1, 1.0, 4.0, 10.0}) {
    const auto a = phi_matrix(m, k, phi, 31), b = phi_matrix(k, n, phi, 32);
    const auto reference = correctly_rounded_product(m, n, k, a, b);
    const double plain = max_relative_error(plain_dgemm(m, n, k, a, b), reference);
    auto backend = host::make_emulator_backend();
    Report report;
    const double error =
        max_relative_error(run(*backend, {.mode = Mode::dp}, m, n, k, a, b, &report), reference);
    EXPECT_LE(error, 4 * plain) << "phi " << phi << ": DP " << error << ", plain " << plain;
    const int d = std::max(report.slices_a, report.slices_b);
    EXPECT_GE(d, 9) << "53 bits in 6-bit slices need at least 9 levels";
    EXPECT_LE(report.gemms, d * (d + 1) / 2) << "fast mode";
  }
}

TEST(IntegerTunableMode, MoreSlicesAreMoreAccurate) {
  const std::int64_t m = 10, n = 10, k = 64;
  const auto a = phi_matrix(m, k, 1.0, 41), b = phi_matrix(k, n, 1.0, 42);
  const auto reference = correctly_rounded_product(m, n, k, a, b);
  auto backend = host::make_emulator_backend();
  double previous = INFINITY;
  for (int d = 1; d <= 8; ++d) {
    Report report;
    const double error = max_relative_error(
        run(*backend, {.mode = Mode::tunable, .splits = d}, m, n, k, a, b, &report), reference);
    EXPECT_LT(error, previous) << "d = " << d;
    EXPECT_EQ(report.gemms, d * (d + 1) / 2);
    previous = error;
  }
}

// Also: Report::one_block_workspace, given as the workspace, runs the call in one block.
TEST(IntegerReproducibility, BitsDoNotDependOnThreadsOrBlocking) {
  const std::int64_t m = 20, n = 18, k = 50;
  const auto a = phi_matrix(m, k, 2.0, 21), b = phi_matrix(k, n, 2.0, 22);
  for (const Options& options :
       {Options{.mode = Mode::dp}, Options{.mode = Mode::tunable, .splits = 4, .fast = false},
        Options{.mode = Mode::cr, .max_splits = 24}}) {
    auto one_thread = host::make_emulator_backend(1);
    const auto expected = run(*one_thread, options, m, n, k, a, b);
    auto three_threads = host::make_emulator_backend(3);
    EXPECT_TRUE(
        same_product_bits(expected, run(*three_threads, options, m, n, k, a, b), m, n, k, a, b));
    Options small = options;
    small.workspace_bytes = options.mode == Mode::cr ? 200 << 10 : 24 << 10;
    Report report;
    EXPECT_TRUE(same_product_bits(expected, run(*one_thread, small, m, n, k, a, b, &report), m, n,
                                  k, a, b));
    EXPECT_GT(report.blocks, 1);
    // The workspace the report names for one block runs the call in one block.
    EXPECT_GT(report.one_block_workspace, small.workspace_bytes);
    Options one_block = options;
    one_block.workspace_bytes = report.one_block_workspace;
    EXPECT_TRUE(same_product_bits(expected, run(*one_thread, one_block, m, n, k, a, b, &report), m,
                                  n, k, a, b));
    EXPECT_EQ(report.blocks, 1);
  }
}

TEST(IntegerSpecialValues, InfAndNanAsDgemm) {
  const std::int64_t m = 3, n = 3, k = 4;
  auto a = phi_matrix(m, k, 1.0, 71), b = phi_matrix(k, n, 1.0, 72);
  a[0] = INFINITY;                               // row 0 of A
  b[static_cast<std::size_t>(1 * k + 2)] = NAN;  // column 1 of B
  auto backend = host::make_emulator_backend();
  for (const Mode mode : {Mode::dp, Mode::cr}) {
    const auto c = run(*backend, {.mode = mode}, m, n, k, a, b);
    const auto plain = plain_dgemm(m, n, k, a, b);
    for (std::int64_t j = 0; j < n; ++j) {
      for (std::int64_t i = 0; i < m; ++i) {
        const double x = c[static_cast<std::size_t>(j * m + i)],
                     r = plain[static_cast<std::size_t>(j * m + i)];
        if (i == 0 || j == 1) {
          EXPECT_EQ(std::isnan(x), std::isnan(r)) << i << ", " << j;
          if (!std::isnan(r)) {
            EXPECT_EQ(x, r) << i << ", " << j;
          }
        } else {
          EXPECT_TRUE(std::isfinite(x)) << i << ", " << j;
        }
      }
    }
    EXPECT_TRUE(std::isinf(c[2 * m + 0]));  // row 0 x a finite column: Inf
  }
}

TEST(IntegerSpMode, SgemmIsDpModeRoundedToFp32) {
  const std::int64_t m = 16, n = 12, k = 100;
  const auto a64 = phi_matrix(m, k, 1.0, 51), b64 = phi_matrix(k, n, 1.0, 52);
  std::vector<float> a(a64.begin(), a64.end()), b(b64.begin(), b64.end());
  const std::vector<double> aw(a.begin(), a.end()), bw(b.begin(), b.end());
  auto backend = host::make_emulator_backend();
  Handle sp(*backend, kInt8, {.mode = Mode::sp});
  std::vector<float> c(static_cast<std::size_t>(m * n));
  sp.sgemm('N', 'N', m, n, k, 1.0f, a.data(), m, b.data(), k, 0.0f, c.data(), m);
  const auto dp = run(*backend, {.mode = Mode::dp}, m, n, k, aw, bw);
  const std::vector<float> dp_rounded(dp.begin(), dp.end());
  EXPECT_TRUE(test::same_bits(dp_rounded, c, m, n,
                              {.inputs = test::gemm_inputs(m, k, a.data(), b.data())}));
}

}  // namespace
}  // namespace tcemu::ozaki
