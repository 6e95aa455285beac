// The element functions behind the error-corrected SGEMM steps (residual_split.hpp) and the
// emulator backend's steps built on them (backend.hpp). Expected values come from Python's
// IEEE binary16/binary32 conversions (crafted cases) or from host double arithmetic.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <tcemu/backend/backend.hpp>
#include <tcemu/backend/fp32_split_elements.hpp>
#include <tcemu/emulator/convert.hpp>
#include <tcemu/host/host_backends.hpp>

namespace tcemu {
namespace {

float as_float(std::uint32_t bits) {
  return std::bit_cast<float>(bits);
}
std::uint32_t bits_of(float x) {
  return std::bit_cast<std::uint32_t>(x);
}

// The value of a part (any split format) as a double; every such value is an fp32 value.
double part_value(const FloatFormat& format, std::uint32_t part) {
  return as_float(convert(format, formats::fp32, part, Rounding::nearest_even));
}

TEST(ResidualSplit, SplitFormats) {
  EXPECT_TRUE(is_split_format(formats::fp16));
  EXPECT_TRUE(is_split_format(formats::bf16));
  EXPECT_TRUE(is_split_format(formats::tf32));
  EXPECT_TRUE(is_split_format(formats::e5m2));
  EXPECT_FALSE(is_split_format(formats::e4m3));  // no Inf
  EXPECT_TRUE(is_split_format(formats::fp32));   // a one-part split: part x, residual 0
  // More bits than fp32, or a wider exponent range: residuals would not be fp32 numbers.
  EXPECT_FALSE(is_split_format({"p25", 8, 24, 0, SpecialEncoding::ieee}));
  EXPECT_FALSE(is_split_format({"e9m10", 9, 10, 0, SpecialEncoding::ieee}));
}

TEST(ResidualSplit, CraftedFp16Split) {
  // x = 1 + 2^-11 + 2^-23 (0x3F801001): just above half an fp16 ulp of 1.
  const std::uint32_t x = 0x3F801001u;
  const SplitElement rn = split_fp32_element(x, formats::fp16, Rounding::nearest_even, 0);
  EXPECT_EQ(rn.part, 0x3C01u);          // 1 + 2^-10
  EXPECT_EQ(rn.residual, 0xB9FFF000u);  // -(2^-11 - 2^-23)
  EXPECT_FALSE(rn.overflow);
  const SplitElement rz = split_fp32_element(x, formats::fp16, Rounding::toward_zero, 0);
  EXPECT_EQ(rz.part, 0x3C00u);
  EXPECT_EQ(rz.residual, 0x3A000800u);  // 2^-11 + 2^-23
  // The halfhalf low part: (2^-11 - 2^-23) 2^11 = 1 - 2^-12, a tie between 1 - 2^-11 and 1.
  const SplitElement lo =
      split_fp32_element(rn.residual, formats::fp16, Rounding::nearest_even, 11);
  EXPECT_EQ(lo.part, 0xBC00u);
  EXPECT_EQ(lo.residual, 0x34000000u);  // r - (-1) 2^-11 = 2^-23
}

TEST(ResidualSplit, SubnormalPartsAndSpecials) {
  // 2^-20 + 2^-30: the fp16 part is the subnormal 2^-20, the rest is the residual.
  const float x = std::ldexp(1.0f, -20) + std::ldexp(1.0f, -30);
  const SplitElement s = split_fp32_element(bits_of(x), formats::fp16, Rounding::nearest_even, 0);
  EXPECT_EQ(s.part, 0x0010u);
  EXPECT_EQ(s.residual, bits_of(std::ldexp(1.0f, -30)));
  // Below half the smallest fp16 subnormal: nothing is taken, the residual is x.
  const SplitElement tiny =
      split_fp32_element(bits_of(-std::ldexp(1.0f, -26)), formats::fp16, Rounding::nearest_even, 0);
  EXPECT_EQ(tiny.part, 0x8000u);
  EXPECT_EQ(tiny.residual, bits_of(-std::ldexp(1.0f, -26)));
  // The smallest fp32 subnormal 2^-149 scaled by 2^126 is 2^-23 = the fp16 subnormal 0x0002,
  // whose significand (2, quantum 2^-24) carries a zero below x's quantum: all of x is taken.
  // (An earlier version shifted by -1 here and returned residual x.)
  for (const std::uint32_t smallest : {0x00000001u, 0x80000001u, 0x00000003u}) {
    const SplitElement s126 =
        split_fp32_element(smallest, formats::fp16, Rounding::nearest_even, 126);
    EXPECT_EQ(s126.part, (smallest & 0x80000000u ? 0x8000u : 0u) | ((smallest & 0x7FFFFFFFu) << 1))
        << smallest;
    EXPECT_EQ(s126.residual, 0u) << smallest;
  }

  const SplitElement nan =
      split_fp32_element(0xFFC01234u, formats::fp16, Rounding::toward_zero, 11);
  EXPECT_EQ(nan.part, 0x7FFFu);
  EXPECT_EQ(nan.residual, 0u);
  const SplitElement inf =
      split_fp32_element(0xFF800000u, formats::bf16, Rounding::nearest_even, 0);
  EXPECT_EQ(inf.part, 0xFF80u);
  EXPECT_EQ(inf.residual, 0u);
  EXPECT_FALSE(inf.overflow);
  const SplitElement zero =
      split_fp32_element(0x80000000u, formats::tf32, Rounding::nearest_even, 5);
  EXPECT_EQ(zero.part, 0x80000000u);
  EXPECT_EQ(zero.residual, 0u);
}

TEST(ResidualSplit, OverflowIsIeeeOverflowOfTheScaledValue) {
  auto split = [](float x, const FloatFormat& f, Rounding r, int e) {
    return split_fp32_element(bits_of(x), f, r, e);
  };
  const SplitElement below = split(65519.0f, formats::fp16, Rounding::nearest_even, 0);
  EXPECT_FALSE(below.overflow);
  EXPECT_EQ(below.part, 0x7BFFu);  // 65504
  EXPECT_EQ(below.residual, bits_of(15.0f));
  EXPECT_TRUE(split(65520.0f, formats::fp16, Rounding::nearest_even, 0).overflow);  // rounds to Inf
  EXPECT_EQ(split(65520.0f, formats::fp16, Rounding::nearest_even, 0).part, 0x7C00u);
  EXPECT_FALSE(split(65535.0f, formats::fp16, Rounding::toward_zero, 0).overflow);
  const SplitElement rz = split(-65536.0f, formats::fp16, Rounding::toward_zero, 0);
  EXPECT_TRUE(rz.overflow);
  EXPECT_EQ(rz.part, 0xFBFFu);  // IEEE RZ overflow: -max finite
  EXPECT_EQ(rz.residual, 0u);
  EXPECT_TRUE(split(1.0f, formats::fp16, Rounding::nearest_even, 16).overflow);
  EXPECT_FALSE(split(1.0f, formats::fp16, Rounding::nearest_even, 15).overflow);
  const float max = std::numeric_limits<float>::max();
  EXPECT_TRUE(split(max, formats::tf32, Rounding::nearest_even, 0).overflow);
  EXPECT_FALSE(split(max, formats::tf32, Rounding::toward_zero, 0).overflow);
  EXPECT_FALSE(split(max, formats::tf32, Rounding::nearest_even, -1).overflow);
}

// part * 2^-e + residual == x exactly, and the part is the one rounding of x * 2^e.
TEST(ResidualSplit, ResidualIsExactForRandomFp32) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<std::uint32_t> any(0, 0x7F7FFFFFu);
  const FloatFormat formats_[] = {formats::fp16, formats::bf16, formats::tf32, formats::e5m2};
  const int scales[] = {0, 11, -7, 40, -60};
  int checked = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    // Exponents spread over the whole range, subnormals included.
    const std::uint32_t x = any(rng) | (trial % 2 ? 0x80000000u : 0u);
    for (const FloatFormat& f : formats_) {
      for (int e : scales) {
        for (Rounding r : {Rounding::nearest_even, Rounding::toward_zero}) {
          const SplitElement s = split_fp32_element(x, f, r, e);
          if (s.overflow) continue;
          const double sum = std::ldexp(part_value(f, s.part), -e) + as_float(s.residual);
          ASSERT_EQ(sum, static_cast<double>(as_float(x)))
              << std::hex << "x " << x << " " << f.name << " e " << std::dec << e;
          const double scaled = std::ldexp(static_cast<double>(as_float(x)), e);
          if (std::abs(scaled) >= 0x1p-126 && std::abs(scaled) < 0x1p127) {
            ASSERT_EQ(s.part, convert(formats::fp32, f, bits_of(static_cast<float>(scaled)), r))
                << std::hex << "x " << x << " " << f.name << " e " << std::dec << e;
          }
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 500000);
}

TEST(ResidualSplit, ScaleIsOneRoundingOfTheExactProduct) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<std::uint32_t> any(0, 0xFFFFFFFFu);
  std::uniform_int_distribution<int> exponent(-320, 320);
  for (int trial = 0; trial < 100000; ++trial) {
    const std::uint32_t y = any(rng);
    const int e = exponent(rng);
    const float value = as_float(y);
    // y 2^e is exact in binary64 for |e| <= 320 (24 bits, exponent within [-469, 447]); the
    // conversion to float is one rounding to nearest even.
    const float expected = static_cast<float>(std::ldexp(static_cast<double>(value), e));
    const std::uint32_t want = std::isnan(expected) ? 0x7FFFFFFFu : bits_of(expected);
    ASSERT_EQ(fp32_scale_rn(y, e), want) << std::hex << y << " e " << std::dec << e;
  }
}

// ---- the backend steps ----

struct HostMatrix {
  std::int64_t rows, cols;
  std::vector<std::uint32_t> bits;  // column major
};

class BackendSteps : public ::testing::Test {
 protected:
  std::unique_ptr<Backend> backend = host::make_emulator_backend();
  std::vector<Buffer> buffers;

