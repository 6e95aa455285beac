#include <gtest/gtest.h>

#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/format.hpp>

namespace tcemu {
namespace {

TEST(Format, FieldsOfTheNamedFormats) {
  EXPECT_EQ(formats::fp16.bias(), 15);
  EXPECT_EQ(formats::fp16.min_exponent(), -14);
  EXPECT_EQ(formats::fp16.max_exponent(), 15);
  EXPECT_EQ(formats::bf16.max_exponent(), 127);
  EXPECT_EQ(formats::e4m3.max_exponent(), 8);  // 448 = 1.75 * 2^8
  EXPECT_EQ(formats::e4m3.max_significand(), 0b1110u);
  EXPECT_EQ(formats::e5m2.max_exponent(), 15);
  EXPECT_EQ(formats::tf32.container_bits(), 32);
  EXPECT_EQ(hex_digits(formats::tf32), 8);
  EXPECT_EQ(hex_digits(formats::e4m3), 2);
  EXPECT_EQ(format_by_name("bf16"), formats::bf16);
  EXPECT_FALSE(format_by_name("fp64"));
}

}  // namespace
}  // namespace tcemu
