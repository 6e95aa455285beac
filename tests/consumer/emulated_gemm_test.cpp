// tcemu's emulated GEMM from a project of its own: a product whose bits on the H100's datapath
// differ from round-to-nearest, so a wrong datapath cannot pass.
#include <gtest/gtest.h>

#include <cstdint>

#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/presets.hpp>

namespace {

// D (1 x 1) = A (1 x 2) B (2 x 1) + C through `datapath`, C entering as the initial accumulator.
std::uint32_t one_element(const tcemu::Datapath& datapath) {
  const std::uint16_t a[2] = {0x0c00, 0x0c00};  // fp16 2^-12, 2^-12
  const std::uint16_t b[2] = {0x0c00, 0x0800};  // fp16 2^-12, 2^-13
  const std::uint32_t c = 0x3f800000;           // fp32 1
  std::uint32_t d = 0;
  const auto bytes = [](const void* p) { return static_cast<const unsigned char*>(p); };
  using tcemu::formats::fp16, tcemu::formats::fp32, tcemu::Layout;
  tcemu::emulated_gemm(
      datapath, {.alpha = 1, .beta = 1, .c_input = tcemu::CInput::initial_accumulator},
      {bytes(a), fp16, 1, 2, 2, Layout::row_major}, {bytes(b), fp16, 2, 1, 1, Layout::row_major},
      tcemu::ConstMatrixView{bytes(&c), fp32, 1, 1, 1, Layout::row_major},
      {{reinterpret_cast<unsigned char*>(&d), fp32, 1, 1, 1, Layout::row_major}});
  return d;
}

// 1 + 2^-24 + 2^-25 is 1 + 0.75 ulp: the sm90 datapath truncates it to 1 (0x3f800000); the same
// hardware with its block results rounded to nearest gives 1 + 2^-23 (0x3f800001).
TEST(ConsumerEmulatedGemm, Sm90TruncatesWhereRoundingToNearestRoundsUp) {
  tcemu::Datapath datapath = tcemu::preset("sm90", tcemu::formats::fp16, tcemu::formats::fp32);
  EXPECT_EQ(one_element(datapath), 0x3f800000u);
  datapath.block_rounding = tcemu::Rounding::nearest_even;
  EXPECT_EQ(one_element(datapath), 0x3f800001u);
}

}  // namespace
