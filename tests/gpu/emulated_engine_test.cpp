// The GPU backend's emulated engine (issue 16) against the emulator backend, bit for bit: every
// preset of every architecture (not only the present GPU's), every datapath field overridden,
// random, adversarial (cancellation, wide exponent spread, subnormals) and special-value matrices,
// sizes that are multiples of no tile, every layout, both ways of C entering, take-out, k = 0;
// and the fastest engine falling back to it for a datapath no hardware kernel of this GPU
// computes. Which kernel runs follows from the datapath and the inputs (emulated_gemm.hpp):
// group-scaled datapaths (kind::mxf4, mxf4nvf4) take the group kernel whatever the inputs; finite
// inputs and scales on a binary64-exact datapath (kind::f8f6f4 pairs and kind::mxf8f6f4 included)
// the binary64 kernel; Inf/NaN inputs, NaN scales of group_terms 1, exact or wide alignment the
// exact one. The cases below cover all three on every preset, and force each on Blackwell's
// block-scaled and mixed-format datapaths.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <tcemu/backend/backend.hpp>
#include <tcemu/emulator/binary64_block.hpp>
#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/emulator/scaled_groups.hpp>
#include <tcemu/gpu/gpu_backend.hpp>

#include "gemm_comparison.hpp"

namespace tcemu {
namespace {

using namespace gpu_test;  // NOLINT(google-build-using-namespace): the shared GEMM test helpers

// How many elements of x are of each kind: the generators' promises are checked with these.
struct Census {
  std::int64_t subnormal = 0, zero = 0, nonfinite = 0;
};
Census census(const HostMatrix& x) {
  Census out;
  const ConstMatrixView v = x.cview();
  for (std::int64_t i = 0; i < x.rows; ++i) {
    for (std::int64_t j = 0; j < x.cols; ++j) {
      const Decoded d = decode(x.format, v.get(i, j));
      if (d.value_class == ValueClass::zero) ++out.zero;
      if (d.value_class == ValueClass::infinity || d.value_class == ValueClass::nan) {
        ++out.nonfinite;
      }
      if (d.value_class == ValueClass::finite &&
          d.significand < (std::uint64_t{1} << x.format.fraction_bits)) {
        ++out.subnormal;
      }
    }
  }
  return out;
}

enum class Inputs { random, wide_spread, cancellation, special };
const char* name_of(Inputs kind) {
  return kind == Inputs::random         ? "random"
         : kind == Inputs::wide_spread  ? "wide exponent spread"
         : kind == Inputs::cancellation ? "cancellation"
                                        : "special values";
}

// A and B of one kind. cancellation: B's row 2p + 1 is the negation of row 2p and A's column
// 2p + 1 equals column 2p, so products cancel in pairs, exactly or (every third pair, whose A
// value is moved by one ulp) nearly.
void fill_inputs(Inputs kind, HostMatrix& a, HostMatrix& b, std::mt19937_64& rng) {
  switch (kind) {
    case Inputs::random:
      fill(a, rng, 1.0);
      fill(b, rng, 1.0);
      return;
    case Inputs::wide_spread:
      fill(a, rng, 12.0, 0.02);  // exponents over most of the range, subnormals, signed zeros
      fill(b, rng, 12.0, 0.02);
      for (HostMatrix* x : {&a, &b}) {  // no Inf or NaN: the binary64 kernel runs
        const MatrixView v = x->view();
        for (std::int64_t i = 0; i < x->rows; ++i) {
          for (std::int64_t j = 0; j < x->cols; ++j) {
            const ValueClass vc = decode(x->format, v.get(i, j)).value_class;
            if (vc == ValueClass::infinity || vc == ValueClass::nan) {
              v.set(i, j, encode_zero(x->format, true));
            }
          }
        }
      }
      return;
    case Inputs::cancellation: {
      fill(a, rng, 2.0);
      fill(b, rng, 2.0);
      const MatrixView av = a.view(), bv = b.view();
      // B's own sign bit (kind::f8f6f4 pairs have two formats); A's ulp step stays inside A's
      // container (an FP4 or FP6 code never spills into the byte's unused bits).
      const std::uint32_t sign = b.format.sign_mask() << b.format.padding_bits;
      const std::uint32_t ulp = std::uint32_t{1} << a.format.padding_bits;
      const int width = a.format.container_bits();
      const std::uint32_t outside = width >= 32 ? 0 : ~((std::uint32_t{1} << width) - 1);
      for (std::int64_t p = 0; p + 1 < a.cols; p += 2) {
        for (std::int64_t i = 0; i < a.rows; ++i) {
          const std::uint32_t x = av.get(i, p), moved = x + ulp;
          av.set(i, p + 1, (p / 2) % 3 == 2 && (moved & outside) == 0 ? moved : x);
        }
        for (std::int64_t j = 0; j < b.cols; ++j) bv.set(p + 1, j, bv.get(p, j) ^ sign);
      }
      return;
    }
    case Inputs::special:
      fill(a, rng, 4.0, 0.05);
      fill(b, rng, 4.0, 0.05);
      return;
  }
}

// Scale codes of one kind of input: random scales near 1, every code (wide spread and
// cancellation), or every code with NaN (ue8m0 0xFF, ue4m3 0x7F) and zero scales made frequent.
void fill_scales(Inputs kind, HostMatrix& x, std::mt19937_64& rng) {
  const bool e8m0 = x.format == formats::ue8m0;
  const std::uint32_t nan = e8m0 ? 0xFF : 0x7F, one = e8m0 ? 127 : 0x38;
  const MatrixView v = x.view();
  for (std::int64_t i = 0; i < x.rows; ++i) {
    for (std::int64_t j = 0; j < x.cols; ++j) {
      std::uint32_t code = static_cast<std::uint32_t>(rng() % (nan + 1));
      if (kind == Inputs::random) code = one - 6 + static_cast<std::uint32_t>(rng() % 13);
      if (kind == Inputs::special && rng() % 8 == 0) code = rng() % 2 == 0 ? nan : 0;
      v.set(i, j, code);
    }
  }
}

// Runs of `run` zeros of random sign along k in about a third of the runs of every row of A (and
// column of B): groups whose products are all zero (they set no grid, block_fma.hpp).
void zero_runs(HostMatrix& x, bool along_rows, std::int64_t run, std::mt19937_64& rng) {
  const MatrixView v = x.view();
  const std::uint32_t sign = x.format.sign_mask() << x.format.padding_bits;
  const std::int64_t lines = along_rows ? x.rows : x.cols, k = along_rows ? x.cols : x.rows;
  for (std::int64_t l = 0; l < lines; ++l) {
    for (std::int64_t p0 = 0; p0 < k; p0 += run) {
      if (rng() % 3 != 0) continue;
      for (std::int64_t p = p0; p < std::min(k, p0 + run); ++p) {
        const std::uint32_t z = rng() % 2 == 0 ? sign : 0;
        if (along_rows) {
          v.set(l, p, z);
        } else {
          v.set(p, l, z);
        }
      }
    }
  }
}

// The shapes: odd sizes, a k with a partial last instruction and more than one instruction.
struct Shape {
  std::int64_t m, n, k;
};
Shape odd_shape(const Datapath& dp) {
  return {67, 45, 2 * dp.instruction_k + 7};
}

Layout layout_of(int bit) {
  return bit != 0 ? Layout::column_major : Layout::row_major;
}

// One GEMM of the emulated engine against the emulator; `case_index` picks the layouts, padded
// leading dimensions and the way C enters.
::testing::AssertionResult same_as_emulator(Backend& gpu, const Datapath& dp, Inputs kind,
                                            int case_index, std::mt19937_64& rng,
                                            std::int64_t takeout_every_k = 0,
                                            std::optional<Shape> shape = std::nullopt) {
  const Shape s = shape.value_or(odd_shape(dp));
  HostMatrix a(dp.input, s.m, s.k, layout_of(case_index & 1), case_index % 3);
  HostMatrix b(dp.b_format(), s.k, s.n, layout_of(case_index & 2), (case_index + 1) % 3);
  HostMatrix c(dp.accumulator, s.m, s.n, layout_of(case_index & 4), 1);
  HostMatrix d(dp.accumulator, s.m, s.n, layout_of((case_index >> 1) & 1));
  fill_inputs(kind, a, b, rng);
  if (dp.block_scaled() && (kind == Inputs::cancellation || kind == Inputs::special)) {
    zero_runs(a, true, dp.block_scaling.group_terms, rng);
    zero_runs(b, false, dp.block_scaling.group_terms, rng);
  }
  std::optional<HostScales> scales;
  if (dp.block_scaled()) {
    const auto count = static_cast<std::int64_t>(scale_count(dp, static_cast<std::size_t>(s.k)));
    scales.emplace(
        HostScales{HostMatrix(dp.block_scaling.scale_a, s.m, count, layout_of(case_index & 2)),
                   HostMatrix(dp.block_scaling.scale_b, count, s.n, layout_of(case_index & 1))});
    fill_scales(kind, scales->a, rng);
    fill_scales(kind, scales->b, rng);
  }
  fill(c, rng, 3.0, kind == Inputs::special ? 0.05 : 0.0);
  GemmOptions o;
  o.takeout_every_k = takeout_every_k;
  if (case_index % 2 == 0) {
    o.c_input = CInput::initial_accumulator;
    o.alpha = o.beta = 1.0f;
  } else {
    o.alpha = 1.5f;
    o.beta = case_index % 4 == 1 ? -0.75f : 0.0f;
  }
  const test::BitComparison same =
      compare_gemms(gpu, dp, o, a, b, c, d, scales ? &*scales : nullptr);
  if (same.result) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << describe(dp) << ", " << name_of(kind) << " inputs, case " << case_index << ", " << s.m
         << " x " << s.n << " x " << s.k << ", take-out " << takeout_every_k << ":\n"
         << same.result.message();
}

std::unique_ptr<Backend> emulated_engine() {
  return gpu::make_gpu_backend({.engine = gpu::GemmEngine::emulated});
}

TEST(EmulatedEngine, GeneratorsMakeTheCasesTheyClaim) {
  std::mt19937_64 rng(3);
  HostMatrix a(formats::fp16, 64, 64, Layout::row_major),
      b(formats::fp16, 64, 64, Layout::row_major);
  fill_inputs(Inputs::wide_spread, a, b, rng);
  EXPECT_GT(census(a).subnormal, 0);
  EXPECT_GT(census(a).zero, 0);
  EXPECT_EQ(census(a).nonfinite + census(b).nonfinite, 0);
  fill_inputs(Inputs::special, a, b, rng);
  EXPECT_GT(census(a).nonfinite, 0);
  EXPECT_GT(census(b).nonfinite, 0);
  fill_inputs(Inputs::cancellation, a, b, rng);
  const ConstMatrixView av = a.cview(), bv = b.cview();
  EXPECT_EQ(av.get(5, 0), av.get(5, 1));
  EXPECT_EQ(bv.get(0, 7) ^ 0x8000u, bv.get(1, 7));
  EXPECT_NE(av.get(5, 4), av.get(5, 5));  // the near cancellation of every third pair
}

TEST(EmulatedEngine, EveryPresetOnEveryKindOfInputGivesTheEmulatorsBits) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const auto gpu = emulated_engine();
  std::mt19937_64 rng(16);
  int case_index = 0;
  for (const PresetEntry& entry : all_presets()) {
    for (const Inputs kind :
         {Inputs::random, Inputs::wide_spread, Inputs::cancellation, Inputs::special}) {
      EXPECT_TRUE(same_as_emulator(*gpu, entry.datapath, kind, case_index++, rng))
          << entry.arch << " " << entry.instruction;
    }
  }
}

TEST(EmulatedEngine, EveryOverriddenFieldGivesTheEmulatorsBits) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const auto gpu = emulated_engine();
  std::mt19937_64 rng(17);
  const Datapath base = preset("sm80", formats::fp16, formats::fp32, "mma.sync");
  std::vector<Datapath> variants;
  auto with = [&](auto change) {
    Datapath dp = base;
    change(dp);
    variants.push_back(dp);
  };
  with([](Datapath& dp) { dp.block_terms = 4, dp.k_group = 2; });
  with([](Datapath& dp) { dp.block_terms = 16, dp.k_group = 4, dp.instruction_k = 32; });
  with([](Datapath& dp) { dp.alignment_fraction_bits = std::nullopt; });  // exact kernel
  with([](Datapath& dp) { dp.alignment_fraction_bits = 0; });
  with([](Datapath& dp) { dp.alignment_fraction_bits = 40; });  // binary64, 40 + 2 + 4 bits
  with([](Datapath& dp) { dp.alignment_fraction_bits = 60; });  // too wide: exact kernel
  with([](Datapath& dp) { dp.alignment_floor = 2; });
  with([](Datapath& dp) { dp.alignment_floor = kNoAlignmentFloor; });
  with([](Datapath& dp) { dp.block_rounding = Rounding::nearest_even; });
  with([](Datapath& dp) { dp.block_result_precision = 12; });
  with([](Datapath& dp) {
    dp.block_rounding = Rounding::nearest_even, dp.block_result_precision = 1;
  });
  with([](Datapath& dp) { dp.c_entry = AccumulatorEntry::added_after_blocks; });
  with([](Datapath& dp) { dp.zero_sign = ZeroSign::positive; });
  with([](Datapath& dp) { dp.overflow = Overflow::saturate; });
  with([](Datapath& dp) { dp.nan_bits = 0xFFC00001u; });
  with([](Datapath& dp) { dp.input = formats::bf16, dp.block_terms = 1, dp.k_group = 1; });
  with([](Datapath& dp) { dp.input = formats::fp32; });  // 23 fraction bits: exact kernel
  with([](Datapath& dp) {
    dp.accumulator = formats::fp16, dp.nan_bits = 0x7FFF, dp.block_result_precision = 11;
  });
  // Both kernels are among the variants (binary64_applies decides for finite inputs).
  int binary64 = 0;
  for (const Datapath& dp : variants) binary64 += detail::binary64_applies(dp) ? 1 : 0;
  EXPECT_GT(binary64, 0);
  EXPECT_LT(binary64, static_cast<int>(variants.size()));
  int case_index = 0;
  for (const Datapath& dp : variants) {
    for (const Inputs kind : {Inputs::wide_spread, Inputs::cancellation, Inputs::special}) {
      EXPECT_TRUE(same_as_emulator(*gpu, dp, kind, case_index++, rng));
    }
  }
}

