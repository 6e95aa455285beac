// The vectorised fast path of the emulated GEMM (gemm_fast_path.cpp) against the model
// (mma_element) on datapaths at the edges of what validate() accepts and on every kernel it
// specialises, and validate()'s refusal of
// a nan_bits that is not a NaN of the accumulator format (issue 18's findings).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>
#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/test/same_bits.hpp>

namespace tcemu {
namespace {

// The model's D (m x n, row major): mma_element over each row of A and column of B, from C's
// element (+0 without C).
std::vector<std::uint32_t> model_product(const Datapath& dp, const ConstMatrixView& a,
                                         const ConstMatrixView& b,
                                         const std::optional<ConstMatrixView>& c = std::nullopt) {
  std::vector<std::uint32_t> d;
  for (std::int64_t i = 0; i < a.rows; ++i) {
    for (std::int64_t j = 0; j < b.cols; ++j) {
      std::vector<std::uint32_t> row, col;
      for (std::int64_t p = 0; p < a.cols; ++p) {
        row.push_back(a.get(i, p));
        col.push_back(b.get(p, j));
      }
      d.push_back(mma_element(dp, row, col, c ? c->get(i, j) : 0));
    }
  }
  return d;
}

std::uint32_t fp16_of(double v) {
  return convert(formats::fp32, formats::fp16, std::bit_cast<std::uint32_t>(static_cast<float>(v)),
                 Rounding::nearest_even);
}

// Every product sum of one instruction is an integer of a few bits, so that rounding it to one
// significant bit hits ties (3 -> 2 or 4, 6 -> 4 or 8, 12 -> 8 or 16) in every binade.
TEST(FastPath, RoundToNearestTiesAtOneBitOfPrecisionFollowTheModel) {
  for (const Rounding rounding : {Rounding::nearest_even, Rounding::toward_zero}) {
    Datapath dp = preset("sm90", formats::fp16, formats::fp32);
    dp.block_rounding = rounding;
    dp.block_result_precision = 1;
    const std::int64_t m = 8, n = 4, k = dp.instruction_k;
    std::vector<std::uint16_t> a(static_cast<std::size_t>(m * k)),
        b(static_cast<std::size_t>(k * n));
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t p = 0; p < k; ++p) {
        a[static_cast<std::size_t>(i * k + p)] =
            static_cast<std::uint16_t>(fp16_of(p < 2 ? static_cast<double>((i + 1) << p) : 0.0));
      }
    }
    for (std::int64_t p = 0; p < k; ++p) {
      for (std::int64_t j = 0; j < n; ++j) {
        b[static_cast<std::size_t>(p * n + j)] =
            static_cast<std::uint16_t>(fp16_of(static_cast<double>(j + 1)));
      }
    }
    std::vector<std::uint32_t> d(static_cast<std::size_t>(m * n));
    const ConstMatrixView av{
        reinterpret_cast<const unsigned char*>(a.data()), dp.input, m, k, k, Layout::row_major};
    const ConstMatrixView bv{
        reinterpret_cast<const unsigned char*>(b.data()), dp.input, k, n, n, Layout::row_major};
    emulated_gemm(
        dp, {.threads = 1}, av, bv, std::nullopt,
        {{reinterpret_cast<unsigned char*>(d.data()), dp.accumulator, m, n, n, Layout::row_major}});
    const std::vector<std::uint32_t> expected = model_product(dp, av, bv);
    EXPECT_TRUE(test::same_bits(expected, d, m, n, {.order = test::Order::row_major}))
        << "block rounding " << static_cast<int>(rounding);
  }
  // The tie 1 * 1 + 1 * 2 = 3 itself: RN to one bit gives 4 (round_pack's tie to even rounds the
  // odd implicit bit up), RZ gives 2.
  Datapath dp = preset("sm90", formats::fp16, formats::fp32);
  dp.block_result_precision = 1;
  dp.block_rounding = Rounding::nearest_even;
  const std::vector<std::uint32_t> row = {fp16_of(1), fp16_of(2)}, col = {fp16_of(1), fp16_of(1)};
  EXPECT_EQ(mma_element(dp, row, col, 0), 0x40800000u);
}

// Random and adversarial operands: zeros of both signs, subnormals and normals over a few binades
// (so that alignment both keeps and drops bits). Rows of A with i % 7 == 0 are all -0 and columns
// of B with j % 5 == 0 all +0 (column 5: zeros of random sign): with c = -0 there, every term of
// those elements is a negative zero (column 5: zeros of both signs, whose sum is +0 under ieee).
std::uint32_t adversarial_fp16(std::mt19937_64& rng) {
  const std::uint32_t sign = static_cast<std::uint32_t>(rng() & 1) << 15;
  switch (rng() % 8) {
    case 0:
      return 0;
    case 1:
      return 0x8000;
    case 2:
      return sign | static_cast<std::uint32_t>(1 + rng() % 0x3FF);  // subnormal
    default:
      return sign | static_cast<std::uint32_t>((12 + rng() % 6) << 10) |
             static_cast<std::uint32_t>(rng() % 0x400);
  }
}

