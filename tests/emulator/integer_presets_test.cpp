// The IMMA table (integer_presets.hpp); tests/cases/integer_case_file_test.cpp checks the integer
// case format and the integer probe cases.
#include <gtest/gtest.h>

#include <limits>
#include <set>
#include <stdexcept>
#include <string>

#include <tcemu/emulator/integer_presets.hpp>

namespace tcemu {
namespace {

using namespace integer_formats;

template <typename F>
std::string thrown_message(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

std::set<std::string> names(std::string_view arch, int bits) {
  std::set<std::string> out;
  for (const IntegerInstruction& r : integer_instructions(arch, bits))
    out.insert(std::string(r.name));
  return out;
}

TEST(IntegerPresets, ShapesPerArchitectureFollowThePtxTargets) {
  EXPECT_TRUE(names("sm70", 8).empty());
  EXPECT_EQ(names("sm75", 8), (std::set<std::string>{"mma.sync.m8n8k16"}));
  EXPECT_EQ(names("sm75", 4), (std::set<std::string>{"mma.sync.m8n8k32"}));
  for (const char* arch : {"sm80", "sm89"}) {
    EXPECT_EQ(names(arch, 8), (std::set<std::string>{"mma.sync.m8n8k16", "mma.sync.m16n8k16",
                                                     "mma.sync.m16n8k32"}));
    EXPECT_EQ(names(arch, 4), (std::set<std::string>{"mma.sync.m8n8k32", "mma.sync.m16n8k32",
                                                     "mma.sync.m16n8k64"}));
  }
  EXPECT_TRUE(names("sm90", 8).contains("wgmma.m64nNk32"));
  EXPECT_FALSE(names("sm90", 4).contains("wgmma.m64nNk32"));
  EXPECT_TRUE(names("sm100", 8).contains("tcgen05.mma.kind::i8"));
}

TEST(IntegerPresets, MmaSyncIsTheLargestKShape) {
  EXPECT_EQ(integer_preset("sm90", s8, s8).instruction_k, 32);
  EXPECT_EQ(integer_preset("sm90", u4, s4).instruction_k, 64);
  EXPECT_EQ(integer_preset("sm75", s8, u8).instruction_k, 16);
  EXPECT_EQ(integer_preset("sm75", s4, s4).instruction_k, 32);
  EXPECT_EQ(integer_preset("sm80", s8, s8, "mma.sync.m16n8k16").instruction_k, 16);
  EXPECT_EQ(integer_preset("sm80", s4, s4, "mma.sync.m16n8k32").instruction_k, 32);
  EXPECT_EQ(integer_preset("sm80", s8, s8, "mma.sync.m16n8k32").instruction_k, 32);
  EXPECT_EQ(integer_preset("sm90", s8, s8, "mma.sync", false).overflow, IntegerOverflow::wrap);
  EXPECT_EQ(integer_preset("sm90", s8, s8, "mma.sync", true).overflow, IntegerOverflow::saturate);
  const IntegerDatapath mixed = integer_preset("sm90", u8, s8, "wgmma.m64nNk32", true);
  EXPECT_EQ(mixed.a_format, u8);
  EXPECT_EQ(mixed.b_format, s8);
  EXPECT_EQ(mixed.instruction_k, 32);
}

TEST(IntegerPresets, RefusalsNameWhatIsMissing) {
  EXPECT_NE(thrown_message([] { integer_preset("sm70", s8, s8); }).find("start with sm75"),
            std::string::npos);
  const std::string shape =
      thrown_message([] { integer_preset("sm75", s8, s8, "mma.sync.m16n8k32"); });
  EXPECT_NE(shape.find("it has mma.sync.m8n8k16"), std::string::npos) << shape;
  EXPECT_NE(thrown_message([] {
              integer_preset("sm90", s8, s8, "mma.sync.m16n8k64");
            }).find("mma.sync.m16n8k16, mma.sync.m16n8k32"),
            std::string::npos);
  EXPECT_NE(thrown_message([] {
              integer_preset("sm100", s8, s8, "tcgen05.mma.kind::i8", true);
            }).find("no .satfinite"),
            std::string::npos);
  EXPECT_NE(thrown_message([] { integer_preset("sm90", s4, s4, "wgmma.m64nNk32"); }).find("s4/u4"),
            std::string::npos);
  EXPECT_NE(thrown_message([] { integer_preset("sm90", s8, u4); }).find("differ in width"),
            std::string::npos);
  EXPECT_NE(thrown_message([] { integer_preset("sm91", s8, s8); }).find("unknown architecture"),
            std::string::npos);
}

TEST(IntegerPresets, NamedShapesTakeMultiplesOfTheirK) {
  EXPECT_NO_THROW(check_integer_shape_k("sm90", 8, "mma.sync.m16n8k32", 64));
  EXPECT_NO_THROW(check_integer_shape_k("sm90", 8, "mma.sync", 5));
  EXPECT_NO_THROW(check_integer_shape_k("sm100", 8, "tcgen05.mma.kind::i8", 5));
  EXPECT_NO_THROW(check_integer_shape_k("sm90", 4, "mma.sync.m16n8k64", 0));
  const std::string message =
      thrown_message([] { check_integer_shape_k("sm90", 4, "mma.sync.m16n8k64", 32); });
  EXPECT_NE(message.find("K = 32 is not a multiple of mma.sync.m16n8k64's K = 64"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("mma.sync.m16n8k32 (K 32)"), std::string::npos) << message;
  EXPECT_THROW(check_integer_shape_k("sm90", 8, "wgmma.m64nNk32", 16), std::invalid_argument);
}

}  // namespace
}  // namespace tcemu
