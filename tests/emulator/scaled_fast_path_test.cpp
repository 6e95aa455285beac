// The emulated GEMM's fast paths for Blackwell's datapaths against the model (mma_element with
// its scales), bit for bit: kind::f8f6f4 pairs and kind::mxf8f6f4 (group_terms 1) through the
// binary64 fast path with B in its own format and the operands scaled at packing time
// (binary64_block.hpp), kind::mxf4 and mxf4nvf4 (group_terms 16) through the group formulation
// (scaled_groups.hpp) that the GPU's group kernel runs as well. Every block-scaled and mixed-format
// preset, overridden fields (ue4m3 scales with G = 1, G = 4, 8 and 32, e2m3 elements, a narrow
// grid, RN, c after the blocks, ZeroSign::ieee, NaN scales ignored for zero groups), inputs that
// cancel, extreme and NaN and zero scales, Inf and NaN in C, k ending in a partial instruction.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <tcemu/emulator/binary64_block.hpp>
#include <tcemu/emulator/block_fma.hpp>
#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/emulator/scaled_groups.hpp>
#include <tcemu/test/codes.hpp>
#include <tcemu/test/same_bits.hpp>

namespace tcemu {
namespace {

enum class Inputs { random, cancellation, special };

using test::Codes;

// Scale codes: near 1 (random), any code but NaN (cancellation), any code with NaN and zero
// frequent (special).
void fill_scales(Inputs kind, Codes& x, std::mt19937_64& rng) {
  const bool e8m0 = x.format == formats::ue8m0;
  const std::uint32_t nan = e8m0 ? 0xFF : 0x7F, one = e8m0 ? 127 : 0x38;
  for (std::uint32_t& w : x.words) {
    w = static_cast<std::uint32_t>(rng() % nan);
    if (kind == Inputs::random) w = one - 6 + static_cast<std::uint32_t>(rng() % 13);
    if (kind == Inputs::special && rng() % 6 == 0) w = rng() % 2 == 0 ? nan : (e8m0 ? 0 : 0x80);
  }
}

// One GEMM of emulated_gemm against mma_element: m x n x k with C as the initial accumulator.
::testing::AssertionResult same_as_model(const Datapath& dp, Inputs kind, std::mt19937_64& rng,
                                         std::int64_t m = 13, std::int64_t n = 9,
                                         std::int64_t k = -1) {
  if (k < 0) k = 2 * dp.instruction_k + 7;
  Codes a(dp.input, m, k), b(dp.b_format(), k, n), c(dp.accumulator, m, n);
  const auto code = [&](const FloatFormat& f) {
    std::uint32_t x = static_cast<std::uint32_t>(rng()) & ((1u << f.storage_bits()) - 1);
    // No Inf or NaN operands, except in the special kind (the group formulation's formats have
    // none; the binary64 path falls back for them).
    if (kind != Inputs::special) {
      const ValueClass vc = decode(f, x).value_class;
      if (vc == ValueClass::infinity || vc == ValueClass::nan) x = 0;
    }
    return x;
  };
  for (std::uint32_t& w : a.words) w = code(dp.input);
  for (std::uint32_t& w : b.words) w = code(dp.b_format());
  if (kind == Inputs::cancellation) {  // pairs of k whose products cancel
    for (std::int64_t p = 0; p + 1 < k; p += 2) {
      for (std::int64_t i = 0; i < m; ++i) a.at(i, p + 1) = a.at(i, p);
      for (std::int64_t j = 0; j < n; ++j) {
        b.at(p + 1, j) = b.at(p, j) ^ (dp.b_format().sign_mask() << dp.b_format().padding_bits);
      }
    }
  }
  // Runs of zeros of random sign (whole groups of products vanish); row 0 of A all -0 and
  // column 0 of B all +0, with C(0, 0) = -0 below: every term of that element is a negative zero.
  if (kind != Inputs::random) {
    const int run = dp.block_scaled() ? dp.block_scaling.group_terms : 8;
    const auto zero_runs = [&](Codes& x, bool by_rows) {
      const std::uint32_t sign = x.format.sign_mask() << x.format.padding_bits;
      const std::int64_t lines = by_rows ? x.rows : x.cols;
      for (std::int64_t l = 0; l < lines; ++l) {
        for (std::int64_t p0 = 0; p0 < k; p0 += run) {
          if (l != 0 && rng() % 3 != 0) continue;
          for (std::int64_t p = p0; p < std::min(k, p0 + run); ++p) {
            const std::uint32_t z = l == 0 ? (by_rows ? sign : 0) : (rng() % 2 == 0 ? sign : 0);
            (by_rows ? x.at(l, p) : x.at(p, l)) = z;
          }
        }
      }
    };
    zero_runs(a, true);
    zero_runs(b, false);
  }
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      std::uint32_t x = static_cast<std::uint32_t>(rng()) & 0x3FFFFFFFu;  // |x| < 2
      x = (x & 0x807FFFFFu) | ((100 + static_cast<std::uint32_t>(rng() % 56)) << 23);
      if (rng() % 4 == 0) x |= 0x80000000u;
      if (kind == Inputs::special && rng() % 10 == 0) {
        const std::uint32_t specials[] = {0x7F800000u, 0xFF800000u, 0x7FC00000u, 0x80000000u, 0};
        x = specials[rng() % 5];
      }
      if (kind != Inputs::random && i == 0 && j < 2) x = j == 0 ? 0x80000000u : 0;
      c.at(i, j) = dp.accumulator == formats::fp32
                       ? x
                       : convert(formats::fp32, formats::fp16, x, Rounding::nearest_even);
    }
  }
  const std::int64_t s =
      dp.block_scaled() ? static_cast<std::int64_t>(scale_count(dp, static_cast<std::size_t>(k)))
                        : 0;
  Codes sa(dp.block_scaling.scale_a, m, s), sb(dp.block_scaling.scale_b, s, n);
  if (dp.block_scaled()) {
    fill_scales(kind, sa, rng);
    fill_scales(kind, sb, rng);
  }
  std::vector<std::uint32_t> expected;
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      std::vector<std::uint32_t> row, col, row_scales, col_scales;
      for (std::int64_t p = 0; p < k; ++p) {
        row.push_back(a.at(i, p));
        col.push_back(b.at(p, j));
      }
      for (std::int64_t q = 0; q < s && dp.block_scaled(); ++q) {
        row_scales.push_back(sa.at(i, q));
        col_scales.push_back(sb.at(q, j));
      }
      expected.push_back(dp.block_scaled()
                             ? mma_element(dp, row, col, c.at(i, j), row_scales, col_scales)
                             : mma_element(dp, row, col, c.at(i, j)));
    }
  }
  std::vector<unsigned char> d_bytes(static_cast<std::size_t>(m * n) *
                                     container_bytes(dp.accumulator));
  const MatrixView dv{d_bytes.data(), dp.accumulator, m, n, n, Layout::row_major};
  const GemmOptions o{.beta = 1.0f, .c_input = CInput::initial_accumulator, .threads = 2};
  for (Codes* x : {&a, &b, &c, &sa, &sb}) x->pack();
  if (dp.block_scaled()) {
    emulated_gemm(dp, o, a.view(), b.view(), BlockScales{sa.view(), sb.view()}, c.view(), dv);
  } else {
    emulated_gemm(dp, o, a.view(), b.view(), c.view(), dv);
  }
  std::vector<std::uint32_t> got;
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) got.push_back(dv.get(i, j));
  }
  const auto same = test::same_bits(expected, got, m, n, {.order = test::Order::row_major});
  if (same) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << describe(dp) << ", inputs " << static_cast<int>(kind) << ", k = " << k << ":\n"
         << same.message();
}

