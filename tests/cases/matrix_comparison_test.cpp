#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/cases/gemm_check.hpp>
#include <tcemu/cases/matrix_comparison.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>

namespace tcemu {
namespace {

std::uint32_t bits(float v) {
  return std::bit_cast<std::uint32_t>(v);
}

TEST(UlpDistance, CountsStepsBetweenNeighboursAcrossZeroAndToInfinity) {
  const FloatFormat& f = formats::fp32;
  EXPECT_EQ(ulp_distance(f, bits(1.0f), bits(std::nextafter(1.0f, 2.0f))), 1u);
  EXPECT_EQ(ulp_distance(f, bits(1.0f), bits(1.0f)), 0u);
  EXPECT_EQ(ulp_distance(f, bits(0.0f), bits(-0.0f)), 0u);
  // The smallest subnormals of both signs lie on either side of the zeros: 2 steps apart.
  EXPECT_EQ(ulp_distance(f, 0x00000001, 0x80000001), 2u);
  EXPECT_EQ(ulp_distance(f, bits(std::numeric_limits<float>::max()), 0x7f800000), 1u);
  EXPECT_EQ(ulp_distance(f, 0xff800000, 0x7f800000), 2u * 0x7f800000u);
  EXPECT_EQ(ulp_distance(f, 0x7fc00000, bits(1.0f)), std::nullopt);
  // fp16 1 and -1: twice the ordinal of 0x3c00.
  EXPECT_EQ(ulp_distance(formats::fp16, 0x3c00, 0xbc00), 2u * 0x3c00u);
  // tf32 lives in the fp32 container; its ulp is bit 13 of the container.
  EXPECT_EQ(ulp_distance(formats::tf32, 0x3f800000, 0x3f802000), 1u);
  // e4m3: 448 (0x7e) is finite, S.1111.111 is its only NaN.
  EXPECT_EQ(ulp_distance(formats::e4m3, 0x7d, 0x7e), 1u);
  EXPECT_EQ(ulp_distance(formats::e4m3, 0x7e, 0x7f), std::nullopt);
}

// A 5 x 7 fp32 matrix stored column major, compared with a row-major copy in which elements
// were changed by known distances.
TEST(CompareMatrices, CountsDistancesAndListsTheFirstRowByRow) {
  const std::int64_t rows = 5, cols = 7;
  std::vector<std::uint32_t> expected(rows * cols), got(rows * cols);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(0.5f, 2.0f);
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) {
      expected[j * rows + i] = got[i * cols + j] = bits(uniform(rng));
    }
  }
  expected[3 * rows + 4] = bits(0.0f);  // (4, 3): +0 expected, -0 got
  got[4 * cols + 3] = bits(-0.0f);
  got[0 * cols + 6] += 1;          // (0, 6): 1 ulp
  got[2 * cols + 1] -= 5;          // (2, 1): 5 ulps
  got[3 * cols + 0] = 0x7fc00000;  // (3, 0): a NaN
  const auto view = [](const std::vector<std::uint32_t>& v, std::int64_t r, std::int64_t c,
                       std::int64_t ld, Layout layout) {
    return ConstMatrixView{
        reinterpret_cast<const unsigned char*>(v.data()), formats::fp32, r, c, ld, layout};
  };
  const MatrixComparison c =
      compare_matrices(view(expected, rows, cols, rows, Layout::column_major),
                       view(got, rows, cols, cols, Layout::row_major), 3);
  EXPECT_EQ(c.differing, 4);
  EXPECT_EQ(c.nan_involved, 1);
  EXPECT_EQ(c.max_ulps, 5u);
  EXPECT_EQ(c.ulp_histogram[0], 1);  // the sign of zero
  EXPECT_EQ(c.ulp_histogram[1], 1);  // 1
  EXPECT_EQ(c.ulp_histogram[3], 1);  // 4..7
  EXPECT_DOUBLE_EQ(c.share(), 4.0 / 35.0);
  ASSERT_EQ(c.first.size(), 3u);  // listed = 3, in row-major order
  EXPECT_EQ(c.first[0].row, 0);
  EXPECT_EQ(c.first[0].col, 6);
  EXPECT_EQ(c.first[0].ulps, 1u);
  EXPECT_EQ(c.first[1].row, 2);
  EXPECT_EQ(c.first[1].col, 1);
  EXPECT_EQ(c.first[1].got, c.first[1].expected - 5);
  EXPECT_EQ(c.first[2].row, 3);
  EXPECT_EQ(c.first[2].ulps, std::nullopt);
  const std::string text = format_comparison(c);
  EXPECT_NE(text.find("4 of 35 elements (5 x 7, fp32) differ"), std::string::npos) << text;
  EXPECT_NE(text.find("max distance 5 ulps; 1 with a NaN"), std::string::npos) << text;
  EXPECT_NE(text.find("ulps 4-7: 1"), std::string::npos) << text;
  EXPECT_NE(text.find("(2, 1): expected 0x"), std::string::npos) << text;
  EXPECT_NE(text.find("got 0x7fc00000 (nan), NaN"), std::string::npos) << text;
  EXPECT_NE(text.find("... 1 more"), std::string::npos) << text;

