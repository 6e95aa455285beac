// tcemu explain's topics: the built-in example of every topic byte for byte against
// data/explain/ (text; block also as Markdown and HTML), and facts computed on user values.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "cli_runner.hpp"

namespace {

using tcemu::test::Result;
using tcemu::test::run;

std::string expected(const std::string& name) {
  std::ifstream in(std::string(TCEMU_EXPLAIN_DATA) + "/" + name);
  EXPECT_TRUE(in) << "missing " << name;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool has(const Result& r, const std::string& text) {
  return r.output.find(text) != std::string::npos;
}

TEST(ExplainTopics, EveryExampleIsTheExpectedText) {
  for (const char* topic : {"ozaki", "twosum", "twoprod", "dot2", "long-accumulator", "markidis",
                            "block", "block-scaled"}) {
    const Result r = run(std::string("explain ") + topic);
    EXPECT_EQ(r.status, 0) << topic;
    EXPECT_EQ(r.output, expected(std::string(topic) + ".txt")) << topic;
  }
}

TEST(ExplainTopics, BlockExampleAsMarkdownAndHtml) {
  const Result md = run("explain block --format markdown");
  EXPECT_EQ(md.status, 0);
  EXPECT_EQ(md.output, expected("block.md"));
  const Result html = run("explain block --format=html");
  EXPECT_EQ(html.status, 0);
  EXPECT_EQ(html.output, expected("block.html"));
}

// Without a topic, explain is the ozaki topic, with today's options.
TEST(ExplainTopics, NoTopicIsOzaki) {
  const Result plain = run("explain --x 1,2 --y 3,4 --arch sm80");
  const Result named = run("explain ozaki --x 1,2 --y 3,4 --arch sm80");
  EXPECT_EQ(plain.status, 0) << plain.output;
  EXPECT_EQ(plain.output, named.output);
  EXPECT_TRUE(has(plain, "Why rho (the slice width) is what it is")) << plain.output;
  // sm80: P = 24, k = 2 (bit width 2): b = 11; int8: min((31 - 2) / 2, 6) = 6.
  EXPECT_TRUE(has(plain, "  2 (this k)   b = 11")) << plain.output;
  // k = 2^24 (bit width 25): fp16 slices would need P >= 27, int8 ones get (31 - 25) / 2 = 3.
  const Result md = run("explain --x 1,2 --y 3,4 --format markdown");
  EXPECT_TRUE(has(md, "| 16777216 | none (k too large) | - | b = 3 | 50 |")) << md.output;
  EXPECT_TRUE(has(md, "| 1048576 | b = 1 | 52 | b = 5 | 48 |")) << md.output;
}

// The example (1 + 15 x 2^-26) given as bit patterns, on sm90 against exact alignment
// and exact-rn: 3f800000, 3f800001, 3f800002.
TEST(ExplainTopics, BlockOnSm90AgainstExactAlignmentAndExactRn) {
  std::string a = "bits:3c00";
  for (int i = 0; i < 15; ++i) a += ",bits:0800";
  const Result r = run("explain block --a " + a + " --b " + a +
                       " --compare 'sm90 --alignment-bits exact,exact-rn' --format markdown");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, "| sm90 | 0 | 2^-25 | rz | 3f800000 = 1 |")) << r.output;
  EXPECT_TRUE(has(r,
                  "| sm90 --alignment-bits exact | - | exact | rz | 3f800001 = "
                  "1.0000001192092896 |"))
      << r.output;
  EXPECT_TRUE(has(r, "| exact-rn | - | exact | rn | 3f800002 = 1.000000238418579 |")) << r.output;
}

// sm80 keeps one bit less (24 fraction bits) in 8-term blocks: 1 + 2^-25 loses the 2^-25 there,
// and c enters the block aligned.
TEST(ExplainTopics, BlockOnSm80WithC) {
  const Result r =
      run("explain block --arch sm80 --a 0x1p-13 --b 0x1p-12 --c 1 "
          "--compare exact-rn --format markdown");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, "| sm80 | 0 | 2^-24 | rz | 3f800000 = 1 |")) << r.output;
  EXPECT_TRUE(has(r, "| exact-rn | - | exact | rn | 3f800000 = 1 |")) << r.output;
  EXPECT_TRUE(
      has(r, "a0 b0        +0.0000000000000000000000001 x 2^0  2.9802322387695312e-08 -> 0"))
      << r.output;
  const Result many = run("explain block --arch sm80 --a 1,1,1,1,1,1,1,1,1 --b 1,1,1,1,1,1,1,1,1");
  EXPECT_EQ(many.status, 2);
  EXPECT_TRUE(has(many, "its block fuses 8 products, the block given has 9")) << many.output;
  // Special values are decided before any arithmetic: 0 x Inf is the datapath's NaN.
  const Result nan = run("explain block --a inf --b 0 --compare exact-rn --format markdown");
  EXPECT_EQ(nan.status, 0) << nan.output;
  EXPECT_TRUE(has(nan, "| sm90 | - | - | rz | 7fffffff = NaN |")) << nan.output;
  const Result other = run("explain block --compare 'exact-rn --type bf16'");
  EXPECT_EQ(other.status, 2);
  EXPECT_TRUE(has(other, "--compare 'exact-rn --type bf16': the input and accumulator formats"))
      << other.output;
}

