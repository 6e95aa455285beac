// The Ozaki steps of the Backend interface on the host backend, against their definitions in
// backend.hpp: split levels reassemble their input exactly, exact_sum is the correctly rounded
// sum (MPFR), fp64_gemm is exact on integer slices.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <tcemu/backend/backend.hpp>
#include <tcemu/emulator/convert.hpp>
#include <tcemu/host/host_backends.hpp>
#include <tcemu/reference/mpfr_number.hpp>
#include <tcemu/test/same_bits.hpp>

namespace tcemu {
namespace {

using reference::MpfrNumber;
using reference::Precision;

struct Matrix {
  Buffer buffer;
  RealMatrix view;
};

Matrix upload(Backend& backend, const std::vector<double>& x, std::int64_t rows, std::int64_t cols,
              Layout layout) {
  Buffer buffer = backend.allocate(x.size() * 8);
  backend.copy_in(x.data(), buffer, x.size() * 8);
  const std::int64_t ld = layout == Layout::row_major ? cols : rows;
  Matrix m{std::move(buffer), {}};
  m.view = {&m.buffer, 0, Real::fp64, rows, cols, ld, layout};
  return m;
}

std::vector<double> download(Backend& backend, const Buffer& buffer) {
  std::vector<double> x(buffer.bytes() / 8);
  backend.copy_out(buffer, x.data(), buffer.bytes());
  return x;
}

// Splits the rows of x level by level into binary64 slices and checks, after every level, that
// sum_s slice_s * 2^e_s + remainder == x exactly (MPFR), that every slice element is an integer
// of magnitude <= 2^bits and that the remainder's leading exponent drops by at least `bits`.
void check_split_reassembles(const std::vector<double>& x, std::int64_t rows, std::int64_t cols,
                             int bits, int levels) {
  auto backend = host::make_emulator_backend();
  Matrix rem = upload(*backend, x, rows, cols, Layout::row_major);
  Matrix slice = upload(*backend, std::vector<double>(x.size()), rows, cols, Layout::row_major);
  Buffer exps = backend->allocate(static_cast<std::size_t>(rows) * 4);
  std::vector<MpfrNumber> sums;
  for (std::int64_t i = 0; i < rows * cols; ++i) sums.emplace_back(Precision{4400});
  std::vector<double> previous_max(static_cast<std::size_t>(rows), INFINITY);
  for (int level = 0; level < levels; ++level) {
    backend->split_level(rem.view, SplitAxis::rows, bits, slice.view, {&exps, 0, rows});
    const std::vector<double> s = download(*backend, slice.buffer);
    const std::vector<double> r = download(*backend, rem.buffer);
    std::vector<std::int32_t> e(static_cast<std::size_t>(rows));
    backend->copy_out(exps, e.data(), e.size() * 4);
    for (std::int64_t i = 0; i < rows; ++i) {
      double row_max = 0.0;
      for (std::int64_t j = 0; j < cols; ++j) {
        const double q = s[i * cols + j];
        ASSERT_EQ(q, std::trunc(q));
        ASSERT_LE(std::fabs(q), std::ldexp(1.0, bits));
        MpfrNumber term(q, Precision{64});
        term.scale_by_power_of_two(e[i]);
        MpfrNumber& acc = sums[i * cols + j];
        acc.add(acc, term, MPFR_RNDN);
        MpfrNumber total(Precision{4400});
        total.add(acc, MpfrNumber(r[i * cols + j]), MPFR_RNDN);
        ASSERT_EQ(total.compare(MpfrNumber(x[i * cols + j])), 0)
            << "row " << i << " col " << j << " level " << level;
        row_max = std::fmax(row_max, std::fabs(r[i * cols + j]));
      }
      if (row_max > 0.0 && previous_max[i] > 0.0 && std::isfinite(previous_max[i])) {
        EXPECT_LE(std::ilogb(row_max), std::ilogb(previous_max[i]) - bits);
      }
      previous_max[i] = row_max;
    }
  }
}

TEST(SplitLevel, ReassemblesRandomRowsExactly) {
  std::mt19937_64 rng(1);
  std::normal_distribution<double> normal;
  std::vector<double> x(6 * 9);
  for (double& v : x) v = normal(rng) * std::exp(5.0 * normal(rng));
  check_split_reassembles(x, 6, 9, 7, 12);
  check_split_reassembles(x, 6, 9, 21, 4);
}

TEST(SplitLevel, HandlesTheEdgesOfTheBinary64Range) {
  const double max = std::numeric_limits<double>::max();
  const double tiny = std::numeric_limits<double>::denorm_min();
  const std::vector<double> x = {max,  -max / 3, 1.0,   tiny,       // sigma would overflow
                                 tiny, 3 * tiny, -tiny, 0x1p-1060,  // subnormal, sigma too small
                                 0.0,  -0.0,     0.0,   0.0,        // a zero row
                                 1.5,  -1.5,     2.5,   0x1.fffffffffffffp-1};  // ties
  check_split_reassembles(x, 4, 4, 7, 160);
  check_split_reassembles(x, 4, 4, 1, 60);
}

TEST(SplitLevel, RoundsTiesToTheEvenMultipleAndSkipsNonFiniteElements) {
  auto backend = host::make_emulator_backend();
  // Row max 1.75: E = 0, bits 2: u = 2^-1; 0.25 and 0.75 are ties (to 0 and 1), 1.75 -> 2.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> x = {1.75, 0.25, 0.75, -0.75, INFINITY, nan};
  Matrix rem = upload(*backend, x, 1, 6, Layout::row_major);
  Buffer slice_buffer = backend->allocate(6 * 2);
  const BufferMatrix slice{&slice_buffer, 0, formats::fp16, 1, 6, 6, Layout::row_major};
  Buffer exps = backend->allocate(4);
  backend->split_level(rem.view, SplitAxis::rows, 2, slice, {&exps, 0, 1});
  std::vector<std::uint16_t> s(6);
  backend->copy_out(slice_buffer, s.data(), 12);
  std::int32_t e = 0;
  backend->copy_out(exps, &e, 4);
  EXPECT_EQ(e, -1);
  // fp16 bits of 4, 0, 2, -2, +0, +0 (slice / u).
  EXPECT_EQ(s, (std::vector<std::uint16_t>{0x4400, 0x0000, 0x4000, 0xC000, 0x0000, 0x0000}));
  const std::vector<double> r = download(*backend, rem.buffer);
  EXPECT_EQ(r[0], -0.25);
  EXPECT_EQ(r[1], 0.25);
  EXPECT_EQ(r[2], -0.25);
  EXPECT_EQ(r[3], 0.25);
  EXPECT_EQ(r[4], INFINITY);
  EXPECT_TRUE(std::isnan(r[5]));
  EXPECT_FALSE(backend->all_zero(rem.view));
  // A slice format too narrow for the integers is refused.
  const BufferMatrix e4m3_slice{&slice_buffer, 0, formats::e4m3, 1, 6, 6, Layout::row_major};
  EXPECT_THROW(backend->split_level(rem.view, SplitAxis::rows, 5, e4m3_slice, {&exps, 0, 1}),
               std::invalid_argument);
}

// Algorithm 1's tau = ceil(log2 mu): a row whose largest magnitude is exactly 2^E gets the unit
// 2^(E - bits), so its first slice holds 2^E as 2^bits units (a normal and a subnormal row).
TEST(SplitLevel, ARowWhoseLargestMagnitudeIsAPowerOfTwoGetsTheUnitBelowIt) {
  auto backend = host::make_emulator_backend();
  // Row 0: max 1 = 2^0, bits 2: u = 2^-2; 0.125 is a tie (to 0). Row 1: max 2^-1072, u = 2^-1074.
  const std::vector<double> x = {1.0, 0.25, 0.125, 0x1p-1072, 0x1p-1074, -0x3p-1074};
  Matrix rem = upload(*backend, x, 2, 3, Layout::row_major);
  Matrix slice = upload(*backend, std::vector<double>(6), 2, 3, Layout::row_major);
  Buffer exps = backend->allocate(8);
  backend->split_level(rem.view, SplitAxis::rows, 2, slice.view, {&exps, 0, 2});
  std::vector<std::int32_t> e(2);
  backend->copy_out(exps, e.data(), 8);
  EXPECT_EQ(e, (std::vector<std::int32_t>{-2, -1074}));
  EXPECT_EQ(download(*backend, slice.buffer), (std::vector<double>{4, 1, 0, 4, 1, -3}));
  EXPECT_EQ(download(*backend, rem.buffer), (std::vector<double>{0, 0, 0.125, 0, 0, 0}));
}

// The correctly rounded sum of the stack's terms, by MPFR.
double mpfr_sum(const std::vector<double>& terms) {
  MpfrNumber s(Precision{4400});
  for (double t : terms) s.add(s, MpfrNumber(t), MPFR_RNDN);
  return s.to_double(MPFR_RNDN);
}

TEST(ExactSum, IsTheCorrectlyRoundedSum) {
  auto backend = host::make_emulator_backend(2);
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> scale(-1100, 1000);
  const std::int64_t rows = 40, cols = 5, count = 9;
  std::vector<double> stack(static_cast<std::size_t>(rows * cols * count));
  for (std::int64_t e = 0; e < rows * cols; ++e) {
    const int kind = static_cast<int>(e % 5);
    for (std::int64_t l = 0; l < count; ++l) {
      double& t = stack[l * rows * cols + e];
      switch (kind) {
        case 0:  // wide exponent spread
          t = std::ldexp(normal(rng), scale(rng));
          break;
        case 1:  // cancellation down to a tie: x, -x, then 1 + 2^-53 from two terms
          t = l == 0 ? 1.0 : l == 1 ? 0x1p-53 : l == 8 ? 0.0 : (l % 2 == 0 ? 1e300 : -1e300);
          break;
        case 2:  // subnormal results
          t = std::ldexp(normal(rng), -1070);
          break;
        case 3:  // overflow after rounding
          t = l < 2 ? std::numeric_limits<double>::max() : 0.0;
          break;
        default:  // ordinary
          t = normal(rng);
          break;
      }
    }
  }
  Matrix s = upload(*backend, stack, rows, cols * count, Layout::column_major);
  RealMatrix first = s.view;
  first.cols = cols;
  Buffer out_buffer = backend->allocate(static_cast<std::size_t>(rows * cols) * 8);
  const RealMatrix out{&out_buffer, 0, Real::fp64, rows, cols, rows, Layout::column_major};
  std::vector<std::int32_t> zeros(static_cast<std::size_t>(rows + cols), 0);
  Buffer zb = backend->allocate(zeros.size() * 4);
  backend->copy_in(zeros.data(), zb, zeros.size() * 4);
  const OuterExponents unscaled{{&zb, 0, rows}, {&zb, static_cast<std::size_t>(rows) * 4, cols}};
  backend->exact_sum({first, count, static_cast<std::size_t>(rows * cols) * 8}, unscaled, out);
  const std::vector<double> got = download(*backend, out_buffer);
  const auto terms_of = [&](std::int64_t i, std::int64_t j) {
    std::vector<double> terms;
    for (std::int64_t l = 0; l < count; ++l) terms.push_back(stack[l * rows * cols + j * rows + i]);
    return terms;
  };
  EXPECT_TRUE(test::same_bits_at(
      rows, cols, [&](std::int64_t i, std::int64_t j) { return mpfr_sum(terms_of(i, j)); },
      [&](std::int64_t i, std::int64_t j) { return got[j * rows + i]; },
      {.inputs = [&](std::int64_t i, std::int64_t j) {
        const std::vector<double> terms = terms_of(i, j);
        return "terms " +
               test::hex_values(
                   count, [&](std::int64_t l) { return std::bit_cast<std::uint64_t>(terms[l]); },
                   16, count);
      }}));
}

TEST(ExactSum, SpecialTermsAndSignedZeros) {
  auto backend = host::make_emulator_backend();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Stacks of two terms per element: (-0,-0) (+0,-0) (Inf,1) (Inf,-Inf) (NaN,1) (1,-1).
  const std::vector<double> first = {-0.0, 0.0, INFINITY, INFINITY, nan, 1.0};
  const std::vector<double> second = {-0.0, -0.0, 1.0, -INFINITY, 1.0, -1.0};
  std::vector<double> both = first;
  both.insert(both.end(), second.begin(), second.end());
  Matrix s = upload(*backend, both, 1, 12, Layout::row_major);
  RealMatrix layer = s.view;
  layer.cols = 6;
  const std::vector<std::int32_t> zeros(7, 0);
  Buffer zb = backend->allocate(28);
  backend->copy_in(zeros.data(), zb, 28);
  backend->exact_sum({layer, 2, 48}, {{&zb, 0, 1}, {&zb, 4, 6}}, layer);
  const std::vector<double> got = download(*backend, s.buffer);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(got[0]), std::bit_cast<std::uint64_t>(-0.0));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(got[1]), 0u);
  EXPECT_EQ(got[2], INFINITY);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(got[3]), 0x7FF8000000000000u);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(got[4]), 0x7FF8000000000000u);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(got[5]), 0u);
}