TEST(ScaledFastPath, EveryBlackwellPresetOfScalesOrTwoFormatsGivesTheModelsBits) {
  std::mt19937_64 rng(35);
  int groups = 0, binary64 = 0;
  for (const PresetEntry& entry : all_presets()) {
    const Datapath& dp = entry.datapath;
    if (!dp.block_scaled() && !dp.has_input_b) continue;
    // Every one of them takes a fast path (and the GPU's group or binary64 kernel).
    const bool by_groups = detail::scaled_groups_apply(dp);
    EXPECT_TRUE(by_groups || detail::binary64_applies(dp))
        << entry.arch << " " << entry.instruction;
    EXPECT_EQ(by_groups, dp.block_scaled() && dp.block_scaling.group_terms > 1);
    (by_groups ? groups : binary64) += 1;
    for (const Inputs kind : {Inputs::random, Inputs::cancellation, Inputs::special}) {
      EXPECT_TRUE(same_as_model(dp, kind, rng)) << entry.arch << " " << entry.instruction;
    }
  }
  EXPECT_EQ(groups, 8);  // four kind::mxf4 / mxf4nvf4 rows on each architecture
  EXPECT_GT(binary64, 100);
}

// decode() reads the low container_bits() of a code; an FP6 or FP4 code held in a byte with
// stray high bits reads the same through the fast path, also from its table of every pattern
// (used once the inputs outnumber the patterns), as through mma_element.
TEST(ScaledFastPath, BitsAboveANarrowCodeAreIgnoredAsDecodeIgnoresThem) {
  const Datapath dp = preset("sm100", formats::e2m3, formats::e2m1, formats::fp32, "tcgen05");
  ASSERT_TRUE(detail::binary64_applies(dp));
  std::mt19937_64 rng(37);
  const std::int64_t m = 40, n = 24, k = 64;
  Codes a(dp.input, m, k), b(dp.b_format(), k, n);
  for (std::uint32_t& w : a.words) w = static_cast<std::uint32_t>(rng() & 0xFF);
  for (std::uint32_t& w : b.words) w = static_cast<std::uint32_t>(rng() & 0xFF);
  std::vector<unsigned char> d(static_cast<std::size_t>(m * n * 4));
  const MatrixView dv{{d.data(), formats::fp32, m, n, n, Layout::row_major}};
  a.pack();
  b.pack();
  emulated_gemm(dp, GemmOptions{}, a.view(), b.view(), std::nullopt, dv);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      std::vector<std::uint32_t> row(static_cast<std::size_t>(k)), col(row.size());
      for (std::int64_t p = 0; p < k; ++p) {
        row[static_cast<std::size_t>(p)] = a.at(i, p);
        col[static_cast<std::size_t>(p)] = b.at(p, j);
      }
      ASSERT_EQ(dv.get(i, j), mma_element(dp, row, col, 0)) << i << ", " << j;
    }
  }
}

