// The fp64 MMA element (fp64_mma.hpp) and the DMMA table (fp64_presets.hpp). The chain of IEEE
// fused multiply-adds is itself the definition, so these tests check what a wrong chain would
// get wrong: the order of k, c entering first, one rounding per step, the chaining of
// instructions, NaN replacement, signed zeros and subnormals. tests/cases/fp64_probe_cases_test.cpp
// checks that the probe's crafted cases tell the datapath variants apart.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/emulator/fp64_presets.hpp>

namespace tcemu {
namespace {

std::uint64_t bits(double x) {
  return std::bit_cast<std::uint64_t>(x);
}

template <typename F>
std::string thrown_message(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

// d for products t_p = t[p] x 1 on c.
std::uint64_t chain(const Fp64Datapath& dp, const std::vector<double>& t, double c) {
  std::vector<std::uint64_t> a, b;
  for (double x : t) a.push_back(bits(x)), b.push_back(bits(1.0));
  return fp64_mma_element(dp, a, b, bits(c));
}

constexpr double kTiny = 0x1p-60;

Fp64Datapath with(Fp64Order order, Fp64Step step, int k = 4) {
  return {k, order, step, kFp64PresetNan};
}

TEST(Fp64Mma, TheChainVisitsKInItsOrderFromC) {
  const Fp64Datapath up = with(Fp64Order::ascending, Fp64Step::fused);
  const Fp64Datapath down = with(Fp64Order::descending, Fp64Step::fused);
  // c = 1, -1 at k = 1, 2^-60 at k = 2: 2^-60 survives only when k = 1 comes first.
  EXPECT_EQ(chain(up, {0, -1, kTiny, 0}, 1), bits(kTiny));
  EXPECT_EQ(chain(down, {0, -1, kTiny, 0}, 1), bits(0.0));
  EXPECT_EQ(chain(up, {0, kTiny, -1, 0}, 1), bits(0.0));
  EXPECT_EQ(chain(down, {0, kTiny, -1, 0}, 1), bits(kTiny));
  // c enters first: c = 2^-60 is lost against 1 before -1 cancels it.
  EXPECT_EQ(chain(up, {1, -1, 0, 0}, kTiny), bits(0.0));
  // Every step rounds: two half-ulps of 1 are lost one at a time (one rounding: 1 + 2^-52).
  EXPECT_EQ(chain(up, {0x1p-53, 0x1p-53, 0, 0}, 1), bits(1.0));
}

TEST(Fp64Mma, FusedStepsRoundOnceUnfusedTwice) {
  // (1 + 2^-30)^2 = 1 + 2^-29 + 2^-60 against c = -(1 + 2^-29).
  const std::vector<std::uint64_t> a = {bits(1 + 0x1p-30)}, b = a;
  const std::uint64_t c = bits(-(1 + 0x1p-29));
  EXPECT_EQ(fp64_mma_element(with(Fp64Order::ascending, Fp64Step::fused, 1), a, b, c), bits(kTiny));
  EXPECT_EQ(fp64_mma_element(with(Fp64Order::ascending, Fp64Step::unfused, 1), a, b, c), bits(0.0));
}

TEST(Fp64Mma, LongerKChainsInstructionsInKOrderWithAShorterLastOne) {
  // instruction_k 2, descending: k = 1, 0, then 3, 2, then 4 alone.
  const Fp64Datapath down = with(Fp64Order::descending, Fp64Step::fused, 2);
  // -1 at k = 3 before 2^-60 at k = 2 (inside the second instruction).
  EXPECT_EQ(chain(down, {0, 0, kTiny, -1, 0}, 1), bits(kTiny));
  // The first instruction ends before the second starts: 2^-60 at k = 1 is lost against c = 1
  // before -1 at k = 2 cancels c.
  EXPECT_EQ(chain(down, {0, kTiny, -1, 0, 0}, 1), bits(0.0));
  // The last instruction has one term: -1 at k = 3 then 2^-60 at k = 4.
  EXPECT_EQ(chain(down, {0, 0, 0, -1, kTiny}, 1), bits(kTiny));
  EXPECT_EQ(chain(down, {}, 2.5), bits(2.5));  // K = 0: d = c
}

TEST(Fp64Mma, InvalidOperationsGiveTheDatapathsNan) {
  const Fp64Datapath dp = fp64_preset("sm90", "mma.sync.m8n8k4");
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(chain(dp, {inf, 0, 0, -inf}, 1), kFp64PresetNan);  // Inf - Inf
  EXPECT_EQ(fp64_mma_element(dp, std::vector<std::uint64_t>{0, 0, 0, 0},
                             std::vector<std::uint64_t>{bits(inf), 0, 0, 0}, bits(1.0)),
            kFp64PresetNan);  // 0 x Inf
  EXPECT_EQ(chain(dp, {inf, 1, 0, 0}, 1), bits(inf));
  Fp64Datapath other = dp;
  other.nan_bits = 0x7FF8000000000000ull;
  EXPECT_EQ(chain(other, {inf, 0, 0, -inf}, 1), 0x7FF8000000000000ull);
  // Replaced: a NaN operand's NaN too.
  other.nan = Fp64Nan::replaced;
  EXPECT_EQ(fp64_mma_element(other, std::vector<std::uint64_t>{0x7FF8000000000123ull, 0, 0, 0},
                             std::vector<std::uint64_t>(4, bits(1.0)), bits(1.0)),
            0x7FF8000000000000ull);
  EXPECT_EQ(chain(other, {}, std::bit_cast<double>(0xFFF0000000000001ull)), 0x7FF8000000000000ull);
}

TEST(Fp64Mma, ZerosAndSubnormalsFollowIeee) {
  const Fp64Datapath dp = fp64_preset("sm80");
  EXPECT_EQ(chain(dp, {0, 0, 0, 0}, -0.0), bits(0.0));  // -0 + (+0) = +0
  EXPECT_EQ(chain(dp, {-0.0, -0.0, -0.0, -0.0}, -0.0), bits(-0.0));
  EXPECT_EQ(chain(dp, {-1, 0, 0, 0}, 1), bits(0.0));  // exact cancellation: +0
  // No flush to zero: a subnormal product, and a subnormal result of a cancellation.
  EXPECT_EQ(fp64_mma_element(dp, std::vector<std::uint64_t>{bits(0x1p-537), 0, 0, 0},
                             std::vector<std::uint64_t>{bits(0x1p-537), 0, 0, 0}, 0),
            1u);
  EXPECT_EQ(chain(dp, {0, 0, 0, -(1 - 0x1p-50) * 0x1p-1020}, 0x1p-1020), bits(0x1p-1070));
}

TEST(Fp64Mma, InvalidDatapathsAndOperandsAreRefused) {
  Fp64Datapath dp = fp64_preset("sm90");
  dp.instruction_k = 0;
  EXPECT_NE(thrown_message([&] { validate(dp); }).find("instruction_k = 0 must be in 1..65536"),
            std::string::npos);
  dp = fp64_preset("sm90");
  dp.nan_bits = 0x7FF0000000000000ull;  // Inf
  EXPECT_NE(thrown_message([&] { validate(dp); }).find("nan_bits 7ff0000000000000 is not a"),
            std::string::npos);
  const std::vector<std::uint64_t> one = {0}, two = {0, 0};
  EXPECT_NE(thrown_message([&] {
              fp64_mma_element(fp64_preset("sm90"), one, two, 0);
            }).find("a has 1 values, b has 2"),
            std::string::npos);
}

TEST(Fp64Presets, ShapesPerArchitectureFollowThePtxTargets) {
  using Names = std::vector<std::string_view>;
  EXPECT_TRUE(fp64_instruction_names("sm70").empty());
  EXPECT_TRUE(fp64_instruction_names("sm75").empty());
  for (const char* arch : {"sm80", "sm89"}) {
    EXPECT_EQ(fp64_instruction_names(arch), (Names{"mma.sync", "mma.sync.m8n8k4"})) << arch;
    EXPECT_EQ(fp64_preset(arch).instruction_k, 4);
  }
  for (const char* arch : {"sm90", "sm100", "sm120"}) {
    EXPECT_EQ(fp64_instruction_names(arch),
              (Names{"mma.sync", "mma.sync.m8n8k4", "mma.sync.m16n8k4", "mma.sync.m16n8k8",
                     "mma.sync.m16n8k16"}))
        << arch;
    EXPECT_EQ(fp64_preset(arch).instruction_k, 16);
    EXPECT_EQ(fp64_preset(arch, "mma.sync.m16n8k8").instruction_k, 8);
  }
  const Fp64Datapath dp = fp64_preset("sm90", "mma.sync.m16n8k4");
  EXPECT_EQ(dp, (Fp64Datapath{4, Fp64Order::ascending, Fp64Step::fused, kFp64PresetNan,
                              Fp64Nan::propagated}));
  EXPECT_EQ(describe(dp),
            "fp64 x fp64 -> fp64, K = 4 per instruction: a chain of K fused multiply-adds (one "
            "rounding each) from c in ascending k order, round to nearest even, NaN operands "
            "propagated quieted (b, then d, then a), invalid operations fff8000000000000");
}

TEST(Fp64Presets, WhatTheHardwareLacksIsNamed) {
  EXPECT_NE(thrown_message([] {
              fp64_preset("sm75");
            }).find("sm75 has no fp64 MMA instruction (mma.sync .f64 starts with sm_80)"),
            std::string::npos);
  EXPECT_NE(thrown_message([] { fp64_preset("sm99"); }).find("unknown architecture 'sm99'"),
            std::string::npos);
  EXPECT_NE(thrown_message([] { fp64_preset("sm80", "mma.sync.m16n8k16"); })
                .find("sm80 has no fp64 instruction 'mma.sync.m16n8k16'; it has mma.sync.m8n8k4 "
                      "(K 4) (and mma.sync: the largest-K shape) (the m16n8 .f64 shapes need "
                      "sm_90)"),
            std::string::npos);
  EXPECT_NO_THROW(check_fp64_shape_k("sm90", "mma.sync.m16n8k8", 16));
  EXPECT_NO_THROW(check_fp64_shape_k("sm90", "mma.sync", 3));
  EXPECT_NE(thrown_message([] { check_fp64_shape_k("sm90", "mma.sync.m16n8k8", 4); })
                .find("K = 4 is not a multiple of mma.sync.m16n8k8's K = 8; sm90 has "
                      "mma.sync.m8n8k4 (K 4), mma.sync.m16n8k4 (K 4)"),
            std::string::npos);
}

// The H200's NaN rule (docs/presets.md): a NaN operand's NaN quieted, b_k's before d's before
// a_k's; an invalid operation gives nan_bits; `replaced` makes every NaN nan_bits.
TEST(Fp64Mma, NanOperandsPropagateQuietedBThenDThenA) {
  Fp64Datapath dp = fp64_preset("sm90", "mma.sync.m16n8k4");
  const std::uint64_t one = 0x3FF0000000000000ULL, inf = 0x7FF0000000000000ULL;
  const std::uint64_t nan_a = 0xFFF8000000000ABCULL, snan_b = 0x7FF0000000000001ULL;
  const std::uint64_t nan_c = 0x7FF8000000000123ULL;
  using V = std::vector<std::uint64_t>;
  // b_k before d: the signalling NaN of b_1 comes back quiet, though c and a_0 are NaN.
  EXPECT_EQ(fp64_mma_element(dp, V{nan_a, one, one, one}, V{one, snan_b, one, one}, nan_c),
            0x7FF8000000000001ULL);
  // d before a_k: c's NaN passes every later step, though a_2 is NaN.
  EXPECT_EQ(fp64_mma_element(dp, V{one, one, nan_a, one}, V{one, one, one, one}, nan_c), nan_c);
  // a NaN of a_0 with c a number.
  EXPECT_EQ(fp64_mma_element(dp, V{nan_a, one, one, one}, V{one, one, one, one}, one), nan_a);
  // 0 x Inf and Inf - Inf: nan_bits.
  EXPECT_EQ(fp64_mma_element(dp, V{0, one, one, one}, V{inf, one, one, one}, one), kFp64PresetNan);
  EXPECT_EQ(fp64_mma_element(dp, V{inf, inf ^ (1ULL << 63), 0, 0}, V{one, one, 0, 0}, 0),
            kFp64PresetNan);
  dp.nan = Fp64Nan::replaced;
  EXPECT_EQ(fp64_mma_element(dp, V{nan_a, one, one, one}, V{one, one, one, one}, one),
            kFp64PresetNan);
  EXPECT_EQ(fp64_mma_element(dp, V{}, V{}, nan_c), kFp64PresetNan);
  dp.nan = Fp64Nan::propagated;
  EXPECT_EQ(fp64_mma_element(dp, V{}, V{}, snan_b), 0x7FF8000000000001ULL);
}

}  // namespace
}  // namespace tcemu