  BufferMatrix put(const HostMatrix& m) {
    buffers.push_back(backend->allocate(m.bits.size() * 4));
    backend->copy_in(m.bits.data(), buffers.back(), m.bits.size() * 4);
    return {&buffers.back(), 0, formats::fp32, m.rows, m.cols, m.rows, Layout::column_major};
  }
  BufferMatrix make(const FloatFormat& f, std::int64_t rows, std::int64_t cols) {
    buffers.push_back(backend->allocate(static_cast<std::size_t>(rows * cols) * 4));
    return {&buffers.back(), 0, f, rows, cols, rows, Layout::column_major};
  }
  std::vector<std::uint32_t> get(const BufferMatrix& m) {
    std::vector<std::uint32_t> out(static_cast<std::size_t>(m.rows * m.cols));
    if (container_bytes(m.format) == 4) {
      backend->copy_out(*m.buffer, out.data(), out.size() * 4);
    } else {
      std::vector<std::uint16_t> half(out.size());
      backend->copy_out(*m.buffer, half.data(), half.size() * 2);
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = half[i];
    }
    return out;
  }
  void SetUp() override { buffers.reserve(16); }
};

HostMatrix random_matrix(std::int64_t rows, std::int64_t cols, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-20, 20);
  HostMatrix m{rows, cols, std::vector<std::uint32_t>(static_cast<std::size_t>(rows * cols))};
  for (auto& x : m.bits) x = bits_of(std::ldexp(uniform(rng), exponent(rng)));
  return m;
}

TEST_F(BackendSteps, SplitInPlaceMatchesTheElementFunction) {
  const HostMatrix x = random_matrix(7, 5, 1);
  const BufferMatrix xm = put(x);
  const BufferMatrix part = make(formats::fp16, 7, 5);
  const std::int64_t overflows =
      backend->split_fp32(xm, part, xm, Rounding::toward_zero, 11);  // residual in place
  const auto parts = get(part), residuals = get(xm);
  std::int64_t expected_overflows = 0;
  for (std::size_t i = 0; i < x.bits.size(); ++i) {
    const SplitElement e = split_fp32_element(x.bits[i], formats::fp16, Rounding::toward_zero, 11);
    EXPECT_EQ(parts[i], e.part);
    EXPECT_EQ(residuals[i], e.residual);
    expected_overflows += e.overflow;
  }
  EXPECT_EQ(overflows, expected_overflows);
  EXPECT_GT(overflows, 0);  // 2^20 * 2^11 is far beyond fp16
  EXPECT_THROW(
      backend->split_fp32(xm, make(formats::e4m3, 7, 5), std::nullopt, Rounding::nearest_even, 0),
      std::invalid_argument);
  EXPECT_THROW(
      backend->split_fp32(xm, make(formats::fp16, 5, 7), std::nullopt, Rounding::nearest_even, 0),
      std::invalid_argument);
}

TEST_F(BackendSteps, SummaryCountsSpecialsAndFindsTheLargestFiniteMagnitude) {
  HostMatrix x{
      2,
      3,
      {bits_of(-3.5f), 0x7FC00000u, 0xFF800000u, bits_of(1e-40f), 0x7F800000u, bits_of(2.0f)}};
  const Fp32Summary s = backend->summarize_fp32(put(x));
  EXPECT_EQ(s.max_abs_bits, bits_of(3.5f));
  EXPECT_EQ(s.nan_count, 1);
  EXPECT_EQ(s.inf_count, 2);
  EXPECT_EQ(backend->summarize_fp32(put({1, 1, {0x80000000u}})).max_abs_bits, 0u);
}

// The order of combine_fp32's operations, against host float arithmetic (binary32, RN).
TEST_F(BackendSteps, CombineFollowsItsOperationOrder) {
  const HostMatrix x = random_matrix(6, 4, 2), y = random_matrix(6, 4, 3),
                   c = random_matrix(6, 4, 4);
  const BufferMatrix xm = put(x), ym = put(y), cm = put(c), dm = make(formats::fp32, 6, 4);
  auto scale = [](float v, int e) {
    return static_cast<float>(std::ldexp(static_cast<double>(v), e));
  };
  for (const CombineOptions o :
       {CombineOptions{-11, 0, 1.0f, 0.0f}, CombineOptions{-30, 7, 0.75f, 0.0f},
        CombineOptions{3, -140, -1.5f, 0.3f}, CombineOptions{0, 0, 2.0f, -1.0f}}) {
    backend->combine_fp32(xm, ym, o.beta != 0 ? std::optional(cm) : std::nullopt, dm, o);
    const auto d = get(dm);
    for (std::size_t i = 0; i < d.size(); ++i) {
      const float s = as_float(x.bits[i]) + scale(as_float(y.bits[i]), o.y_exponent);
      const float v = scale(s, o.scale_exponent);
      const float want =
          o.beta == 0 ? o.alpha * v : std::fma(o.alpha, v, o.beta * as_float(c.bits[i]));
      ASSERT_EQ(d[i], bits_of(want)) << i << " y_exponent " << o.y_exponent;
    }
  }
  // Without y, in place, with Inf - Inf giving the canonical NaN.
  const BufferMatrix special = put({1, 2, {0x7F800000u, bits_of(1.0f)}});
  const BufferMatrix cs = put({1, 2, {0x7F800000u, 0x7FC00001u}});
  backend->combine_fp32(special, std::nullopt, cs, special, {0, 0, -1.0f, 1.0f});
  EXPECT_EQ(get(special), (std::vector<std::uint32_t>{0x7FFFFFFFu, 0x7FFFFFFFu}));
  EXPECT_THROW(backend->combine_fp32(xm, ym, std::nullopt, dm, {0, 0, 1.0f, 1.0f}),
               std::invalid_argument);
}

// Where A or B holds NaN or Inf, D gets the special value a float SGEMM gives (on values small
// enough that no finite partial sum overflows); elsewhere D is untouched.
TEST_F(BackendSteps, PropagateNonfiniteMatchesAFloatSgemm) {
  const std::int64_t m = 6, n = 7, k = 9;
  HostMatrix a = random_matrix(m, k, 5), b = random_matrix(k, n, 6);
  const float inf = std::numeric_limits<float>::infinity();
  auto set = [](HostMatrix& x, std::int64_t i, std::int64_t j, float v) {
    x.bits[static_cast<std::size_t>(j * x.rows + i)] = bits_of(v);
  };
  set(a, 0, 2, inf);
  set(a, 1, 3, -inf);
  set(a, 1, 4, inf);  // row 1: both signs unless B cancels them
  set(a, 2, 5, std::numeric_limits<float>::quiet_NaN());
  set(b, 2, 0, 0.0f);  // Inf * 0 in (0, 0)
  set(b, 7, 3, -inf);
  set(b, 8, 4, inf);
  set(b, 8, 5, 2.0f);
  const BufferMatrix am = put(a), bm = put(b);
  HostMatrix sentinel{m, n, std::vector<std::uint32_t>(m * n, 0x12345678u)};
  const BufferMatrix dm = put(sentinel);
  backend->propagate_nonfinite_fp32(am, bm, dm);
  const auto d = get(dm);
  int specials = 0;
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (std::int64_t p = 0; p < k; ++p) {
        sum += as_float(a.bits[p * m + i]) * as_float(b.bits[j * k + p]);
      }
      const std::uint32_t got = d[j * m + i];
      if (std::isfinite(sum)) {
        EXPECT_EQ(got, 0x12345678u) << i << "," << j;
      } else {
        ++specials;
        EXPECT_EQ(got, std::isnan(sum) ? 0x7FFFFFFFu : bits_of(sum)) << i << "," << j;
      }
    }
  }
  EXPECT_GT(specials, 20);
}

}  // namespace
}  // namespace tcemu