TEST(ScaledFastPath, EveryOverriddenFieldGivesTheModelsBits) {
  std::mt19937_64 rng(36);
  const Datapath nvfp4 =
      preset("sm100", formats::e2m1, formats::fp32, "tcgen05.mxf4nvf4.block16.ue4m3");
  const Datapath mxfp4 = preset("sm100", formats::e2m1, formats::fp32, "tcgen05.mxf4.block32");
  const Datapath mxfp8 =
      preset("sm100", formats::e4m3, formats::e4m3, formats::fp32, "tcgen05.mxf8f6f4.block32");
  std::vector<Datapath> variants;
  auto with = [&](Datapath dp, auto change) {
    change(dp);
    validate(dp);
    variants.push_back(dp);
  };
  for (const Datapath& base : {nvfp4, mxfp4}) {
    with(base, [](Datapath& dp) { dp.zero_sign = ZeroSign::ieee; });
    with(base,
         [](Datapath& dp) { dp.block_scaling.nan_scale = NanScale::ignored_for_zero_products; });
    with(base, [](Datapath& dp) { dp.block_scaling.group_terms = 4; });
    with(base, [](Datapath& dp) { dp.block_scaling.group_terms = 8; });
    with(base, [](Datapath& dp) { dp.alignment_fraction_bits = 3; });  // terms truncated
    with(base, [](Datapath& dp) { dp.block_rounding = Rounding::nearest_even; });
    with(base, [](Datapath& dp) { dp.block_result_precision = 11; });
    with(base, [](Datapath& dp) { dp.c_entry = AccumulatorEntry::added_after_blocks; });
    with(base, [](Datapath& dp) { dp.alignment_floor = kNoAlignmentFloor; });
    with(base, [](Datapath& dp) { dp.input = formats::e2m3; });  // codes up to 60
    with(base, [](Datapath& dp) { dp.instruction_k = 128; });    // two blocks an instruction
    with(base, [](Datapath& dp) {
      dp.accumulator = formats::fp16, dp.nan_bits = 0x7FFF, dp.block_result_precision = 11;
    });
  }
  with(mxfp4, [](Datapath& dp) { dp.block_scaling.group_terms = 32; });
  with(mxfp4, [](Datapath& dp) { dp.block_scaling.scale_b = formats::ue4m3; });
  with(mxfp8,
       [](Datapath& dp) { dp.block_scaling.scale_a = dp.block_scaling.scale_b = formats::ue4m3; });
  with(mxfp8, [](Datapath& dp) { dp.zero_sign = ZeroSign::ieee; });
  with(mxfp8, [](Datapath& dp) { dp.input_b = formats::e2m1, dp.has_input_b = true; });
  with(mxfp8, [](Datapath& dp) { dp.alignment_fraction_bits = 3; });
  for (const Datapath& dp : variants) {
    EXPECT_TRUE(detail::scaled_groups_apply(dp) || detail::binary64_applies(dp)) << describe(dp);
    for (const Inputs kind : {Inputs::random, Inputs::cancellation, Inputs::special}) {
      EXPECT_TRUE(same_as_model(dp, kind, rng));
    }
  }
}