// Each kernel the fast path specialises (block size 4, 8, 16, 32 and any other; ZeroSign::ieee
// and positive) against mma_element, with m above the row block (256 rows) and not a multiple of
// the four rows the exponent pass packs, n across two column tiles, k ending in a partial
// instruction (and, for one block size, enough inputs to take the operand table).
TEST(FastPath, EverySpecialisedKernelMatchesMmaElement) {
  const std::int64_t m = 263, n = 11;
  std::mt19937_64 rng(7);
  for (const int terms : {2, 4, 8, 16, 32}) {
    for (const ZeroSign zero_sign : {ZeroSign::ieee, ZeroSign::positive}) {
      Datapath dp = block_datapath(formats::fp16, formats::fp32, 32, terms, 25);
      dp.zero_sign = zero_sign;
      // With 16-term blocks (m + n) k exceeds the 2^16 fp16 patterns, so the operands come from the
      // fast path's table of them.
      const std::int64_t k = terms == 16 ? 8 * dp.instruction_k - 6 : 2 * dp.instruction_k + 7;
      std::vector<std::uint16_t> a(static_cast<std::size_t>(m * k)),
          b(static_cast<std::size_t>(k * n));
      std::vector<std::uint32_t> c(static_cast<std::size_t>(m * n)), d(c.size());
      for (std::int64_t i = 0; i < m; ++i) {
        for (std::int64_t p = 0; p < k; ++p) {
          a[static_cast<std::size_t>(i * k + p)] =
              static_cast<std::uint16_t>(i % 7 == 0 ? 0x8000 : adversarial_fp16(rng));
        }
      }
      for (std::int64_t p = 0; p < k; ++p) {
        for (std::int64_t j = 0; j < n; ++j) {
          b[static_cast<std::size_t>(p * n + j)] = static_cast<std::uint16_t>(
              j % 5 == 0 ? (j == 5 ? rng() & 0x8000 : 0) : adversarial_fp16(rng));
        }
      }
      for (std::int64_t i = 0; i < m; ++i) {
        for (std::int64_t j = 0; j < n; ++j) {
          c[static_cast<std::size_t>(i * n + j)] =
              i % 7 == 0 && j % 5 == 0 ? 0x80000000u
                                       : convert(formats::fp16, formats::fp32,
                                                 adversarial_fp16(rng), Rounding::nearest_even);
        }
      }
      const ConstMatrixView av{
          reinterpret_cast<const unsigned char*>(a.data()), dp.input, m, k, k, Layout::row_major};
      const ConstMatrixView bv{
          reinterpret_cast<const unsigned char*>(b.data()), dp.input, k, n, n, Layout::row_major};
      const ConstMatrixView cv{reinterpret_cast<const unsigned char*>(c.data()),
                               dp.accumulator,
                               m,
                               n,
                               n,
                               Layout::row_major};
      emulated_gemm(dp, {.beta = 1.0f, .c_input = CInput::initial_accumulator, .threads = 2}, av,
                    bv, cv,
                    {{reinterpret_cast<unsigned char*>(d.data()), dp.accumulator, m, n, n,
                      Layout::row_major}});
      const std::vector<std::uint32_t> expected = model_product(dp, av, bv, cv);
      const auto negative_zeros = std::count(expected.begin(), expected.end(), 0x80000000u);
      // The generator reaches the zero-sign rule: -0 results under ieee, none under positive.
      if (zero_sign == ZeroSign::ieee) {
        EXPECT_GT(negative_zeros, 0);
      } else {
        EXPECT_EQ(negative_zeros, 0);
      }
      EXPECT_TRUE(test::same_bits(expected, d, m, n, {.order = test::Order::row_major}))
          << "block_terms " << terms << " zero_sign " << static_cast<int>(zero_sign);
    }
  }
}

// The table of every bit pattern (made once per format for the process, gemm_fast_path.cpp's
// OperandTable) serves fp16, e4m3, e5m2 and fp16 again in turn; each product against mma_element,
// with B column major, n not a multiple of the 8-column tiles and m not one of the 4-row groups.
TEST(FastPath, OperandTablesOfSeveralFormatsGiveTheModelsBits) {
  const std::int64_t m = 301, n = 19, k = 256;  // (m + n) k > 2^16: every table is used
  std::mt19937_64 rng(11);
  for (const FloatFormat& input : {formats::fp16, formats::e4m3, formats::e5m2, formats::fp16}) {
    const Datapath dp = preset("sm90", input, formats::fp32);
    const int bytes = input.container_bits() / 8;
    // Finite patterns only (an Inf or NaN sends the product to the general path).
    const std::uint32_t exponent_mask = ((1u << input.exponent_bits) - 1) << input.fraction_bits;
    const auto fill = [&](std::vector<unsigned char>& x) {
      for (std::size_t at = 0; at < x.size(); at += static_cast<std::size_t>(bytes)) {
        std::uint32_t bits;
        do {
          bits = static_cast<std::uint32_t>(rng()) & ((1u << input.container_bits()) - 1);
        } while ((bits & exponent_mask) == exponent_mask);
        for (int q = 0; q < bytes; ++q)
          x[at + static_cast<std::size_t>(q)] = (bits >> (8 * q)) & 0xff;
      }
    };
    std::vector<unsigned char> a(static_cast<std::size_t>(m * k * bytes)),
        b(static_cast<std::size_t>(k * n * bytes));
    fill(a);
    fill(b);
    std::vector<std::uint32_t> d(static_cast<std::size_t>(m * n));
    const ConstMatrixView av{a.data(), input, m, k, k, Layout::row_major};
    const ConstMatrixView bv{b.data(), input, k, n, k, Layout::column_major};
    emulated_gemm(
        dp, {.threads = 3}, av, bv, std::nullopt,
        {{reinterpret_cast<unsigned char*>(d.data()), dp.accumulator, m, n, n, Layout::row_major}});
    const std::vector<std::uint32_t> expected = model_product(dp, av, bv);
    EXPECT_TRUE(test::same_bits(expected, d, m, n, {.order = test::Order::row_major}))
        << input.name;
  }
}

