// tcemu's validation workbench (tcemu::cases) from a project of its own: the kernel-test check on
// host views, with the sm90 datapath, on a result of the right bits and on one a step away.
#include <gtest/gtest.h>

#include <cstdint>

#include <tcemu/cases/gemm_check.hpp>
#include <tcemu/emulator/presets.hpp>

namespace {

// A (1 x 2) B (2 x 1) + C, whose sm90 result is 1 (0x3f800000) and round to nearest 1 + 2^-23.
TEST(ConsumerGemmCheck, PassesTheDatapathsBitsAndReportsAnUlpAway) {
  const std::uint16_t a[2] = {0x0c00, 0x0c00};  // fp16 2^-12, 2^-12
  const std::uint16_t b[2] = {0x0c00, 0x0800};  // fp16 2^-12, 2^-13
  const std::uint32_t c = 0x3f800000;           // fp32 1
  const auto bytes = [](const void* p) { return static_cast<const unsigned char*>(p); };
  using tcemu::formats::fp16, tcemu::formats::fp32, tcemu::Layout;
  const tcemu::Datapath datapath = tcemu::preset("sm90", fp16, fp32);
  const auto check = [&](std::uint32_t d) {
    return tcemu::check_gemm(
        datapath, {.alpha = 1, .beta = 1, .c_input = tcemu::CInput::initial_accumulator},
        {bytes(a), fp16, 1, 2, 2, Layout::row_major}, {bytes(b), fp16, 2, 1, 1, Layout::row_major},
        tcemu::ConstMatrixView{bytes(&c), fp32, 1, 1, 1, Layout::row_major},
        {bytes(&d), fp32, 1, 1, 1, Layout::row_major});
  };
  EXPECT_TRUE(check(0x3f800000).passed());
  const tcemu::GemmCheck wrong = check(0x3f800001);
  EXPECT_FALSE(wrong.passed());
  EXPECT_EQ(wrong.comparison.differing, 1);
  EXPECT_EQ(wrong.comparison.max_ulps, 1u);
  EXPECT_FALSE(wrong.report.empty());
}

}  // namespace
