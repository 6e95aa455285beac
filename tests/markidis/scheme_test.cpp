#include <gtest/gtest.h>

#include <string>

#include <tcemu/emulator/presets.hpp>
#include <tcemu/markidis/presets.hpp>
#include <tcemu/markidis/scheme.hpp>

namespace tcemu::markidis {
namespace {

// The message of the std::invalid_argument `f` throws, or "" (and a failure) when it throws none.
template <typename F>
std::string message_of(F f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "no std::invalid_argument";
  return "";
}

TEST(Scheme, EveryNamedSchemeIsValidAndRunsOnItsPresets) {
  for (std::string_view name : scheme_names()) {
    const Scheme s = scheme_by_name(name);
    EXPECT_EQ(s.name, name);
    EXPECT_NO_THROW(validate(s)) << name;
    for (std::string_view arch : {"sm80", "sm90", "exact-rn", "exact-rz"}) {
      EXPECT_NO_THROW(validate(s, scheme_datapath(s, arch))) << name << " " << arch;
    }
  }
  const std::string unknown = message_of([] { scheme_by_name("halfhalv"); });
  EXPECT_NE(unknown.find("halfhalv"), std::string::npos);
  EXPECT_NE(unknown.find("bf16x9"), std::string::npos);  // the known names are listed
}

TEST(Scheme, PresetsHaveThePublishedStructure) {
  const Scheme hh = scheme_by_name("halfhalf");
  ASSERT_EQ(hh.groups.size(), 2u);
  EXPECT_EQ(group_weight(hh, hh.groups[0]), 0);
  EXPECT_EQ(group_weight(hh, hh.groups[1]), 11);
  EXPECT_EQ(hh.groups[0].takeout_every_instructions, 1);
  EXPECT_EQ(hh.groups[1].takeout_every_instructions, 0);
  EXPECT_EQ(scheme_by_name("markidis").groups[0].products.size(), 3u);
  EXPECT_EQ(scheme_by_name("markidis4").groups[0].products.size(), 4u);
  EXPECT_EQ(scheme_by_name("bf16x3").groups[0].products.size(), 3u);
  EXPECT_EQ(scheme_by_name("bf16x9").groups[0].products.size(), 9u);
  EXPECT_EQ(scheme_by_name("3xtf32").parts[0].rounding, Rounding::toward_zero);
  EXPECT_EQ(describe(hh),
            "halfhalf: 2 fp16 parts (rn, rn x2^11); acc0 = 0*0 out every 1 instr; acc1 = 0*1 1*0");
}

TEST(Scheme, TakeoutIntervalChangesOnlyTheGroupsThatTakeOut) {
  const Scheme tf = with_takeout_interval(scheme_by_name("tf32tf32"), 2);
  EXPECT_EQ(tf.groups[0].takeout_every_instructions, 2);
  EXPECT_EQ(tf.groups[1].takeout_every_instructions, 0);  // the corrections stay inside
  EXPECT_EQ(describe(tf),
            "tf32tf32: 2 tf32 parts (rn, rn); acc0 = 0*0 out every 2 instr; acc1 = 0*1 1*0");
  EXPECT_NE(message_of([] { with_takeout_interval(scheme_by_name("halfhalf"), 0); }).find(">= 1"),
            std::string::npos);
  EXPECT_NE(message_of([] {
              with_takeout_interval(scheme_by_name("3xtf32"), 2);
            }).find("no accumulator group leaves the Tensor Core"),
            std::string::npos);
}

TEST(Scheme, ValidationNamesTheProblem) {
  Scheme s = scheme_by_name("halfhalf");
  s.groups[1].products.push_back({0, 0});  // weight 0 in the 2^11 group, and listed twice
  EXPECT_NE(message_of([&] { validate(s); }).find("listed twice"), std::string::npos);
  s = scheme_by_name("halfhalf");
  s.groups[1].products.push_back({1, 1});  // weight 22 in the 2^11 group
  EXPECT_NE(message_of([&] { validate(s); }).find("same scaling"), std::string::npos);
  s = scheme_by_name("markidis");
  s.groups[0].products.push_back({2, 0});
  EXPECT_NE(message_of([&] { validate(s); }).find("outside 0..1"), std::string::npos);
  s = scheme_by_name("markidis");
  s.groups[0].takeout_every_instructions = -1;
  EXPECT_NE(message_of([&] { validate(s); }).find("takeout"), std::string::npos);
  s = scheme_by_name("markidis");
  s.part_format = formats::e4m3;
  EXPECT_NE(message_of([&] { validate(s); }).find("e4m3"), std::string::npos);
  s = scheme_by_name("markidis");
  s.groups.clear();
  EXPECT_NE(message_of([&] { validate(s); }).find("no accumulator groups"), std::string::npos);
  s = scheme_by_name("markidis");
  s.groups[0].products.clear();
  EXPECT_NE(message_of([&] { validate(s); }).find("no products"), std::string::npos);

  const Scheme hh = scheme_by_name("halfhalf");
  EXPECT_NE(message_of([&] {
              validate(hh, preset("sm90", formats::bf16, formats::fp32));
            }).find("input format is bf16"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              validate(hh, preset("sm90", formats::fp16, formats::fp16));
            }).find("accumulator"),
            std::string::npos);
}

}  // namespace
}  // namespace tcemu::markidis
