#include <gtest/gtest.h>

#include <algorithm>

#include <tcemu/cases/case_file.hpp>

namespace tcemu {
namespace {

std::string error_of(std::string_view line, const FloatFormat& in, const FloatFormat& acc) {
  try {
    parse_case_line(line, 7, in, acc);
  } catch (const CaseFileError& e) {
    EXPECT_EQ(e.line(), 7u);
    return e.what();
  }
  return "no error";
}

TEST(CaseFile, ParsesEveryOperandWidth) {
  const auto c = parse_case_line("2 3c00 BC00 4000 0001 3f800000", 1, formats::fp16, formats::fp32);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->a, (std::vector<std::uint32_t>{0x3C00, 0xBC00}));
  EXPECT_EQ(c->b, (std::vector<std::uint32_t>{0x4000, 0x0001}));
  EXPECT_EQ(c->c, 0x3F800000u);
  const auto f8 = parse_case_line("1 7e 38 3c00", 1, formats::e4m3, formats::fp16);
  ASSERT_TRUE(f8);
  EXPECT_EQ(f8->a[0], 0x7Eu);
  EXPECT_EQ(f8->c, 0x3C00u);
  const auto tf = parse_case_line("1 3f800000 3f801fff 00000000", 1, formats::tf32, formats::fp32);
  ASSERT_TRUE(tf);
  EXPECT_EQ(tf->b[0], 0x3F801FFFu);  // the container is kept; decoding drops the padding
}

TEST(CaseFile, BlankAndCommentLinesCarryNoCase) {
  EXPECT_FALSE(parse_case_line("", 1, formats::fp16, formats::fp32));
  EXPECT_FALSE(parse_case_line("   \t", 1, formats::fp16, formats::fp32));
  EXPECT_FALSE(parse_case_line("# K a b c", 1, formats::fp16, formats::fp32));
}

TEST(CaseFile, ZeroTermsIsJustC) {
  const auto c = parse_case_line("0 3f800000", 1, formats::fp16, formats::fp32);
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->a.empty());
}

TEST(CaseFile, ErrorsNameTheLineAndTheProblem) {
  EXPECT_EQ(error_of("2 3c00 3c00 3c00 3f800000", formats::fp16, formats::fp32),
            "line 7: K = 2 needs 6 fields (K, 2 a, 2 b, c) or 7 with a recorded d, found 5");
  EXPECT_EQ(error_of("x 3c00", formats::fp16, formats::fp32),
            "line 7: K 'x' is not a non-negative integer");
  EXPECT_EQ(error_of("1 3c0 3c00 3f800000", formats::fp16, formats::fp32),
            "line 7: a_0 '3c0' must be 4 hex digits (fp16)");
  EXPECT_EQ(error_of("1 3c00 3g00 3f800000", formats::fp16, formats::fp32),
            "line 7: b_0 '3g00' is not hexadecimal");
  EXPECT_EQ(error_of("1 3c00 3c00 3c00", formats::fp16, formats::fp32),
            "line 7: c '3c00' must be 8 hex digits (fp32)");
  EXPECT_EQ(error_of("1 3c00 3c00 3f800000 4000", formats::fp16, formats::fp32),
            "line 7: d '4000' must be 8 hex digits (fp32)");
  EXPECT_EQ(error_of("1 3c00 3c00 3f800000", formats::fp16, formats::fp16),
            "line 7: c '3f800000' must be 4 hex digits (fp16)");
  EXPECT_EQ(error_of("1 3c00 3c00 +f800000", formats::fp16, formats::fp32),
            "line 7: c '+f800000' is not hexadecimal");
}

// Issue 18: a K near 2^64 wrapped 2 + 2K, so the field count check passed and the parser read
// past its fields (AddressSanitizer: heap-buffer-overflow); the message must name the line and K.
TEST(CaseFile, HugeKIsRefusedNamingTheLineAndK) {
  for (const char* k : {"9223372036854775807", "9223372036854775808", "18446744073709551615"}) {
    for (const std::string rest : {"", " 3c00", " 3c00 3c00", " 3c00 3c00 3f800000"}) {
      EXPECT_EQ(error_of(k + rest, formats::fp16, formats::fp32),
                "line 7: K = " + std::string(k) + " needs 2K + 2 fields (K, " + k + " a, " + k +
                    " b, c) or 2K + 3 with a recorded d, found " +
                    std::to_string(1 + std::count(rest.begin(), rest.end(), ' ')));
    }
  }
  EXPECT_EQ(error_of("18446744073709551616 3f800000", formats::fp16, formats::fp32),
            "line 7: K '18446744073709551616' is not a non-negative integer");
}

TEST(CaseFile, RecordedResultIsOptional) {
  const auto without = parse_case_line("1 3c00 3c00 3f800000", 1, formats::fp16, formats::fp32);
  const auto with =
      parse_case_line("1 3c00 3c00 3f800000 40000000", 1, formats::fp16, formats::fp32);
  ASSERT_TRUE(without && with);
  EXPECT_FALSE(without->d);
  EXPECT_EQ(with->d, 0x40000000u);
  EXPECT_EQ(format_case_line(*with, formats::fp16, formats::fp32), "1 3c00 3c00 3f800000 40000000");
}

TEST(CaseFile, FormatIsTheInverseOfParse) {
  const std::string line = "2 3c00 bc00 4000 0001 3f800000";
  const auto c = parse_case_line(line, 1, formats::fp16, formats::fp32);
  ASSERT_TRUE(c);
  EXPECT_EQ(format_case_line(*c, formats::fp16, formats::fp32), line);
  EXPECT_EQ(to_hex(formats::e5m2, 0x7C), "7c");
  EXPECT_EQ(to_hex(formats::fp16, 0x1), "0001");
}

}  // namespace
}  // namespace tcemu