// Sizes: k of one partial group, one partial block, whole instructions; a single element.
TEST(ScaledFastPath, PartialGroupsAndBlocksGiveTheModelsBits) {
  std::mt19937_64 rng(37);
  const Datapath nvfp4 =
      preset("sm120", formats::e2m1, formats::fp32, "mma.sync.m16n8k64.mxf4nvf4.block16.ue4m3");
  for (const std::int64_t k : {1, 5, 16, 17, 63, 64, 65, 200}) {
    EXPECT_TRUE(same_as_model(nvfp4, Inputs::special, rng, 7, 5, k));
    EXPECT_TRUE(same_as_model(nvfp4, Inputs::random, rng, 1, 1, k));
  }
}

// group_block (the composition the GPU's group kernel runs) against exact_scaled_block, one block
// at a time: groups of random, cancelling, all-negative-zero and mixed-sign-zero products, scales
// zero, NaN, subnormal, near 1 or anywhere, c +-0 or random, under both zero-sign rules and both
// NaN-scale rules, so that the rare combinations (a zero result whose sign a zero-scaled negative
// group decides) come up.
TEST(ScaledGroups, GroupBlockGivesTheBitsOfExactScaledBlock) {
  std::mt19937_64 rng(39);
  const Datapath nvfp4 =
      preset("sm100", formats::e2m1, formats::fp32, "tcgen05.mxf4nvf4.block16.ue4m3");
  const Datapath mxfp4 = preset("sm100", formats::e2m1, formats::fp32, "tcgen05.mxf4.block32");
  int zeros = 0, negative_zeros = 0;
  for (Datapath dp : {nvfp4, mxfp4}) {
    for (const ZeroSign zero_sign : {ZeroSign::ieee, ZeroSign::positive}) {
      for (const NanScale nan : {NanScale::poisons_result, NanScale::ignored_for_zero_products}) {
        dp.zero_sign = zero_sign;
        dp.block_scaling.nan_scale = nan;
        const detail::Binary64Grid g = detail::binary64_grid(dp);
        const int group = dp.block_scaling.group_terms, groups = dp.block_terms / group;
        const FloatFormat& scale = dp.block_scaling.scale_a;
        const bool e8m0 = scale == formats::ue8m0;
        for (int trial = 0; trial < 20000; ++trial) {
          std::vector<std::uint32_t> a(static_cast<std::size_t>(dp.block_terms)), b(a.size());
          std::vector<std::uint32_t> sa(static_cast<std::size_t>(groups)), sb(sa.size());
          for (int q = 0; q < groups; ++q) {
            const auto kind = rng() % 4;
            for (int i = q * group; i < (q + 1) * group; ++i) {
              const auto u = static_cast<std::size_t>(i);
              a[u] = static_cast<std::uint32_t>(rng() % 16);
              b[u] = static_cast<std::uint32_t>(rng() % 16);
              if (kind == 1 && (i - q * group) % 2 == 1) {  // pairs that cancel
                a[u] = a[u - 1];
                b[u] = b[u - 1] ^ 8u;
              }
              if (kind == 2) a[u] = 8, b[u] = 0;  // -0 * +0
              if (kind == 3) a[u] &= 8, b[u] &= 8;
            }
            for (std::uint32_t* x :
                 {&sa[static_cast<std::size_t>(q)], &sb[static_cast<std::size_t>(q)]}) {
              switch (rng() % 8) {
                case 0:
                  *x = e8m0 ? 0 : 0;  // ue8m0 0: 2^-127; ue4m3 0: zero
                  break;
                case 1:
                  *x = rng() % 4 == 0 ? (e8m0 ? 0xFF : 0x7F) : (e8m0 ? 127 : 0x38);  // NaN
                  break;
                case 2:
                  *x = e8m0 ? 1 + static_cast<std::uint32_t>(rng() % 4)
                            : 1 + static_cast<std::uint32_t>(rng() % 7);  // subnormal ue4m3
                  break;
                case 3:
                case 4:
                  *x = (e8m0 ? 125 : 0x30) + static_cast<std::uint32_t>(rng() % (e8m0 ? 5 : 17));
                  break;
                default:
                  *x = static_cast<std::uint32_t>(rng() % (e8m0 ? 255 : 127));
              }
            }
          }
          const std::uint32_t c_choices[] = {0x80000000u, 0,
                                             static_cast<std::uint32_t>(rng()) & 0xBFFFFFFFu};
          const std::uint32_t c = c_choices[rng() % 3];
          std::vector<Decoded> da, db, dsa, dsb;
          std::vector<detail::GroupOperand> ga, gb;
          for (std::size_t i = 0; i < a.size(); ++i) {
            da.push_back(decode(dp.input, a[i]));
            db.push_back(decode(dp.input, b[i]));
            dsa.push_back(decode(scale, sa[i / static_cast<std::size_t>(group)]));
            dsb.push_back(decode(scale, sb[i / static_cast<std::size_t>(group)]));
          }
          for (int q = 0; q < groups; ++q) {
            ga.push_back(detail::group_operand(dp, dp.input, scale, a.data() + q * group, group,
                                               sa[static_cast<std::size_t>(q)], true));
            gb.push_back(detail::group_operand(dp, dp.input, scale, b.data() + q * group, group,
                                               sb[static_cast<std::size_t>(q)], false));
          }
          const std::uint32_t want = detail::exact_scaled_block(
              dp, da.data(), db.data(), dsa.data(), dsb.data(), da.size(), c);
          const std::uint32_t got =
              detail::accumulator_bits(dp, detail::group_block(dp, g, ga.data(), gb.data(), groups,
                                                               to_double(dp.accumulator, c)));
          ASSERT_EQ(got, want) << describe(dp) << ", trial " << trial;
          zeros += (want & 0x7FFFFFFFu) == 0 ? 1 : 0;
          negative_zeros += want == 0x80000000u ? 1 : 0;
        }
      }
    }
  }
  EXPECT_GT(zeros, 1000);
  EXPECT_GT(negative_zeros, 100);
}