TEST(Fp64Gemm, IsExactOnIntegerSlicesAndCloseOtherwise) {
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<std::int64_t> integer(-(1 << 20), 1 << 20);
  std::normal_distribution<double> normal;
  for (const auto [m, n, k] : {std::array<std::int64_t, 3>{1, 1, 1}, {5, 7, 3}, {67, 70, 300}}) {
    std::vector<double> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n));
    for (double& v : a) v = static_cast<double>(integer(rng));
    for (double& v : b) v = static_cast<double>(integer(rng));
    for (int threads : {1, 2}) {
      auto backend = host::make_cpu64_backend(threads);
      Matrix am = upload(*backend, a, m, k, Layout::row_major);
      Matrix bm = upload(*backend, b, k, n, Layout::column_major);
      Matrix cm = upload(*backend, std::vector<double>(static_cast<std::size_t>(m * n)), m, n,
                         Layout::column_major);
      backend->fp64_gemm(am.view, bm.view, cm.view);
      const std::vector<double> c = download(*backend, cm.buffer);
      for (std::int64_t i = 0; i < m; ++i) {
        for (std::int64_t j = 0; j < n; ++j) {
          std::int64_t exact = 0;  // |sum| < 300 * 2^40: exact in int64 and in binary64
          for (std::int64_t p = 0; p < k; ++p) {
            exact +=
                static_cast<std::int64_t>(a[i * k + p]) * static_cast<std::int64_t>(b[j * k + p]);
          }
          ASSERT_EQ(c[j * m + i], static_cast<double>(exact)) << i << ", " << j;
        }
      }
    }
  }
}