TEST(ExplainTopics, TwoSumOfBigAndSmall) {
  const Result r = run("explain twosum 1e16 1 --format markdown");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, "| 1 | s = RN(a + b) | 1e+16 | 4341c37937e08000 |")) << r.output;
  EXPECT_TRUE(has(r, "| 6 | e = RN(da + db) | 1 | 3ff0000000000000 |")) << r.output;
  EXPECT_TRUE(has(r, "a + b - s - e = 0 exactly")) << r.output;
  EXPECT_TRUE(has(r, "|a| >= |b|: x = a, y = b.")) << r.output;
  EXPECT_TRUE(has(r, "FastTwoSum gives the same s and e as TwoSum.")) << r.output;
}

// (1 + 2^-30)^2 = 1 + 2^-29 + 2^-60: p = 1 + 2^-29, e = 2^-60, by the FMA and by Dekker.
TEST(ExplainTopics, TwoProdErrorByFmaAndByDekker) {
  const Result r = run("explain twoprod 0x1.00000004p0 bits:3ff0000000400000 --format markdown");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, "| 1 | p = RN(a b) | 1.0000000018626451 | 3ff0000000800000 |")) << r.output;
  EXPECT_TRUE(
      has(r, "| 2 | e = fma(a, b, -p) = RN(a b - p) | 8.673617379884035e-19 | 3c30000000000000 |"))
      << r.output;
  EXPECT_TRUE(has(r, "Dekker's e equals the FMA's e.")) << r.output;
}

// x = (1e20, 3, -1e20), y = 1: the plain loop gives 0, Dot2 the exact 3.
TEST(ExplainTopics, Dot2IsTheExactDotRoundedOnAnIllConditionedSum) {
  const Result r = run("explain dot2 --x 1e20,3,-1e20 --y 1,1,1 --format markdown");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, "Dot2 equals the exact dot product rounded once")) << r.output;
  EXPECT_TRUE(has(r, "| \\|Dot2 - x.y\\| (exact, rounded once) | 0 |")) << r.output;
  EXPECT_TRUE(has(r, "| \\|plain - x.y\\| (exact, rounded once) | 3 |")) << r.output;
  EXPECT_TRUE(has(r, "Dot2 = RN(s + c)     +1.1 x 2^1  3")) << r.output;
}

TEST(ExplainTopics, LongAccumulatorCarriesAndCancels) {
  const Result carry =
      run("explain long-accumulator 0x1.fffffffffffffp27 0x1p-25 --format markdown");
  EXPECT_EQ(carry.status, 0) << carry.output;
  EXPECT_TRUE(has(carry, "| 2.9802322387695312e-08 | 1 x 2^-25 | 2123 | 33 | 34 |"))
      << carry.output;
  EXPECT_TRUE(has(carry, "| 34 | 2^28 | 0000000000000001 |")) << carry.output;
  const Result zero = run("explain long-accumulator 0.1 -0.1");
  EXPECT_EQ(zero.status, 0) << zero.output;
  EXPECT_TRUE(has(zero, "The sum is exactly zero: the result is +0.")) << zero.output;
  const Result negative = run("explain long-accumulator -1 --format markdown");
  EXPECT_TRUE(has(negative, "| -1 | -1 x 2^0 | 2148 | 33 | 34-66 |")) << negative.output;
  EXPECT_TRUE(has(negative, "| 34-66 |  | ffffffffffffffff (the sign, extended) |"))
      << negative.output;
}

// 0.1f: markidis' lo is an fp16 subnormal (9 bits) and loses 3 x 2^-27; halfhalf's keeps 11 and
// loses 2^-27.
TEST(ExplainTopics, MarkidisLoSubnormalHalfhalfScaled) {
  const Result r = run("explain markidis bits:3dcccccd --format markdown");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r,
                  "| lo | rn | 2^0 | 019a | 9 | 2.4437904357910156e-05 | "
                  "-2.2351741790771484e-08 |"))
      << r.output;
  EXPECT_TRUE(has(r,
                  "| lo | rn | 2^11 | 2a66 | 11 | 2.440810203552246e-05 | "
                  "7.450580596923828e-09 |"))
      << r.output;
}