// What the group formulation refuses goes to the general path: wider codes (e3m2: 448), groups
// not a multiple of four, exact alignment, sums past 2^52.
TEST(ScaledFastPath, TheGroupFormulationRefusesWhatItCannotHold) {
  const Datapath mxfp4 = preset("sm100", formats::e2m1, formats::fp32, "tcgen05.mxf4.block32");
  EXPECT_TRUE(detail::scaled_groups_apply(mxfp4));
  Datapath dp = mxfp4;
  dp.input = formats::e3m2;
  EXPECT_FALSE(detail::scaled_groups_apply(dp));
  dp = mxfp4;
  dp.block_scaling.group_terms = 2;
  EXPECT_FALSE(detail::scaled_groups_apply(dp));
  dp = mxfp4;
  dp.alignment_fraction_bits = std::nullopt;
  EXPECT_FALSE(detail::scaled_groups_apply(dp));
  dp = mxfp4;
  dp.alignment_fraction_bits = 41;  // 41 + 10 + 3 > 52
  EXPECT_FALSE(detail::scaled_groups_apply(dp));
  dp.alignment_fraction_bits = 39;
  EXPECT_TRUE(detail::scaled_groups_apply(dp));
  std::mt19937_64 rng(38);
  dp = mxfp4;
  dp.input = formats::e3m2;
  EXPECT_TRUE(same_as_model(dp, Inputs::special, rng));  // the general path, for comparison
}

}  // namespace
}  // namespace tcemu