TEST(AccumulateScaled, ScalesRelativeToTheBaseThenAdds) {
  auto backend = host::make_emulator_backend();
  const std::vector<float> p = {1.0f, 3.0f, -5.0f, 7.0f};  // 2 x 2 column-major
  Buffer pb = backend->allocate(16);
  backend->copy_in(p.data(), pb, 16);
  const RealMatrix pm{&pb, 0, Real::fp32, 2, 2, 2, Layout::column_major};
  // Scale rows {-1, 2}, columns {0, -1080}; base rows {0, 0}, columns {0, -1000}.
  const std::vector<std::int32_t> exponents = {-1, 2, 0, -1080, 0, 0, 0, -1000};
  Buffer eb = backend->allocate(32);
  backend->copy_in(exponents.data(), eb, 32);
  const OuterExponents scale{{&eb, 0, 2}, {&eb, 8, 2}}, base{{&eb, 16, 2}, {&eb, 24, 2}};
  Matrix acc = upload(*backend, {10.0, 20.0, 30.0, 40.0}, 2, 2, Layout::column_major);
  backend->accumulate_scaled(pm, scale, base, acc.view, false);
  const std::vector<double> got = download(*backend, acc.buffer);
  EXPECT_EQ(got[0], 10.0 + 0.5);
  EXPECT_EQ(got[1], 20.0 + 12.0);
  EXPECT_EQ(got[2], 30.0 + std::ldexp(-5.0, -81));
  EXPECT_EQ(got[3], 40.0 + std::ldexp(7.0, -78));
  backend->accumulate_scaled(pm, scale, base, acc.view, true);
  EXPECT_EQ(download(*backend, acc.buffer)[1], 12.0);
  // exact_sum applies a scale before its one rounding: 3 * 2^-1076 is 0x1p-1074 * 0.75,
  // which rounds to 2^-1074 (nearest), and 1 * 2^2000 overflows to Inf.
  Matrix stack = upload(*backend, {3.0, 1.0, 0.0, 0.0}, 1, 4, Layout::row_major);
  RealMatrix first = stack.view;
  first.cols = 2;
  const std::vector<std::int32_t> e2 = {-1000, -76, 3000};
  Buffer sb = backend->allocate(12);
  backend->copy_in(e2.data(), sb, 12);
  Buffer out = backend->allocate(16);
  const RealMatrix out_m{&out, 0, Real::fp64, 1, 2, 2, Layout::row_major};
  backend->exact_sum({first, 2, 16}, {{&sb, 0, 1}, {&sb, 4, 2}}, out_m);
  const std::vector<double> sums = download(*backend, out);
  EXPECT_EQ(sums[0], std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(sums[1], INFINITY);
}

// Backend::split is split_level repeated, with all_zero's verdict: the same remainders, slices
// and exponents at every level, and the count of levels after which the remainder is zero; on
// one thread and on two.
TEST(Split, IsSplitLevelRepeatedUntilTheRemainderIsZero) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal;
  const std::int64_t rows = 9, cols = 40;
  std::vector<double> x(static_cast<std::size_t>(rows * cols));
  for (double& v : x) v = normal(rng) * std::exp(6.0 * normal(rng));
  for (std::int64_t j = 0; j < cols; ++j) {
    x[static_cast<std::size_t>(j)] = 0.0;                             // a zero row
    x[static_cast<std::size_t>(cols + j)] = j % 2 ? INFINITY : -0.0;  // Inf and zeros only
    x[static_cast<std::size_t>(2 * cols + j)] = std::ldexp(1.0, static_cast<int>(j % 5));
  }
  for (const int bits : {3, 11}) {
    for (const int levels : {1, 4, 40}) {
      for (const int stored : {0, std::min(levels, 4)}) {
        for (const int threads : {1, 2}) {
          auto backend = host::make_emulator_backend(threads);
          Matrix fused = upload(*backend, x, rows, cols, Layout::row_major);
          Matrix looped = upload(*backend, x, rows, cols, Layout::row_major);
          const std::size_t slice_bytes = x.size() * 2;
          Buffer fused_slices = backend->allocate(slice_bytes * 4),
                 looped_slices = backend->allocate(slice_bytes * 4);
          Buffer fused_exps = backend->allocate(rows * 4 * 4),
                 looped_exps = backend->allocate(rows * 4 * 4);
          std::vector<SliceMatrix> slices;
          std::vector<ExponentVector> exps;
          for (int l = 0; l < stored; ++l) {
            slices.emplace_back(BufferMatrix{&fused_slices, slice_bytes * l, formats::fp16, rows,
                                             cols, cols, Layout::row_major});
            exps.push_back({&fused_exps, static_cast<std::size_t>(rows * 4 * l), rows});
          }
          const int zero_after =
              backend->split(fused.view, SplitAxis::rows, bits, levels, slices, exps);
          int expected = levels + 1;
          for (int l = 0; l < levels; ++l) {
            const std::size_t at = slice_bytes * static_cast<std::size_t>(std::min(l, 3));
            backend->split_level(
                looped.view, SplitAxis::rows, bits,
                BufferMatrix{&looped_slices, at, formats::fp16, rows, cols, cols,
                             Layout::row_major},
                {&looped_exps, static_cast<std::size_t>(rows * 4 * std::min(l, 3)), rows});
            if (expected > levels && backend->all_zero(looped.view)) expected = l + 1;
            if (l < stored) {
              std::vector<unsigned char> a(slice_bytes), b(slice_bytes);
              backend->copy_out(fused_slices, a.data(), slice_bytes, at);
              backend->copy_out(looped_slices, b.data(), slice_bytes, at);
              // Each as fp16 bits (rows x cols, row major), the looped split's expected.
              std::vector<std::uint16_t> sa(x.size()), sb(x.size());
              std::memcpy(sa.data(), a.data(), slice_bytes);
              std::memcpy(sb.data(), b.data(), slice_bytes);
              ASSERT_TRUE(test::same_bits(sb, sa, rows, cols, {.order = test::Order::row_major}))
                  << "slice of level " << l + 1;
              std::vector<std::int32_t> ea(rows), eb(rows);
              backend->copy_out(fused_exps, ea.data(), rows * 4, rows * 4 * l);
              backend->copy_out(looped_exps, eb.data(), rows * 4, rows * 4 * l);
              ASSERT_TRUE(test::same_bits(eb, ea, rows, 1)) << "exponents of level " << l + 1;
            }
          }
          EXPECT_EQ(zero_after, expected) << "bits " << bits << ", levels " << levels;
          const auto fr = download(*backend, fused.buffer), lr = download(*backend, looped.buffer);
          ASSERT_TRUE(test::same_bits(lr, fr, rows, cols, {.order = test::Order::row_major}))
              << "remainder, bits " << bits << ", levels " << levels;
        }
      }
    }
  }
}

