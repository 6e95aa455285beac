// The integer case format and the integer probe cases; tests/emulator/integer_presets_test.cpp
// checks the IMMA table.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <tcemu/cases/integer_case_file.hpp>
#include <tcemu/cases/integer_probe_cases.hpp>
#include <tcemu/emulator/integer_presets.hpp>

namespace tcemu {
namespace {

using namespace integer_formats;

TEST(IntegerCaseFile, LinesRoundTripWithTheirDigitCounts) {
  const auto c = parse_integer_case_line("2 7f 80 01 ff 7ffffffe 800000fd", 1, s8, u8);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->a, (std::vector<std::int32_t>{127, -128}));
  EXPECT_EQ(c->b, (std::vector<std::int32_t>{1, 255}));
  EXPECT_EQ(c->c, 2147483646);
  ASSERT_TRUE(c->d.has_value());
  EXPECT_EQ(*c->d, std::numeric_limits<std::int32_t>::min() + 253);
  EXPECT_EQ(format_integer_case_line(*c, s8, u8), "2 7f 80 01 ff 7ffffffe 800000fd");
  const auto four = parse_integer_case_line("3 8 7 f 0 1 f ffffffff", 2, s4, u4);
  ASSERT_TRUE(four.has_value());
  EXPECT_EQ(four->a, (std::vector<std::int32_t>{-8, 7, -1}));
  EXPECT_EQ(four->b, (std::vector<std::int32_t>{0, 1, 15}));
  EXPECT_EQ(four->c, -1);
  EXPECT_FALSE(four->d.has_value());
  EXPECT_EQ(format_integer_case_line(*four, s4, u4), "3 8 7 f 0 1 f ffffffff");
  EXPECT_FALSE(parse_integer_case_line("# comment", 3, s8, s8).has_value());
  EXPECT_FALSE(parse_integer_case_line("   ", 4, s8, s8).has_value());
  EXPECT_EQ(to_hex(s4, -1), "f");
  EXPECT_EQ(to_hex(s32, -2), "fffffffe");
}

TEST(IntegerCaseFile, MalformedLinesNameTheField) {
  const auto error = [](std::string_view text, const IntegerFormat& a, const IntegerFormat& b) {
    try {
      parse_integer_case_line(text, 7, a, b);
    } catch (const CaseFileError& e) {
      return std::string(e.what());
    }
    return std::string("(nothing thrown)");
  };
  EXPECT_EQ(error("1 07f 01 00000000", s8, s8), "line 7: a_0 '07f' must be 2 hex digits (s8)");
  EXPECT_EQ(error("1 7 10 00000000", s4, u4), "line 7: b_0 '10' must be 1 hex digit (u4)");
  EXPECT_EQ(error("1 7f 01 0000", s8, s8), "line 7: c '0000' must be 8 hex digits (s32)");
  EXPECT_EQ(error("1 7g 01 00000000", s8, s8), "line 7: a_0 '7g' is not hexadecimal");
  EXPECT_NE(error("2 7f 01 00000000", s8, s8).find("K = 2 needs"), std::string::npos);
  EXPECT_NE(error("x 7f 01 00000000", s8, s8).find("not a non-negative integer"),
            std::string::npos);
}

TEST(IntegerProbeCases, RandomCasesAreInRangeOverflowOftenAndIgnoreThreads) {
  for (const auto& [a, b, k] : {std::tuple{s8, u8, 32}, std::tuple{u4, u4, 64},
                                std::tuple{s4, s4, 32}, std::tuple{s8, s8, 16}}) {
    const IntegerProbeCases one = integer_probe_cases(a, b, k, 4000, 7, 1);
    const IntegerProbeCases many = integer_probe_cases(a, b, k, 4000, 7, 3);
    ASSERT_EQ(one.cases.size(), many.cases.size());
    std::size_t overflow = 0, extremes = 0, in_range = 0;
    for (std::size_t i = 0; i < 4000; ++i) {
      const IntegerMmaCase& c = one.cases[i];
      ASSERT_EQ(c.a, many.cases[i].a);
      ASSERT_EQ(c.b, many.cases[i].b);
      ASSERT_EQ(c.c, many.cases[i].c);
      ASSERT_EQ(c.a.size(), static_cast<std::size_t>(k));
      std::int64_t exact = c.c;
      bool all = true;
      for (int p = 0; p < k; ++p) {
        all = all && a.holds(c.a[p]) && b.holds(c.b[p]);
        extremes += c.a[p] == a.min_value() || c.a[p] == a.max_value();
        exact += std::int64_t{c.a[p]} * c.b[p];
      }
      in_range += all;
      overflow += exact > std::numeric_limits<std::int32_t>::max() ||
                  exact < std::numeric_limits<std::int32_t>::min();
    }
    EXPECT_EQ(in_range, 4000u);
    EXPECT_GT(overflow, 320u) << a.name << " x " << b.name;  // more than 8 % overflow
    EXPECT_GT(extremes, 4000u * k / 20);                     // more than 5 % of a at its extremes
    EXPECT_LT(overflow, 3000u);                              // and most do not
  }
}

TEST(IntegerProbeCases, CraftedPairsOverflowOnlyInPartialSums) {
  const int k = 16;
  const IntegerProbeCases crafted = integer_crafted_cases(s8, u8, k);
  std::size_t pairs = 0;
  for (std::size_t i = 0; i < crafted.cases.size(); ++i) {
    const IntegerMmaCase& c = crafted.cases[i];
    std::int64_t exact = c.c;
    std::size_t nonzero = 0;
    bool partial_leaves = false;
    for (int p = 0; p < k; ++p) {
      ASSERT_TRUE(s8.holds(c.a[p]) && u8.holds(c.b[p]));
      const std::int64_t product = std::int64_t{c.a[p]} * c.b[p];
      nonzero += product != 0;
      const std::int64_t alone = c.c + product;
      partial_leaves |= alone > std::numeric_limits<std::int32_t>::max() ||
                        alone < std::numeric_limits<std::int32_t>::min();
      exact += product;
    }
    if (crafted.names[i].find(" at k = ") == std::string::npos || nonzero != 2) continue;
    ++pairs;
    EXPECT_TRUE(partial_leaves) << crafted.names[i];
    EXPECT_LE(exact, std::numeric_limits<std::int32_t>::max()) << crafted.names[i];
    EXPECT_GE(exact, std::numeric_limits<std::int32_t>::min()) << crafted.names[i];
  }
  EXPECT_EQ(pairs, 2u * k * (k - 1));  // every ordered pair, from either end of int32
  // Unsigned operands have no negative product: no pairs, but the one-past-the-end cases.
  const IntegerProbeCases unsigned_cases = integer_crafted_cases(u8, u8, k);
  EXPECT_LT(unsigned_cases.cases.size(), 60u);
  EXPECT_GT(unsigned_cases.cases.size(), static_cast<std::size_t>(k));
}

}  // namespace
}  // namespace tcemu
