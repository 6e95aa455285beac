// tcemu mma, validate, presets and probe with integer formats (IMMA), as a user runs them.
#include <gtest/gtest.h>

#include <string>

#include "cli_runner.hpp"

namespace {

using tcemu::test::Result;
using tcemu::test::run;
using tcemu::test::TempFile;

TEST(IntegerCli, MmaWrapsOrSaturates) {
  // 127 * 127 = 0x3f01 on c = INT32_MAX: wraps to 0x80003f00, .satfinite keeps 0x7fffffff.
  const Result wrap = run("mma --type s8 --acc s32", "1 7f 7f 7fffffff\n");
  EXPECT_EQ(wrap.status, 0) << wrap.output;
  EXPECT_EQ(wrap.output, "80003f00\n");
  const Result sat = run("mma --type s8 --satfinite", "1 7f 7f 7fffffff\n");
  EXPECT_EQ(sat.status, 0) << sat.output;
  EXPECT_EQ(sat.output, "7fffffff\n");
  // s8 x u8: 127 * 1 + (-128) * 255 = -32513 on 0x7ffffffe.
  const Result mixed = run("mma --type s8 --b-type u8 --arch sm80", "2 7f 80 01 ff 7ffffffe\n");
  EXPECT_EQ(mixed.output, "7fff80fd\n");
  // s4 x u4, one hex digit each: -8 * 15 + 7 * 1 = -113.
  const Result four = run("mma --type s4 --b-type u4", "2 8 7 f 1 00000000\n");
  EXPECT_EQ(four.output, "ffffff8f\n");
}

TEST(IntegerCli, BadInputIsRefusedNamingIt) {
  const Result digits = run("mma --type s8", "1 07f 01 00000000\n");
  EXPECT_EQ(digits.status, 2);
  EXPECT_NE(digits.output.find("line 1: a_0 '07f' must be 2 hex digits (s8)"), std::string::npos)
      << digits.output;
  const Result s4 = run("mma --type s4", "1 7f 1 00000000\n");
  EXPECT_EQ(s4.status, 2);
  EXPECT_NE(s4.output.find("a_0 '7f' must be 1 hex digit (s4)"), std::string::npos) << s4.output;
  const Result float_acc = run("mma --type s8 --acc fp32", "");
  EXPECT_EQ(float_acc.status, 2);
  EXPECT_NE(float_acc.output.find("its accumulator is s32, got --acc fp32"), std::string::npos);
  const Result float_type = run("mma --type fp16 --acc s32", "");
  EXPECT_EQ(float_type.status, 2);
  EXPECT_NE(float_type.output.find("--type must be s8 u8 s4 u4, got 'fp16'"), std::string::npos);
  const Result shape = run("mma --type u4 --arch sm75 --instr mma.sync.m16n8k64", "");
  EXPECT_EQ(shape.status, 2);
  EXPECT_NE(shape.output.find("it has mma.sync.m8n8k32"), std::string::npos) << shape.output;
  const Result volta = run("mma --type s8 --arch sm70", "");
  EXPECT_EQ(volta.status, 2);
  EXPECT_NE(volta.output.find("sm70 has no integer MMA"), std::string::npos);
  const Result sat = run("mma --type fp16 --satfinite", "");
  EXPECT_EQ(sat.status, 2);
  EXPECT_NE(sat.output.find("--satfinite applies to integer MMA"), std::string::npos);
  const Result widths = run("mma --type s8 --b-type u4", "");
  EXPECT_EQ(widths.status, 2);
  EXPECT_NE(widths.output.find("differ in width"), std::string::npos) << widths.output;
  const Result tcgen =
      run("mma --type s8 --arch sm100 --instr tcgen05.mma.kind::i8 --satfinite", "");
  EXPECT_EQ(tcgen.status, 2);
  EXPECT_NE(tcgen.output.find("has no .satfinite"), std::string::npos) << tcgen.output;
  const Result k = run("mma --type s8 --instr mma.sync.m16n8k16", "1 01 01 00000000\n");
  EXPECT_EQ(k.status, 2);
  EXPECT_NE(k.output.find("line 1: K = 1 is not a multiple of mma.sync.m16n8k16's K = 16; sm90 "
                          "has mma.sync.m8n8k16 (K 16)"),
            std::string::npos)
      << k.output;
  EXPECT_EQ(run("mma --type s8", "1 01 01 00000000\n").output, "00000001\n");  // any K
  const Result override = run("mma --type s8 --block-terms 4", "");
  EXPECT_EQ(override.status, 2);
  EXPECT_NE(override.output.find("--block-terms is a floating-point datapath option"),
            std::string::npos);
}

TEST(IntegerCli, ValidateCountsMismatchesAndPresetsListIntegerRows) {
  const TempFile good("imma_good.txt", "# crafted: overflow by one\n1 01 01 7fffffff 80000000\n");
  const Result ok = run("validate --type s8 --acc s32 " + good.path.string());
  EXPECT_EQ(ok.status, 0) << ok.output;
  EXPECT_NE(ok.output.find("1 cases, 0 mismatches"), std::string::npos) << ok.output;
  const Result sat = run("validate --type s8 --acc s32 --satfinite " + good.path.string());
  EXPECT_EQ(sat.status, 1) << sat.output;
  EXPECT_NE(sat.output.find("(overflow by one): recorded 80000000, emulated 7fffffff"),
            std::string::npos)
      << sat.output;
  const Result presets = run("presets");
  EXPECT_EQ(presets.status, 0);
  EXPECT_NE(presets.output.find("sm90 mma.sync.m16n8k32: s8/u8 x s8/u8 -> s32"), std::string::npos);
  EXPECT_NE(presets.output.find("SASS IMMA.16832.S8.S8 (H100)"), std::string::npos);
  EXPECT_NE(presets.output.find("sm100 tcgen05.mma.kind::i8"), std::string::npos);
  const Result one = run("presets --type u4 --b-type s4 --satfinite");
  EXPECT_EQ(one.output,
            "u4 x s4 -> s32, K = 64 per instruction, saturate (.satfinite: clamp to "
            "int32 once per instruction)\n");
}

}  // namespace