// A stack of products accumulated in one call gives the bits of one call per product.
TEST(AccumulateScaled, AStackIsTheProductsOneAfterAnother) {
  auto backend = host::make_emulator_backend();
  std::mt19937_64 rng(12);
  std::normal_distribution<double> normal;
  const std::int64_t m = 7, n = 5, count = 6;
  std::vector<double> products(static_cast<std::size_t>(m * n * count));
  for (double& v : products) v = std::ldexp(normal(rng), static_cast<int>(rng() % 200) - 100);
  std::vector<std::int32_t> e(static_cast<std::size_t>((count + 1) * (m + n)));
  for (auto& v : e) v = static_cast<std::int32_t>(rng() % 2001) - 1000;
  Matrix p = upload(*backend, products, m, n * count, Layout::column_major);
  Buffer eb = backend->allocate(e.size() * 4);
  backend->copy_in(e.data(), eb, e.size() * 4);
  auto scale = [&](std::int64_t l) {
    const auto at = static_cast<std::size_t>(l * (m + n) * 4);
    return OuterExponents{{&eb, at, m}, {&eb, at + m * 4, n}};
  };
  std::vector<OuterExponents> scales;
  for (std::int64_t l = 0; l < count; ++l) scales.push_back(scale(l));
  const OuterExponents base = scale(count);
  for (const bool overwrite : {false, true}) {
    const std::vector<double> start = {1.0,  -2.0, 3e300, -0.0, 5.0,  6.0,  7.0,  8.0,  9.0,
                                       10.0, 11.0, 12.0,  13.0, 14.0, 15.0, 16.0, 17.0, 18.0,
                                       19.0, 20.0, 21.0,  22.0, 23.0, 24.0, 25.0, 26.0, 27.0,
                                       28.0, 29.0, 30.0,  31.0, 32.0, 33.0, 34.0, 35.0};
    Matrix once = upload(*backend, start, m, n, Layout::column_major);
    Matrix each = upload(*backend, start, m, n, Layout::column_major);
    RealMatrix first = p.view;
    first.cols = n;
    backend->accumulate_scaled({first, count, static_cast<std::size_t>(m * n * 8)}, scales, base,
                               once.view, overwrite);
    for (std::int64_t l = 0; l < count; ++l) {
      RealMatrix layer = first;
      layer.offset_bytes += static_cast<std::size_t>(l * m * n * 8);
      backend->accumulate_scaled(layer, scales[static_cast<std::size_t>(l)], base, each.view,
                                 overwrite && l == 0);
    }
    const auto a = download(*backend, once.buffer), b = download(*backend, each.buffer);
    EXPECT_TRUE(test::same_bits(b, a, m, n)) << (overwrite ? "overwrite" : "add");
  }
}

}  // namespace
}  // namespace tcemu