TEST(EmulatedEngine, TakeOutAndEveryLayoutGiveTheEmulatorsBits) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const auto gpu = emulated_engine();
  std::mt19937_64 rng(18);
  for (const char* arch : {"sm70", "sm90"}) {
    const Datapath dp = preset(arch, formats::fp16, formats::fp32, "mma.sync");
    for (int case_index = 0; case_index < 8; ++case_index) {  // every layout of A, B, C, D
      for (const Inputs kind : {Inputs::random, Inputs::special}) {
        EXPECT_TRUE(same_as_emulator(*gpu, dp, kind, case_index, rng, 2 * dp.instruction_k));
        EXPECT_TRUE(same_as_emulator(*gpu, dp, kind, case_index, rng));
      }
    }
  }
}

// NVFP4, MXFP4, MXFP8 and a mixed pair of each kind: finite inputs and scales near 1, so that the
// group kernel (group_terms 16) and the binary64 kernel (f8f6f4 pairs, mxf8f6f4) run; every layout,
// with and without take-out, sizes that are multiples of no tile; then every kind of input
// (NaN and zero scales: the group kernel keeps them, the binary64 kernel leaves them to the exact
// one).
TEST(EmulatedEngine, BlockScaledAndMixedFormatKernelsGiveTheEmulatorsBits) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const auto gpu = emulated_engine();
  std::mt19937_64 rng(21);
  using formats::e2m1, formats::e2m3, formats::e4m3, formats::e5m2, formats::fp32;
  const std::vector<Datapath> datapaths = {
      preset("sm100", e2m1, fp32, "tcgen05.mxf4nvf4.block16.ue4m3"),            // NVFP4
      preset("sm100", e2m1, fp32, "tcgen05.mxf4.block32"),                      // MXFP4
      preset("sm120", e2m1, fp32, "mma.sync.m16n8k64.mxf4nvf4.block16.ue8m0"),  // group kernel
      preset("sm100", e4m3, e4m3, fp32, "tcgen05.mxf8f6f4.block32"),            // MXFP8
      preset("sm100", e5m2, e2m3, fp32, "tcgen05.mxf8f6f4.block32"),            // MXFP8 x MXFP6
      preset("sm100", e4m3, e2m1, fp32, "tcgen05"),                             // kind::f8f6f4
      preset("sm120", e2m3, e5m2, formats::fp16, "mma.sync.m16n8k32")};
  for (const Datapath& dp : datapaths) {
    const bool groups = dp.block_scaled() && dp.block_scaling.group_terms > 1;
    EXPECT_EQ(detail::scaled_groups_apply(dp), groups) << describe(dp);
    EXPECT_EQ(detail::binary64_applies(dp), !groups) << describe(dp);
    for (int case_index = 0; case_index < 8; ++case_index) {  // every layout of A, B, C, D
      EXPECT_TRUE(same_as_emulator(*gpu, dp, Inputs::random, case_index, rng));
      if (dp.accumulator == formats::fp32) {
        EXPECT_TRUE(
            same_as_emulator(*gpu, dp, Inputs::random, case_index, rng, 2 * dp.instruction_k));
      }
    }
    EXPECT_TRUE(same_as_emulator(*gpu, dp, Inputs::random, 3, rng, 0, Shape{130, 200, 1000}));
    EXPECT_TRUE(same_as_emulator(*gpu, dp, Inputs::random, 0, rng, 0, Shape{1, 1, 1}));
    for (const Inputs kind : {Inputs::wide_spread, Inputs::cancellation, Inputs::special}) {
      EXPECT_TRUE(same_as_emulator(*gpu, dp, kind, 5, rng));
    }
  }
}

