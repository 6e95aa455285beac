// same_bits: a comparison that matches succeeds; one that does not fails with a message that
// counts the differing elements and lists the first ones, in storage order, with their indices,
// both bit patterns, their readings and the caller's description of the inputs.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <tcemu/test/same_bits.hpp>

namespace tcemu::test {
namespace {

std::string message_of(const ::testing::AssertionResult& r) {
  return r.message();
}

TEST(SameBits, EqualMatricesPass) {
  const std::vector<float> a = {1.0f, -0.0f, NAN, 3.5f, 0x1p-149f, INFINITY};
  const std::vector<float> b = a;
  const BitComparison c = compare_bits(a, b, 2, 3);
  EXPECT_TRUE(c.result);
  EXPECT_EQ(c.differing, 0);
  EXPECT_EQ(c.total, 6);
  EXPECT_EQ(message_of(c.result), "0 of 6 elements (2 x 3, column major) differ");
  EXPECT_TRUE(same_bits(std::span<const float>(a), b, 3, 2, {.order = Order::row_major}));
}

// Row major with ld 5: the elements at (0, 3) and (2, 1) differ, the padding (column 4) is not
// compared.
TEST(SameBits, AFailureListsIndicesBitsAndValues) {
  std::vector<std::uint32_t> expected(15, 7u), got(15, 7u);
  got[0 * 5 + 3] = 8u;
  got[2 * 5 + 1] = 0xFFFFFFFFu;
  got[1 * 5 + 4] = 9u;  // padding
  const BitComparison c = compare_bits(expected, got, 3, 4, {.order = Order::row_major, .ld = 5});
  EXPECT_FALSE(c.result);
  EXPECT_EQ(c.differing, 2);
  EXPECT_EQ(c.total, 12);
  EXPECT_EQ(message_of(c.result),
            "2 of 12 elements (3 x 4, row major, ld 5) differ:\n"
            "  (0, 3): expected 0x00000007 (7)\n"
            "          got      0x00000008 (8)\n"
            "  (2, 1): expected 0x00000007 (7)\n"
            "          got      0xffffffff (4294967295)\n");
}

TEST(SameBits, FloatsAreComparedByTheirBitsAndReadInDecimalAndHex) {
  const std::vector<double> expected = {0.0, 1.0, NAN, 2.0};
  const std::vector<double> got = {-0.0, 1.0000000000000002, NAN, 2.0};
  const ::testing::AssertionResult r = same_bits(expected, got, 2, 2);
  EXPECT_FALSE(r);
  EXPECT_EQ(message_of(r),
            "2 of 4 elements (2 x 2, column major) differ:\n"
            "  (0, 0): expected 0x0000000000000000 (0, 0x0p+0)\n"
            "          got      0x8000000000000000 (-0, -0x0p+0)\n"
            "  (1, 0): expected 0x3ff0000000000000 (1, 0x1p+0)\n"
            "          got      0x3ff0000000000001 (1.0000000000000002, 0x1.0000000000001p+0)\n");
  const std::vector<float> f = {1.5f}, g = {-1.5f};
  EXPECT_EQ(message_of(same_bits(f, g, 1, 1)),
            "1 of 1 elements (1 x 1, column major) differ:\n"
            "  (0, 0): expected 0x3fc00000 (1.5, 0x1.8p+0)\n"
            "          got      0xbfc00000 (-1.5, -0x1.8p+0)\n");
}

// Only the first `listed` differing elements are shown, in the order of the storage (columns
// first for column major), and the rest are counted.
TEST(SameBits, TheFirstDifferingElementsAreListedAndTheRestCounted) {
  const std::int64_t rows = 4, cols = 5;
  std::vector<std::uint16_t> expected(rows * cols, 0x3c00), got = expected;
  for (std::int64_t j = 1; j < cols; ++j) {
    for (std::int64_t i = 0; i < rows; ++i) {
      if ((i + j) % 2 == 0) got[j * rows + i] = 0xbc00;  // (1, 1), (3, 1), (0, 2), ... 8 of them
    }
  }
  const std::string m = message_of(same_bits(expected, got, rows, cols, {.listed = 3}));
  EXPECT_EQ(m.rfind("8 of 20 elements (4 x 5, column major) differ:\n", 0), 0u) << m;
  EXPECT_NE(m.find("  (1, 1): expected 0x3c00 (15360)\n          got      0xbc00 (48128)\n"),
            std::string::npos)
      << m;
  EXPECT_LT(m.find("(1, 1)"), m.find("(3, 1)"));
  EXPECT_LT(m.find("(3, 1)"), m.find("(0, 2)"));
  EXPECT_EQ(m.find("(2, 2)"), std::string::npos) << m;  // the fourth: not listed
  EXPECT_NE(m.find("  ... and 5 more\n"), std::string::npos) << m;

  // Row major: the same differences listed row by row.
  std::vector<std::uint16_t> e2(rows * cols, 0), g2(rows * cols, 0);
  g2[0 * cols + 4] = 1;  // (0, 4)
  g2[1 * cols + 0] = 1;  // (1, 0)
  const std::string by_rows =
      message_of(same_bits(e2, g2, rows, cols, {.order = Order::row_major}));
  EXPECT_LT(by_rows.find("(0, 4)"), by_rows.find("(1, 0)")) << by_rows;
  const std::string by_columns = message_of(same_bits(e2, g2, cols, rows));  // (4, 0) and (0, 1)
  EXPECT_LT(by_columns.find("(4, 0)"), by_columns.find("(0, 1)")) << by_columns;
}

TEST(SameBits, InputsAndReadingsComeFromTheCaller) {
  const std::vector<std::uint16_t> expected = {0x3c00, 0x4000}, got = {0x3c00, 0x4200};
  const std::string m =
      message_of(same_bits(expected, got, 1, 2,
                           {.inputs =
                                [](std::int64_t i, std::int64_t j) {
                                  return "a " + std::to_string(i) + "\nb " + std::to_string(j);
                                },
                            .value = [](std::uint64_t bits) { return "fp16 " + hex(bits, 4); }}));
  EXPECT_EQ(m,
            "1 of 2 elements (1 x 2, column major) differ:\n"
            "  (0, 1): expected 0x4000 (fp16 0x4000)\n"
            "          got      0x4200 (fp16 0x4200)\n"
            "          inputs   a 0\n"
            "                   b 1\n");
}

TEST(SameBits, AccessorsGiveTheElements) {
  const auto expected = [](std::int64_t i, std::int64_t j) {
    return static_cast<std::int32_t>(i * 10 + j);
  };
  const auto off_by_one = [](std::int64_t i, std::int64_t j) {
    return static_cast<std::int32_t>(i * 10 + j - (i == 2 && j == 3 ? 21 : 0));
  };
  EXPECT_TRUE(same_bits_at(3, 4, expected, expected));
  const BitComparison c = compare_bits_at(3, 4, expected, off_by_one, {.order = Order::row_major});
  EXPECT_EQ(c.differing, 1);
  EXPECT_EQ(message_of(c.result),
            "1 of 12 elements (3 x 4, row major) differ:\n"
            "  (2, 3): expected 0x00000017 (23)\n"
            "          got      0x00000002 (2)\n");
}

TEST(SameBits, ArraysTooShortAreNotCompared) {
  const std::vector<double> six(6), five(5);
  const BitComparison c = compare_bits(six, five, 2, 3);
  EXPECT_FALSE(c.result);
  EXPECT_EQ(message_of(c.result),
            "not compared: 2 x 3 (ld 2) needs 6 elements; expected holds 6, got 5");
  EXPECT_FALSE(same_bits(six, six, 2, 3, {.ld = 3}));  // needs 2 * 3 + 2 = 8
  EXPECT_TRUE(same_bits(six, six, 0, 3));
}

// Through EXPECT_TRUE: a failure that GoogleTest reports with the listing.
TEST(SameBits, ExpectTrueReportsTheListing) {
  const std::vector<std::uint64_t> expected = {1, 2, 3}, got = {1, 2, 4};
  EXPECT_NONFATAL_FAILURE(EXPECT_TRUE(same_bits(expected, got, 3, 1)),
                          "  (2, 0): expected 0x0000000000000003 (3)");
}

TEST(SameBits, InputDescriptions) {
  const std::vector<std::uint16_t> row = {0x3c00, 0xbc00, 0x0001};
  EXPECT_EQ(hex_values(
                3, [&](std::int64_t p) { return row[p]; }, 4),
            "3c00 bc00 0001 (3 values)");
  EXPECT_EQ(hex_values(
                3, [&](std::int64_t p) { return row[p]; }, 4, 2),
            "3c00 bc00 ... (3 values)");
  const std::vector<double> v = {0.0, -0.0, 0x1p-40, -12.0, NAN, -INFINITY, 3.0};
  EXPECT_EQ(value_range(7, [&](std::int64_t p) { return v[p]; }),
            "7 values, |x| in [0x1p-40, 0x1.8p+3], 2 zeros, 1 NaN, 1 Inf");
  EXPECT_EQ(value_range(1, [](std::int64_t) { return 0.0; }), "1 value, 1 zero");
  EXPECT_EQ(fp32_value(0x3f800000u), "1, 0x1p+0");
  EXPECT_EQ(fp64_value(0xbff8000000000000u), "-1.5, -0x1.8p+0");
  EXPECT_EQ(fp32_value(0x7fc00001u), "NaN");
  EXPECT_EQ(fp32_value(0xff800000u), "-Inf");
  EXPECT_EQ(fp64_value(0xfff8000000000000u), "-NaN");
  EXPECT_EQ(fp64_value(0x7ff0000000000000u), "Inf");
}

}  // namespace
}  // namespace tcemu::test
