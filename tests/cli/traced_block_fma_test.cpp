// The trace `tcemu explain block` shows (cli/explain/traced_block_fma.hpp) against block_fma.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <vector>

#include <tcemu/emulator/block_fma.hpp>
#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/presets.hpp>

#include "explain/traced_block_fma.hpp"

namespace tcemu::cli::explain {
namespace {

// block_fma's trace (BlockTrace, which `tcemu explain block` shows) records the steps of the same
// computation: 1 + 15 x 2^-26 (issue 19) on sm90 and with exact alignment.
TEST(BlockTrace, RecordsTheTruncationAndTheExactSum) {
  std::vector<Decoded> a(16, decode(formats::fp16, 0x0800));  // 2^-13
  a[0] = decode(formats::fp16, 0x3C00);                       // 1
  Datapath dp = preset("sm90", formats::fp16, formats::fp32);
  BlockTrace trace;
  EXPECT_EQ(traced_block_fma(dp, a, a, 0, trace), 0x3F800000u);
  EXPECT_EQ(trace.result, block_fma(dp, a, a, 0));
  ASSERT_EQ(trace.terms.size(), 16u);  // c = +0 is no term
  EXPECT_EQ(trace.alignment_exponent, 0);
  // 1 = 2^20 x 2^-20 is kept whole; 2^-26 = 2^20 x 2^-46 truncates to 0 on the grid 2^-25.
  EXPECT_EQ(trace.terms[0].kept, trace.terms[0].significand);
  EXPECT_EQ(trace.terms[0].kept_lsb_exponent, -20);
  EXPECT_EQ(trace.terms[1].significand, 1u << 20);
  EXPECT_EQ(trace.terms[1].lsb_exponent, -46);
  EXPECT_EQ(trace.terms[1].kept, 0u);
  EXPECT_EQ(trace.terms[1].kept_lsb_exponent, -25);
  EXPECT_EQ(std::ldexp(static_cast<double>(trace.sum.significand), trace.sum.lsb_exponent), 1.0);

  dp.alignment_fraction_bits = std::nullopt;
  EXPECT_EQ(traced_block_fma(dp, a, a, 0, trace), 0x3F800001u);
  EXPECT_FALSE(trace.alignment_exponent.has_value());
  EXPECT_EQ(trace.terms[1].kept, trace.terms[1].significand);
  EXPECT_FALSE(trace.sum.sticky);
  EXPECT_EQ(std::ldexp(static_cast<double>(trace.sum.significand), trace.sum.lsb_exponent),
            1 + 15 * 0x1p-26);
}

}  // namespace
}  // namespace tcemu::cli::explain