// The group kernel's other instances and fields: ZeroSign::ieee, groups of 4, 8 and 32 (the
// kernel compiled for any group size), e2m3 elements, a narrow grid, RN, c after the blocks,
// NaN scales ignored for zero groups, two blocks an instruction; and the binary64 kernel with
// ue4m3 scales (significand bits in the scaled operands).
TEST(EmulatedEngine, OverriddenBlockScaledFieldsGiveTheEmulatorsBits) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const auto gpu = emulated_engine();
  std::mt19937_64 rng(22);
  const Datapath nvfp4 =
      preset("sm100", formats::e2m1, formats::fp32, "tcgen05.mxf4nvf4.block16.ue4m3");
  const Datapath mxfp4 = preset("sm100", formats::e2m1, formats::fp32, "tcgen05.mxf4.block32");
  std::vector<Datapath> variants;
  auto with = [&](Datapath dp, auto change) {
    change(dp);
    variants.push_back(dp);
  };
  for (const Datapath& base : {nvfp4, mxfp4}) {
    with(base, [](Datapath& dp) { dp.zero_sign = ZeroSign::ieee; });
    with(base, [](Datapath& dp) { dp.block_scaling.group_terms = 4; });
    with(base, [](Datapath& dp) { dp.block_scaling.group_terms = 8; });
    with(base, [](Datapath& dp) { dp.input = formats::e2m3; });
    with(base, [](Datapath& dp) { dp.alignment_fraction_bits = 3; });
    with(base, [](Datapath& dp) { dp.block_rounding = Rounding::nearest_even; });
    with(base, [](Datapath& dp) { dp.c_entry = AccumulatorEntry::added_after_blocks; });
    with(base,
         [](Datapath& dp) { dp.block_scaling.nan_scale = NanScale::ignored_for_zero_products; });
    with(base, [](Datapath& dp) { dp.instruction_k = 128; });
    with(base, [](Datapath& dp) {
      dp.accumulator = formats::fp16, dp.nan_bits = 0x7FFF, dp.block_result_precision = 11;
    });
  }
  with(mxfp4, [](Datapath& dp) { dp.block_scaling.group_terms = 32; });
  with(preset("sm100", formats::e4m3, formats::e4m3, formats::fp32, "tcgen05.mxf8f6f4.block32"),
       [](Datapath& dp) {
         dp.block_scaling.scale_a = dp.block_scaling.scale_b = formats::ue4m3;
         dp.zero_sign = ZeroSign::ieee;
       });
  int case_index = 0;
  for (const Datapath& dp : variants) {
    EXPECT_TRUE(detail::scaled_groups_apply(dp) || detail::binary64_applies(dp)) << describe(dp);
    for (const Inputs kind : {Inputs::random, Inputs::cancellation, Inputs::special}) {
      EXPECT_TRUE(same_as_emulator(*gpu, dp, kind, case_index++ % 8, rng));
    }
    // Take-out adds to an fp32 register: only an fp32 accumulator has it (GemmOptions).
    if (dp.accumulator == formats::fp32) {
      EXPECT_TRUE(
          same_as_emulator(*gpu, dp, Inputs::random, case_index++ % 8, rng, 2 * dp.instruction_k));
    }
  }
}

