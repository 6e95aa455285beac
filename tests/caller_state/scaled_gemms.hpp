// The block-scaled GEMMs of the caller-state matrix (issue 38), one for each path of the CPU and
// the GPU: MXFP8/6/4 with finite operands and scales (the binary64 fast path, the GPU's binary64
// kernel), the same with an Inf operand and a NaN scale (the element-wise evaluation, the GPU's
// exact kernel), NVFP4 and MXFP4 (the group path and kernel); scales and operands reach fp32's
// subnormal range, where FTZ and DAZ would flush.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/matrix.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/test/codes.hpp>

namespace tcemu::test {

// Finite codes of f, a zero exponent field (subnormal) in one of four.
inline void fill_finite(Codes& x, std::mt19937_64& rng) {
  const FloatFormat& f = x.format;
  for (std::uint32_t& w : x.words) {
    w = static_cast<std::uint32_t>(rng() & ((std::uint64_t{1} << f.container_bits()) - 1));
    if (rng() % 4 == 0) w &= ~(((1u << f.exponent_bits) - 1) << f.fraction_bits);
    const ValueClass vc = decode(f, w).value_class;
    if (vc == ValueClass::infinity || vc == ValueClass::nan) w = 0;
  }
}

// Scale codes: near 1 mostly, one in three anywhere but NaN (2^-127 and ue4m3's subnormals
// included: products in fp32's subnormal range).
inline void fill_scales(Codes& x, std::mt19937_64& rng) {
  const bool e8m0 = x.format == formats::ue8m0;
  const std::uint32_t nan = e8m0 ? 0xFF : 0x7F, one = e8m0 ? 127 : 0x38;
  for (std::uint32_t& w : x.words) {
    w = rng() % 3 == 0 ? static_cast<std::uint32_t>(rng() % nan)
                       : one - 8 + static_cast<std::uint32_t>(rng() % 17);
  }
}

struct ScaledGemm {
  Datapath dp;
  Codes a, b, c, sa, sb;

  ScaledGemm(const Datapath& d, std::int64_t m, std::int64_t n, std::int64_t k,
             std::mt19937_64& rng)
      : dp(d),
        a(d.input, m, k),
        b(d.b_format(), k, n),
        c(d.accumulator, m, n),
        sa(d.block_scaling.scale_a, m, static_cast<std::int64_t>(scale_count(d, k))),
        sb(d.block_scaling.scale_b, sa.cols, n) {
    fill_finite(a, rng);
    fill_finite(b, rng);
    fill_finite(c, rng);
    fill_scales(sa, rng);
    fill_scales(sb, rng);
  }
  void pack() {
    for (Codes* x : {&a, &b, &c, &sa, &sb}) x->pack();
  }

  // D's bits under `options` (C through the epilogue, or as the initial accumulator), then
  // mma_element with the scales on each row of A and B's first column, from C.
  void run(const GemmOptions& options, std::vector<std::uint32_t>& out) const {
    std::vector<unsigned char> d(c.bytes.size());
    const MatrixView dv{{d.data(), c.format, c.rows, c.cols, c.cols, Layout::row_major}};
    emulated_gemm(dp, options, a.view(), b.view(), BlockScales{sa.view(), sb.view()}, c.view(), dv);
    for (std::int64_t i = 0; i < c.rows; ++i) {
      for (std::int64_t j = 0; j < c.cols; ++j) out.push_back(dv.get(i, j));
    }
  }
  void run_elements(std::vector<std::uint32_t>& out) const {
    for (std::int64_t i = 0; i < a.rows; ++i) {
      const auto row = std::span(a.words).subspan(static_cast<std::size_t>(i * a.cols),
                                                  static_cast<std::size_t>(a.cols));
      const auto scales = std::span(sa.words).subspan(static_cast<std::size_t>(i * sa.cols),
                                                      static_cast<std::size_t>(sa.cols));
      std::vector<std::uint32_t> col, col_scales;
      for (std::int64_t p = 0; p < b.rows; ++p)
        col.push_back(b.words[static_cast<std::size_t>(p * b.cols)]);
      for (std::int64_t p = 0; p < sb.rows; ++p)
        col_scales.push_back(sb.words[static_cast<std::size_t>(p * sb.cols)]);
      out.push_back(mma_element(dp, row, col, c.words[static_cast<std::size_t>(i * c.cols)], scales,
                                col_scales));
    }
  }
};

// The four GEMMs (6 x 5; k two instructions and a partial one, a partial scale block too).
inline std::vector<ScaledGemm> scaled_gemms() {
  std::mt19937_64 rng(38);
  const Datapath mxf8f6f4 =
      preset("sm100", formats::e4m3, formats::e2m3, formats::fp32, "tcgen05.mxf8f6f4.block32");
  const Datapath mxf8_e5m2 = preset("sm120", formats::e5m2, formats::e4m3, formats::fp32,
                                    "mma.sync.m16n8k32.mxf8f6f4.block32");
  const Datapath nvfp4 =
      preset("sm100", formats::e2m1, formats::fp32, "tcgen05.mxf4nvf4.block16.ue4m3");
  const Datapath mxfp4 =
      preset("sm120", formats::e2m1, formats::fp32, "mma.sync.m16n8k64.mxf4.block32");
  std::vector<ScaledGemm> out;
  out.emplace_back(mxf8f6f4, 6, 5, 2 * mxf8f6f4.instruction_k + 7, rng);
  out.emplace_back(mxf8_e5m2, 6, 5, 2 * mxf8_e5m2.instruction_k + 7, rng);
  out.back().a.at(1, 3) = 0x7C;   // +Inf in e5m2: the binary64 path falls back
  out.back().sb.at(1, 2) = 0xFF;  // a NaN scale of B's column 2
  out.emplace_back(nvfp4, 6, 5, 2 * nvfp4.instruction_k + 16, rng);
  out.emplace_back(mxfp4, 6, 5, 2 * mxfp4.instruction_k + 32, rng);
  for (ScaledGemm& g : out) g.pack();
  return out;
}

// The options each GEMM runs under: alpha, beta and C through the fp32 epilogue, C as the initial
// accumulator, and take-out after every instruction (its fp32 adds).
inline std::vector<GemmOptions> scaled_gemm_options(const Datapath& dp) {
  const GemmOptions epilogue{.alpha = 0.75f, .beta = -1.5f, .threads = 2};
  GemmOptions taken_out = epilogue;
  taken_out.takeout_every_k = dp.instruction_k;
  return {
      epilogue, {.beta = 1.0f, .c_input = CInput::initial_accumulator, .threads = 2}, taken_out};
}

}  // namespace tcemu::test