TEST(ExplainTopics, HelpAndUsageErrors) {
  const Result help = run("explain --help");
  EXPECT_EQ(help.status, 0);
  for (const char* topic : {"ozaki", "twosum", "twoprod", "dot2", "long-accumulator", "markidis",
                            "block", "block-scaled"}) {
    EXPECT_TRUE(has(help, std::string("\n  ") + topic + " ")) << topic;
  }
  for (const char* topic : {"ozaki", "twosum", "twoprod", "dot2", "long-accumulator", "markidis",
                            "block", "block-scaled"}) {
    const Result r = run(std::string("explain ") + topic + " --help");
    EXPECT_EQ(r.status, 0) << topic;
    const std::string name = std::string(topic) == "ozaki" ? "[ozaki]" : topic;  // the default
    EXPECT_TRUE(has(r, "usage: tcemu explain " + name)) << r.output;
    EXPECT_TRUE(has(r, "--format F")) << r.output;
  }
  EXPECT_TRUE(has(run("explain block --help"), "--compare LIST"));
  EXPECT_TRUE(has(run("explain markidis --help"), "--schemes LIST"));
  const Result topic = run("explain foo");
  EXPECT_EQ(topic.status, 2);
  EXPECT_TRUE(has(topic, "unknown topic 'foo'")) << topic.output;
  const Result option = run("explain twosum --x 1");
  EXPECT_EQ(option.status, 2);
  EXPECT_TRUE(has(option, "twosum: unknown option --x")) << option.output;
  const Result format = run("explain dot2 --format pdf");
  EXPECT_EQ(format.status, 2);
  EXPECT_TRUE(has(format, "--format must be one of text, markdown, html, got 'pdf'"))
      << format.output;
  const Result value = run("explain twosum 1 bits:zz");
  EXPECT_EQ(value.status, 2);
  EXPECT_TRUE(has(value, "'bits:zz' is not a 64-bit pattern in hex")) << value.output;
  const Result extra = run("explain dot2 7");
  EXPECT_EQ(extra.status, 2);
  EXPECT_TRUE(has(extra, "dot2: unexpected value '7'")) << extra.output;
}

// explain block-scaled on a user's block: kind::mxf8f6f4 e4m3 x e2m1, each product a term with its
// scales (ue8m0 1 and 2^-10); with exact alignment the same d. Its errors name the option.
TEST(ExplainTopics, BlockScaledOnUserValues) {
  Result r = run(
      "explain block-scaled --arch sm100 --instr tcgen05.mxf8f6f4.block32 --type e4m3 --b-type "
      "e2m1 --a 1,2,0x1p-9 --b 1,-2,0.5 --scale-a 1 --scale-b 0x1p-10 --c 1e-3 --format markdown");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r,
                  "# One block-scaled tensor-core block: e4m3 x e2m1 products, ue8m0 scales, "
                  "into fp32"))
      << r.output;
  EXPECT_TRUE(has(r, "3 38 40 01 2 c 1 3a83126f 7f 75\n")) << r.output;
  EXPECT_TRUE(has(r,
                  "Term: a_k b_k x scales = -4 x 1 x 0.0009765625 = -0.00390625, aligned on "
                  "exponent -8"))
      << r.output;
  EXPECT_TRUE(has(r, "grid 2^(E - F) with F = 25: 2^-33.")) << r.output;
  EXPECT_TRUE(has(r, "d = bafccd91 = -0.0019287337781861424, the same.")) << r.output;
  // A NaN c decides d before any term (the groups' terms are then not shown), and a zero ue4m3
  // scale makes its group a zero term.
  r = run("explain block-scaled --c nan");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, "No term: a NaN or Inf in the block (c included) decides d (below)."))
      << r.output;
  EXPECT_TRUE(has(r, "A NaN or Inf decides the result before any arithmetic: 7fffffff = NaN."))
      << r.output;
  r = run("explain block-scaled --a 1,1 --b 1,1 --scale-a 0 --scale-b 1");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, "No term: a scale is zero")) << r.output;
  // Not block-scaled, a wrong count of scales, a scale the format does not hold.
  r = run("explain block-scaled --arch sm90");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r, "block-scaled: the datapath takes no scales")) << r.output;
  r = run("explain block-scaled --a 1,1 --b 1,1 --scale-a 1 --scale-b 1,1");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r, "--scale-b: K = 2 takes 1 scales (one per 16 k), got 2")) << r.output;
  r = run("explain block-scaled --a 1 --b 1 --scale-a 3.3 --scale-b 1");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r, "--scale-a: 3.3 is not a ue4m3 value")) << r.output;
  // explain block leaves block-scaled datapaths to this topic.
  r = run("explain block --arch sm100 --instr tcgen05.mxf4.block32 --type e2m1");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r, "the datapath is block-scaled: `tcemu explain block-scaled`")) << r.output;
}

}  // namespace