TEST(EmulatedEngine, LargerAndDegenerateShapesGiveTheEmulatorsBits) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const auto gpu = emulated_engine();
  std::mt19937_64 rng(19);
  const Datapath dp = preset("sm80", formats::bf16, formats::fp32, "mma.sync");
  for (const Shape s : std::vector<Shape>{{300, 257, 1000}, {1, 1, 1}, {5, 3, 0}, {130, 1, 17}}) {
    EXPECT_TRUE(same_as_emulator(*gpu, dp, Inputs::random, 0, rng, 0, s));
    EXPECT_TRUE(same_as_emulator(*gpu, dp, Inputs::special, 1, rng, 0, s));
  }
}

TEST(EmulatedEngine, TheFastestEngineRunsOtherDatapathsOnIt) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const auto fastest = gpu::make_gpu_backend({.engine = gpu::GemmEngine::fastest});
  const auto mma_sync = gpu::make_gpu_backend({.engine = gpu::GemmEngine::mma_sync});
  std::mt19937_64 rng(20);
  const Datapath v100 = preset("sm70", formats::fp16, formats::fp32, "mma.sync");
  EXPECT_TRUE(same_as_emulator(*fastest, v100, Inputs::random, 1, rng));
  // The hardware engine refuses it, naming the datapath it computes.
  HostMatrix a(v100.input, 16, 16, Layout::row_major), b(v100.input, 16, 16, Layout::row_major);
  HostMatrix d(v100.accumulator, 16, 16, Layout::row_major);
  const OnBackend ba = put(*mma_sync, a), bb = put(*mma_sync, b), bd = put(*mma_sync, d);
  EXPECT_THROW(mma_sync->mma_gemm(v100, {}, ba.matrix, bb.matrix, std::nullopt, bd.matrix),
               std::invalid_argument);
}

TEST(EmulatedEngine, BadTakeOutIsRefusedWithItsName) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const auto gpu = emulated_engine();
  const Datapath dp = preset("sm70", formats::fp16, formats::fp32, "mma.sync");
  HostMatrix a(dp.input, 8, 16, Layout::row_major), b(dp.input, 16, 8, Layout::row_major);
  HostMatrix d(dp.accumulator, 8, 8, Layout::row_major);
  const OnBackend ba = put(*gpu, a), bb = put(*gpu, b), bd = put(*gpu, d);
  GemmOptions o;
  o.takeout_every_k = dp.instruction_k + 1;
  try {
    gpu->mma_gemm(dp, o, ba.matrix, bb.matrix, std::nullopt, bd.matrix);
    ADD_FAILURE() << "takeout_every_k not a multiple of the instruction's k was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("takeout_every_k"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tcemu
