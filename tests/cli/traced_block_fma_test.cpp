// The trace `tcemu explain block` shows (cli/explain/traced_block_fma.hpp) against block_fma.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
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

// The scaled trace (`tcemu explain block-scaled`) gives exact_scaled_block's result and labels each
// term with its group: NVFP4's 16-product groups and mxf8f6f4's single products, on random codes
// and scales (NaN, zero and subnormal scales included) and every input pair of e2m1 and e4m3.
TEST(ScaledBlockTrace, IsTheScaledBlockGroupByGroup) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<std::uint32_t> byte(0, 255);
  for (const char* instruction :
       {"tcgen05.mxf4nvf4.block16.ue4m3", "tcgen05.mxf4.block32", "tcgen05.mxf8f6f4.block32"}) {
    for (const FloatFormat& b_format : {formats::e2m1, formats::e4m3}) {
      const bool mxf4 = std::string(instruction).find("mxf4") != std::string::npos;
      if (mxf4 && b_format == formats::e4m3) continue;
      const FloatFormat& a_format = mxf4 ? formats::e2m1 : formats::e4m3;
      const Datapath dp = preset("sm100", a_format, b_format, formats::fp32, instruction);
      const BlockScaling& s = dp.block_scaling;
      for (int round = 0; round < 200; ++round) {
        const std::size_t n = 1 + byte(rng) % static_cast<std::uint32_t>(dp.block_terms);
        const std::size_t scales = (n + s.scale_block - 1) / s.scale_block;
        std::vector<Decoded> a, b, sa, sb;
        std::vector<std::uint32_t> a_bits, b_bits, sa_bits, sb_bits;
        const auto code = [&](const FloatFormat& f) {
          // Mostly zero on every fourth round, so that whole groups are zero.
          const std::uint32_t v = byte(rng) & ((1u << f.storage_bits()) - 1);
          return round % 4 == 0 && byte(rng) < 200 ? 0u : v;
        };
        for (std::size_t i = 0; i < n; ++i) {
          a_bits.push_back(code(a_format));
          b_bits.push_back(code(b_format));
          a.push_back(decode(a_format, a_bits.back()));
          b.push_back(decode(b_format, b_bits.back()));
        }
        for (std::size_t j = 0; j < scales; ++j) {
          // Scales near 1, with a NaN (ue8m0 ff, ue4m3 7f) or a zero now and then.
          sa_bits.push_back(s.scale_a == formats::ue8m0 ? 0x70 + byte(rng) % 0x20
                                                        : byte(rng) % 0x80);
          sb_bits.push_back(s.scale_b == formats::ue8m0 ? 0x70 + byte(rng) % 0x20
                                                        : byte(rng) % 0x80);
          if (byte(rng) < 4) sa_bits.back() = s.scale_a == formats::ue8m0 ? 0xff : 0x7f;
          sa.push_back(decode(s.scale_a, sa_bits.back()));
          sb.push_back(decode(s.scale_b, sb_bits.back()));
        }
        const std::uint32_t c = round % 3 == 0 ? 0 : 0x3f800000 + byte(rng);
        std::vector<Decoded> sa_each, sb_each;  // exact_scaled_block's one scale per product
        for (std::size_t i = 0; i < n; ++i) {
          sa_each.push_back(sa[i / s.scale_block]);
          sb_each.push_back(sb[i / s.scale_block]);
        }
        ScaledBlockTrace trace;
        const std::uint32_t d = traced_scaled_block(dp, a, b, sa, sb, c, trace);
        EXPECT_EQ(d, detail::exact_scaled_block(dp, a.data(), b.data(), sa_each.data(),
                                                sb_each.data(), n, c))
            << instruction << " round " << round;
        // One group per group_terms products; the terms are the groups' in order, then c.
        ASSERT_EQ(trace.groups.size(), (n + s.group_terms - 1) / s.group_terms);
        std::size_t next = 0;
        for (const ScaledBlockTrace::Group& g : trace.groups) {
          if (g.term) {
            EXPECT_EQ(*g.term, next);
            ++next;
          }
        }
        if (trace.block.special) {
          EXPECT_EQ(next, 0u);  // round_sum recorded no term, so no group names one
        } else {
          const std::size_t terms = trace.block.terms.size();
          EXPECT_TRUE(terms == next || terms == next + 1) << terms << " terms, " << next;
        }
      }
    }
  }
}

// The topic's example: the third group's 2^-20 truncates to 0 on the grid 2^-19 that the first
// two groups' scales (448 x 448, alignment exponent 16) set.
TEST(ScaledBlockTrace, RecordsTheGroupsTruncation) {
  const Datapath dp =
      preset("sm100", formats::e2m1, formats::fp32, "tcgen05.mxf4nvf4.block16.ue4m3");
  std::vector<Decoded> a(48, decode(formats::e2m1, 0)), b(48, decode(formats::e2m1, 0));
  a[0] = b[0] = b[16] = decode(formats::e2m1, 0x2);  // 1
  a[16] = decode(formats::e2m1, 0xa);                // -1
  a[32] = b[32] = decode(formats::e2m1, 0x1);        // 0.5
  const std::vector<Decoded> scales = {decode(formats::ue4m3, 0x7e), decode(formats::ue4m3, 0x7e),
                                       decode(formats::ue4m3, 0x01)};
  ScaledBlockTrace trace;
  EXPECT_EQ(traced_scaled_block(dp, a, b, scales, scales, 0, trace), 0u);
  ASSERT_EQ(trace.groups.size(), 3u);
  EXPECT_EQ(trace.groups[2].first, 32u);
  EXPECT_EQ(trace.groups[2].count, 16u);
  ASSERT_EQ(trace.groups[2].term, std::optional<std::size_t>(2));
  EXPECT_EQ(trace.block.alignment_exponent, 16);
  const BlockTrace::Term& t = trace.block.terms[2];
  EXPECT_EQ(std::ldexp(static_cast<double>(t.significand), t.lsb_exponent), 0x1p-20);
  EXPECT_EQ(t.kept, 0u);
  EXPECT_EQ(t.kept_lsb_exponent, -19);
  // Not block-scaled, or a wrong number of scales: refused.
  EXPECT_THROW(traced_scaled_block(preset("sm100", formats::e2m1, formats::fp32, "tcgen05"), a, b,
                                   scales, scales, 0, trace),
               std::invalid_argument);
  EXPECT_THROW(traced_scaled_block(dp, a, b, {scales.data(), 2}, scales, 0, trace),
               std::invalid_argument);
}

}  // namespace
}  // namespace tcemu::cli::explain