  EXPECT_THROW(compare_matrices(view(expected, rows, cols, rows, Layout::column_major),
                                view(got, cols, rows, rows, Layout::row_major)),
               std::invalid_argument);
  const MatrixComparison same =
      compare_matrices(view(expected, rows, cols, rows, Layout::column_major),
                       view(expected, rows, cols, rows, Layout::column_major));
  EXPECT_TRUE(same.equal());
  EXPECT_EQ(format_comparison(same), "0 of 35 elements (5 x 7, fp32) differ\n");
}

// check_gemm finds a one-ulp change planted in an emulated GEMM result, and the case line it
// prints for the element replays through mma_element to the expected bits.
TEST(CheckGemm, FindsAPlantedDifferenceAndItsCaseLineReplaysIt) {
  const Datapath dp = preset("sm90", formats::fp16, formats::fp32);
  for (const std::int64_t k : {4, 40}) {
    const std::int64_t m = 6, n = 3;
    std::mt19937 rng(static_cast<unsigned>(k));
    std::uniform_int_distribution<int> exponent(13, 17), fraction(0, 1023), sign(0, 1);
    const auto fp16 = [&] {
      return static_cast<std::uint16_t>(sign(rng) << 15 | exponent(rng) << 10 | fraction(rng));
    };
    std::vector<std::uint16_t> a(m * k), b(k * n);
    for (auto& v : a) v = fp16();
    for (auto& v : b) v = fp16();
    std::vector<std::uint32_t> c(m * n, bits(0.25f)), d(m * n);
    const auto in = [](const auto& v, FloatFormat f, std::int64_t r, std::int64_t cols) {
      return ConstMatrixView{
          reinterpret_cast<const unsigned char*>(v.data()), f, r, cols, cols, Layout::row_major};
    };
    const MatrixView dv{
        {reinterpret_cast<unsigned char*>(d.data()), formats::fp32, m, n, n, Layout::row_major}};
    const GemmOptions options{.alpha = 1, .beta = 1};
    emulated_gemm(dp, options, in(a, dp.input, m, k), in(b, dp.input, k, n),
                  in(c, formats::fp32, m, n), dv);
    EXPECT_TRUE(check_gemm(dp, options, in(a, dp.input, m, k), in(b, dp.input, k, n),
                           in(c, formats::fp32, m, n), dv)
                    .passed());
    d[4 * n + 2] += 1;
    const GemmCheck check = check_gemm(dp, options, in(a, dp.input, m, k), in(b, dp.input, k, n),
                                       in(c, formats::fp32, m, n), dv);
    ASSERT_EQ(check.comparison.differing, 1);
    EXPECT_EQ(check.comparison.first[0].row, 4);
    EXPECT_EQ(check.comparison.first[0].col, 2);
    EXPECT_EQ(check.comparison.first[0].ulps, 1u);
    EXPECT_NE(check.report.find("inputs C 0x3e800000 (epilogue)"), std::string::npos)
        << check.report;
    if (k == 4) {
      const auto at = check.report.find("case line: ");
      ASSERT_NE(at, std::string::npos) << check.report;
      const std::string line = check.report.substr(at + 11, check.report.find('\n', at) - at - 11);
      const auto element = parse_case_line(line, 1, dp.input, dp.accumulator);
      ASSERT_TRUE(element.has_value()) << line;
      // C enters in the epilogue, so the case line's chain starts at +0; the epilogue then adds
      // beta C = 0.25 with one fp32 round to nearest (gemm.hpp).
      EXPECT_EQ(element->c, 0u) << line;
      const float acc = std::bit_cast<float>(mma_element(dp, element->a, element->b, element->c));
      EXPECT_EQ(bits(acc + 0.25f), check.comparison.first[0].expected) << line;
    } else {
      EXPECT_NE(check.report.find("K = 40, 40 nonzero products"), std::string::npos)
          << check.report;
    }
  }
}

}  // namespace
}  // namespace tcemu
