#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/emulator/presets.hpp>

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

namespace tcemu {
namespace {

std::string scaled_error_of(std::string_view line, const Datapath& dp) {
  try {
    parse_case_line(line, 3, dp);
  } catch (const CaseFileError& e) {
    return e.what();
  }
  return "no error";
}

// On a datapath the fields follow its formats: b in b_format(), and after c the scales of a
// block-scaled datapath, ceil(K / scale_block) of A, then of B; format_case_line is the inverse.
TEST(CaseFile, DatapathFormatsAndScales) {
  const Datapath pair = preset("sm100", formats::e4m3, formats::e2m1, formats::fp32, "tcgen05");
  const auto mixed = parse_case_line("2 3c 40 7 9 00000000", 1, pair);
  ASSERT_TRUE(mixed);
  EXPECT_EQ(mixed->b, (std::vector<std::uint32_t>{0x7, 0x9}));
  EXPECT_TRUE(mixed->scale_a.empty());
  EXPECT_EQ(format_case_line(*mixed, pair), "2 3c 40 7 9 00000000");

  const Datapath nvfp4 =
      preset("sm100", formats::e2m1, formats::fp32, "tcgen05.mxf4nvf4.block16.ue4m3");
  // K = 17: two scales each (the second covers k = 16 alone), and a recorded d.
  std::string line = "17";
  for (int i = 0; i < 34; ++i) line += " 2";
  line += " 00000000 38 40 38 30 41880000";
  const auto scaled = parse_case_line(line, 1, nvfp4);
  ASSERT_TRUE(scaled);
  EXPECT_EQ(scaled->scale_a, (std::vector<std::uint32_t>{0x38, 0x40}));
  EXPECT_EQ(scaled->scale_b, (std::vector<std::uint32_t>{0x38, 0x30}));
  EXPECT_EQ(scaled->d, std::optional<std::uint32_t>(0x41880000));
  EXPECT_EQ(format_case_line(*scaled, nvfp4), line);
  EXPECT_EQ(mma_case_element(nvfp4, *scaled), 0x41880000u);  // 16 + 2 x 0.5 = 17

  EXPECT_EQ(scaled_error_of("1 2 2 00000000 38", nvfp4),
            "line 3: K = 1 needs 6 fields (K, 1 a, 1 b, c, 1 scales of A and 1 of B, one per 16 "
            "k) or 7 with a recorded d, found 5");
  // A ue4m3 scale is a byte whose bit 7 the hardware ignores (MMA-Sim 2.1.1): b8 is 38.
  const auto signed_scale = parse_case_line(
      "16 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 41000000 b8 b8", 1,
      nvfp4);
  ASSERT_TRUE(signed_scale);
  EXPECT_EQ(signed_scale->scale_a, (std::vector<std::uint32_t>{0xb8}));
  MmaCase unsigned_scale = *signed_scale;
  unsigned_scale.scale_a = unsigned_scale.scale_b = {0x38};
  EXPECT_EQ(mma_case_element(nvfp4, *signed_scale), mma_case_element(nvfp4, unsigned_scale));
  EXPECT_EQ(scaled_error_of("1 2 2 00000000 38 1ff", nvfp4),
            "line 3: sb_0 '1ff' must be 2 hex digits (ue4m3)");
  EXPECT_EQ(scaled_error_of("1 2 2 00000000 3 38", nvfp4),
            "line 3: sa_0 '3' must be 2 hex digits (ue4m3)");
  EXPECT_EQ(scaled_error_of("1 2 22 00000000 38 38", nvfp4),
            "line 3: b_0 '22' must be 1 hex digit (e2m1)");
  EXPECT_EQ(scaled_error_of("18446744073709551615 2 2 00000000 38 38", nvfp4),
            "line 3: K = 18446744073709551615 needs 2K + 2S + 2 fields (K, 18446744073709551615 "
            "a, 18446744073709551615 b, c, S scales of A and S of B, one per 16 k) or 2K + 2S + 3 "
            "with a recorded d, found 6");
  // FP6 codes are 6 bits in two digits: 40 is not one.
  const Datapath fp6 = preset("sm100", formats::e3m2, formats::fp32, "tcgen05");
  EXPECT_EQ(scaled_error_of("1 3f 40 00000000", fp6),
            "line 3: b_0 '40' is not a bit pattern of e3m2 (6 bits: at most 3f)");
}

}  // namespace
}  // namespace tcemu