#if defined(__x86_64__)
// The fast path converts fp32 accumulators eight at a time through float; a caller's
// flush-to-zero and denormals-are-zero modes (MXCSR bits 15 and 6) must not change the bits of
// subnormal C or D. C holds subnormals; the rows of A that are zero pass them through to D.
TEST(FastPath, SubnormalAccumulatorsKeepTheirBitsUnderFlushToZero) {
  const Datapath dp = preset("sm90", formats::fp16, formats::fp32);
  const std::int64_t m = 12, n = 16, k = 2 * dp.instruction_k;
  std::mt19937_64 rng(61);
  std::vector<std::uint16_t> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n));
  std::vector<std::uint32_t> c(static_cast<std::size_t>(m * n)), d(c.size());
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t p = 0; p < k; ++p) {
      a[static_cast<std::size_t>(i * k + p)] =
          static_cast<std::uint16_t>(i % 2 == 0 ? 0 : adversarial_fp16(rng));
    }
  }
  for (auto& x : b) x = static_cast<std::uint16_t>(adversarial_fp16(rng));
  for (auto& x : c) x = static_cast<std::uint32_t>(rng()) & 0x807F'FFFFu;  // subnormal (or zero)
  const ConstMatrixView av{
      reinterpret_cast<const unsigned char*>(a.data()), dp.input, m, k, k, Layout::row_major};
  const ConstMatrixView bv{
      reinterpret_cast<const unsigned char*>(b.data()), dp.input, k, n, n, Layout::row_major};
  const ConstMatrixView cv{
      reinterpret_cast<const unsigned char*>(c.data()), dp.accumulator, m, n, n, Layout::row_major};
  const unsigned int mxcsr = _mm_getcsr();
  _mm_setcsr(mxcsr | 0x8040u);
  emulated_gemm(
      dp, {.beta = 1.0f, .c_input = CInput::initial_accumulator, .threads = 1}, av, bv, cv,
      {{reinterpret_cast<unsigned char*>(d.data()), dp.accumulator, m, n, n, Layout::row_major}});
  _mm_setcsr(mxcsr);
  const std::vector<std::uint32_t> expected = model_product(dp, av, bv, cv);
  const auto subnormal_results = std::count_if(
      expected.begin(), expected.end(),
      [](std::uint32_t e) { return (e & 0x7F80'0000u) == 0 && (e & 0x007F'FFFFu) != 0; });
  EXPECT_GT(subnormal_results, m * n / 4);  // the even rows' C, passed through
  EXPECT_TRUE(test::same_bits(expected, d, m, n, {.order = test::Order::row_major}));
}
#endif

TEST(Validate, RefusesANanBitsThatIsNotANanOfTheAccumulator) {
  const auto message = [](const Datapath& dp) {
    try {
      validate(dp);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  Datapath fp32 = preset("sm90", formats::fp16, formats::fp32);
  EXPECT_EQ(message(fp32), "accepted");
  fp32.nan_bits = 0x7F800000u;  // +Inf
  EXPECT_NE(message(fp32).find("nan_bits = 0x7F800000 is not a NaN of the accumulator format fp32"),
            std::string::npos)
      << message(fp32);
  fp32.nan_bits = 0x3F800000u;  // 1.0
  EXPECT_NE(message(fp32).find("nan_bits"), std::string::npos);
  fp32.nan_bits = 0xFFC00001u;  // a NaN with the sign bit set is still a NaN
  EXPECT_EQ(message(fp32), "accepted");
  Datapath fp16 = preset("sm90", formats::fp16, formats::fp16);
  EXPECT_EQ(message(fp16), "accepted");
  fp16.nan_bits = 0x17E00u;  // an fp16 NaN with a bit above the format's 16
  EXPECT_NE(message(fp16).find("nan_bits = 0x17E00 is not a NaN of the accumulator format fp16"),
            std::string::npos)
      << message(fp16);
  fp16.nan_bits = 0x7FFFFFFFu;  // the fp32 NaN given to an fp16 accumulator
  EXPECT_NE(message(fp16).find("not a NaN"), std::string::npos);
}

}  // namespace
}  // namespace tcemu
