#include <algorithm>
#include <array>
#include <iterator>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

#include <tcemu/emulator/block_fma.hpp>
#include <tcemu/emulator/fp32_bits.hpp>
#include <tcemu/emulator/presets.hpp>

namespace tcemu {
namespace {

// The NaN an MMA produces: kGpuFp32Nan (0x7FFFFFFF) for fp32 and 0x7FFF for fp16 (MMA-Sim;
// measured on the H100 for every input format, docs/presets.md; not measured on other
// generations).
constexpr std::uint32_t kFp16Nan = 0x7FFF;

// The builders of the table's rows. Each takes the row's input and accumulator formats; the rest
// of its arguments are the values docs/presets.md gives for the row.

// block_datapath(), usable in a constant expression.
constexpr Datapath block(const FloatFormat& input, const FloatFormat& accumulator,
                         int instruction_k, int block_terms, int fraction_bits) {
  const bool fp32_acc = accumulator == formats::fp32;
  return Datapath{
      .input = input,
      .accumulator = accumulator,
      .instruction_k = instruction_k,
      .block_terms = block_terms,
      .k_group = block_terms,
      .alignment_fraction_bits = fraction_bits,
      .alignment_floor = -126,
      .block_rounding = fp32_acc ? Rounding::toward_zero : Rounding::nearest_even,
      .block_result_precision = accumulator.fraction_bits + 1,
      .c_entry = AccumulatorEntry::aligned_in_first_block,
      .overflow = Overflow::infinity,
      .zero_sign = ZeroSign::ieee,
      .nan_bits = fp32_acc ? kGpuFp32Nan : kFp16Nan,
  };
}

// The narrow fp8 block of Ada (mma.sync) and Hopper (wgmma): blocks of `block_terms`, 13
// alignment bits, results kept to 13 fraction bits (14 significant bits).
constexpr Datapath narrow_fp8(const FloatFormat& input, const FloatFormat& accumulator,
                              int instruction_k, int block_terms) {
  Datapath dp = block(input, accumulator, instruction_k, block_terms, 13);
  dp.block_result_precision = std::min(dp.block_result_precision, 14);
  return dp;
}

// fp8 mma.sync on Hopper and Blackwell, through the fp16 datapath: two interleaved halves of K/2
// terms (k = 0,1,4,5,... then 2,3,6,7,...) from 0, 25 alignment bits, c added at the end with a
// round-to-nearest addition.
constexpr Datapath fp8_halves(const FloatFormat& input, const FloatFormat& accumulator, int k) {
  Datapath dp = block(input, accumulator, k, k / 2, 25);
  dp.k_group = 2;
  dp.c_entry = AccumulatorEntry::added_after_blocks;
  return dp;
}

// m8n8k4 on sm90: no tensor-core instruction but ptxas's emulation (SASS HFMA2.MMA): the products
// (exact in fp32) are added one at a time by round-to-nearest FMAs from 0, c added last.
constexpr Datapath fma_chain(const FloatFormat& input, const FloatFormat& accumulator, int k) {
  return Datapath{
      .input = input,
      .accumulator = accumulator,
      .instruction_k = k,
      .block_terms = 1,
      .k_group = 1,
      .alignment_fraction_bits = std::nullopt,
      .alignment_floor = kNoAlignmentFloor,
      .block_rounding = Rounding::nearest_even,
      .block_result_precision = accumulator.fraction_bits + 1,
      .c_entry = AccumulatorEntry::added_after_blocks,
      .overflow = Overflow::ieee,
      .zero_sign = ZeroSign::ieee,
      .nan_bits = accumulator == formats::fp32 ? kGpuFp32Nan : kFp16Nan,
  };
}

// What we measured on the H100 with mma.sync (docs/presets.md): the alignment floor is -133 (as
// Khattak and Mikaitis 2025 report, not MMA-Sim's -126) and every zero result is +0. wgmma
// showed the same on the H200's generated and crafted cases (docs/presets.md).
constexpr Datapath hopper(Datapath dp) {
  dp.alignment_floor = -133;
  dp.zero_sign = ZeroSign::positive;
  return dp;
}

// Blackwell (sm_100 tcgen05, sm_120 mma.sync) as MMA-Sim 2.1.1 models it (its authors validated
// it on B200 and RTX 50 hardware, arXiv 2511.10909; docs/presets.md): two extra alignment bits,
// zeros take the exponent e_zero (our floor: -133 for fp32 results, -21 for fp16; datapath.hpp
// shows why the floor is e_zero), and every zero result is +0.
constexpr Datapath blackwell(Datapath dp) {
  dp.alignment_floor = dp.accumulator == formats::fp32 ? -133 : -21;
  dp.zero_sign = ZeroSign::positive;
  return dp;
}

// kind::f8f6f4 (tcgen05 K = 32, sm_120 mma.sync m16n8k32) and the fp8 shapes of sm_120: one
// K-term block of any pair of FP8, FP6 and FP4 formats (MMA-Sim 2.1.1's T_FDPA, L_max 32 bytes).
constexpr Datapath f8f6f4(const FloatFormat& a, const FloatFormat& b,
                          const FloatFormat& accumulator, int k) {
  Datapath dp = blackwell(block(a, accumulator, k, k, 25));
  dp.has_input_b = !(a == b);
  dp.input_b = dp.has_input_b ? b : FloatFormat{};
  return dp;
}

// kind::mxf8f6f4.block32: every product carries both ue8m0 scales in its exponent, one 32-term
// block, F = 25, e_zero -133, RZ to fp32 (MMA-Sim 2.1.1's ST_FDPA).
constexpr Datapath mxf8f6f4(const FloatFormat& a, const FloatFormat& b) {
  Datapath dp = f8f6f4(a, b, formats::fp32, 32);
  dp.block_scaling = {.scale_block = 32, .scale_a = formats::ue8m0, .scale_b = formats::ue8m0};
  return dp;
}

// kind::mxf4 and mxf4nvf4 (K = 64, e2m1): exact sums of 16 products, each times its two scales
// (one per `scale_block` k), then the four groups and c aligned with F = 35 bits, e_zero -139, RZ
// to fp32 (MMA-Sim 2.1.1's GST_FDPA).
constexpr Datapath mxf4(const FloatFormat& scale, int scale_block) {
  Datapath dp = blackwell(block(formats::e2m1, formats::fp32, 64, 64, 35));
  dp.alignment_floor = -139;
  dp.block_scaling = {
      .scale_block = scale_block, .scale_a = scale, .scale_b = scale, .group_terms = 16};
  return dp;
}

// Ootomo and Yokota's idealised Tensor Core: each block of `k` terms (one instruction of the
// sm90 shape) summed exactly with c and rounded once; no alignment floor, IEEE overflow.
// (Built in one expression: clang 14 refuses, in a constant expression, to copy a Datapath whose
// alignment_fraction_bits is empty, as `return dp;` would.)
constexpr Datapath exact(const FloatFormat& input, const FloatFormat& accumulator, int k,
                         Rounding rounding) {
  return Datapath{
      .input = input,
      .accumulator = accumulator,
      .instruction_k = k,
      .block_terms = k,
      .k_group = k,
      .alignment_fraction_bits = std::nullopt,
      .alignment_floor = kNoAlignmentFloor,
      .block_rounding = rounding,
      .block_result_precision = accumulator.fraction_bits + 1,
      .c_entry = AccumulatorEntry::aligned_in_first_block,
      .overflow = Overflow::ieee,
      .zero_sign = ZeroSign::ieee,
      .nan_bits = accumulator == formats::fp32 ? kGpuFp32Nan : kFp16Nan,
  };
}

using formats::bf16;
using formats::e2m1;
using formats::e2m3;
using formats::e3m2;
using formats::e4m3;
using formats::e5m2;
using formats::fp16;
using formats::fp32;
using formats::tf32;
constexpr Rounding rn = Rounding::nearest_even;
constexpr Rounding rz = Rounding::toward_zero;

// Every preset: one row per architecture, instruction shape, input and accumulator the hardware
// has. The order is that of `tcemu presets` and all_presets(): architectures as preset_names()
// lists them, then instructions (mma.sync shapes by increasing K, wgmma, tcgen05), then inputs
// fp16, bf16, tf32, e4m3, e5m2, then accumulators fp32, fp16. Only fp16 and fp8 inputs have an
// fp16-accumulator MMA. The last field says where the row comes from, as docs/presets.md marks
// it: lit (published: Fasi et al. 2021, Khattak and Mikaitis 2025, FTTN 2024, MMA-Sim 2025),
// cap (fits the GPU captures of Khattak and Mikaitis), ours (measured on the lent H100 and H200:
// docs/presets.md gives the GPU, date, command and SASS), inferred (no measurement or publication
// of this shape: the block structure of the architecture's measured shape applied to this K, as
// the row's comment says).
constexpr PresetEntry kMeasuredPresets[] = {
    // V100: only m8n8k4 (HMMA.884): 4-term blocks, no extra alignment bit (Fasi et al. 2021).
    {"sm70", "mma.sync.m8n8k4", block(fp16, fp32, 4, 4, 23), "lit; cap (V100)"},
    {"sm70", "mma.sync.m8n8k4", block(fp16, fp16, 4, 4, 23), "lit; cap (V100)"},
    // T4: m16n8k8 (HMMA.1688) in 8-term blocks with one extra bit (lit; no published T4 data).
    {"sm75", "mma.sync.m16n8k8", block(fp16, fp32, 8, 8, 24), "lit"},
    {"sm75", "mma.sync.m16n8k8", block(fp16, fp16, 8, 8, 24), "lit"},
    // A100/A2: m16n8k16 runs as two 8-term halves, m16n8k8 tf32 as two 4-term halves; one extra
    // bit (lit; cap A100, A2). The half-K shapes are one such half each (lit: the captures of
    // A100/A2 are K = 8 rows for fp16/bf16 and K = 4 for tf32).
    {"sm80", "mma.sync.m16n8k4", block(tf32, fp32, 4, 4, 24), "lit; cap (A100, A2: K = 4)"},
    {"sm80", "mma.sync.m16n8k8", block(fp16, fp32, 8, 8, 24), "lit; cap (A100, A2: K = 8)"},
    {"sm80", "mma.sync.m16n8k8", block(fp16, fp16, 8, 8, 24), "lit; cap (A100, A2: K = 8)"},
    {"sm80", "mma.sync.m16n8k8", block(bf16, fp32, 8, 8, 24), "lit; cap (A100, A2: K = 8)"},
    {"sm80", "mma.sync.m16n8k8", block(tf32, fp32, 8, 4, 24), "lit; cap (A100, A2)"},
    {"sm80", "mma.sync.m16n8k16", block(fp16, fp32, 16, 8, 24), "lit; cap (A100, A2)"},
    {"sm80", "mma.sync.m16n8k16", block(fp16, fp16, 16, 8, 24), "lit; cap (A100, A2)"},
    {"sm80", "mma.sync.m16n8k16", block(bf16, fp32, 16, 8, 24), "lit; cap (A100, A2)"},
    // Ada/L40S: fp16, bf16 and tf32 as sm80; m16n8k32 fp8 in two 16-term blocks of the narrow
    // fp8 datapath (lit; cap Ada, L40S); m16n8k16 fp8 one such block (inferred).
    {"sm89", "mma.sync.m16n8k4", block(tf32, fp32, 4, 4, 24), "lit; cap (Ada, L40S: K = 4)"},
    {"sm89", "mma.sync.m16n8k8", block(fp16, fp32, 8, 8, 24), "lit; cap (Ada, L40S: K = 8)"},
    {"sm89", "mma.sync.m16n8k8", block(fp16, fp16, 8, 8, 24), "lit; cap (Ada, L40S: K = 8)"},
    {"sm89", "mma.sync.m16n8k8", block(bf16, fp32, 8, 8, 24), "lit; cap (Ada, L40S: K = 8)"},
    {"sm89", "mma.sync.m16n8k8", block(tf32, fp32, 8, 4, 24), "lit; cap (Ada, L40S)"},
    {"sm89", "mma.sync.m16n8k16", block(fp16, fp32, 16, 8, 24), "lit; cap (Ada, L40S)"},
    {"sm89", "mma.sync.m16n8k16", block(fp16, fp16, 16, 8, 24), "lit; cap (Ada, L40S)"},
    {"sm89", "mma.sync.m16n8k16", block(bf16, fp32, 16, 8, 24), "lit; cap (Ada, L40S)"},
    {"sm89", "mma.sync.m16n8k16", narrow_fp8(e4m3, fp32, 16, 16), "inferred (one k32 block)"},
    {"sm89", "mma.sync.m16n8k16", narrow_fp8(e4m3, fp16, 16, 16), "inferred (one k32 block)"},
    {"sm89", "mma.sync.m16n8k16", narrow_fp8(e5m2, fp32, 16, 16), "inferred (one k32 block)"},
    {"sm89", "mma.sync.m16n8k16", narrow_fp8(e5m2, fp16, 16, 16), "inferred (one k32 block)"},
    {"sm89", "mma.sync.m16n8k32", narrow_fp8(e4m3, fp32, 32, 16), "lit; cap (Ada, L40S)"},
    {"sm89", "mma.sync.m16n8k32", narrow_fp8(e4m3, fp16, 32, 16), "lit; cap (Ada, L40S)"},
    {"sm89", "mma.sync.m16n8k32", narrow_fp8(e5m2, fp32, 32, 16), "lit; cap (Ada, L40S)"},
    {"sm89", "mma.sync.m16n8k32", narrow_fp8(e5m2, fp16, 32, 16), "lit; cap (Ada, L40S)"},
    // H100/H200 mma.sync: one block per HMMA instruction with two extra bits, for every shape
    // (lit and cap for m16n8k16; ours for every shape: docs/presets.md). fp8 is converted to fp16
    // and run as two HMMAs of interleaved pairs of k, from 0, c added after them by an RN
    // addition: m16n8k32 as two 16-term HMMA.16816, m16n8k16 as two 8-term HMMA.1688 (ours).
    // m8n8k4 is no tensor-core instruction here: ptxas emulates it (HFMA2.MMA), and with an fp32
    // accumulator it is a chain of round-to-nearest FMAs from 0 with c added last (ours); the
    // fp16-accumulator m8n8k4 fits no datapath of this model and has no preset (docs/presets.md).
    {"sm90", "mma.sync.m8n8k4", fma_chain(fp16, fp32, 4), "ours"},
    {"sm90", "mma.sync.m16n8k4", hopper(block(tf32, fp32, 4, 4, 25)), "ours"},
    {"sm90", "mma.sync.m16n8k8", hopper(block(fp16, fp32, 8, 8, 25)), "ours"},
    {"sm90", "mma.sync.m16n8k8", hopper(block(fp16, fp16, 8, 8, 25)), "ours"},
    {"sm90", "mma.sync.m16n8k8", hopper(block(bf16, fp32, 8, 8, 25)), "ours"},
    {"sm90", "mma.sync.m16n8k8", hopper(block(tf32, fp32, 8, 8, 25)), "lit; cap (K = 4); ours"},
    {"sm90", "mma.sync.m16n8k16", hopper(block(fp16, fp32, 16, 16, 25)), "lit; cap; ours"},
    {"sm90", "mma.sync.m16n8k16", hopper(block(fp16, fp16, 16, 16, 25)), "lit; cap; ours"},
    {"sm90", "mma.sync.m16n8k16", hopper(block(bf16, fp32, 16, 16, 25)), "lit; cap; ours"},
    {"sm90", "mma.sync.m16n8k16", hopper(fp8_halves(e4m3, fp32, 16)), "ours"},
    {"sm90", "mma.sync.m16n8k16", hopper(fp8_halves(e4m3, fp16, 16)), "ours"},
    {"sm90", "mma.sync.m16n8k16", hopper(fp8_halves(e5m2, fp32, 16)), "ours"},
    {"sm90", "mma.sync.m16n8k16", hopper(fp8_halves(e5m2, fp16, 16)), "ours"},
    {"sm90", "mma.sync.m16n8k32", hopper(fp8_halves(e4m3, fp32, 32)), "ours; cap (fp16 acc)"},
    {"sm90", "mma.sync.m16n8k32", hopper(fp8_halves(e4m3, fp16, 32)), "ours; cap (fp16 acc)"},
    {"sm90", "mma.sync.m16n8k32", hopper(fp8_halves(e5m2, fp32, 32)), "ours; cap (fp16 acc)"},
    {"sm90", "mma.sync.m16n8k32", hopper(fp8_halves(e5m2, fp16, 32)), "ours; cap (fp16 acc)"},
    // H100/H200 wgmma (m64nNkK, the same datapath for every N; measured at N = 8): fp16, bf16 and
    // tf32 as mma.sync (ours). fp8: one 32-term block of the narrow fp8 datapath (lit; cap: the
    // H100/H200 fp8 sets with an fp32 accumulator, which our mma.sync measurements show cannot
    // come from mma.sync; ours, both accumulators).
    {"sm90", "wgmma", hopper(block(fp16, fp32, 16, 16, 25)), "ours"},
    {"sm90", "wgmma", hopper(block(fp16, fp16, 16, 16, 25)), "ours"},
    {"sm90", "wgmma", hopper(block(bf16, fp32, 16, 16, 25)), "ours"},
    {"sm90", "wgmma", hopper(block(tf32, fp32, 8, 8, 25)), "ours"},
    {"sm90", "wgmma", hopper(narrow_fp8(e4m3, fp32, 32, 32)), "lit; cap; ours"},
    {"sm90", "wgmma", hopper(narrow_fp8(e4m3, fp16, 32, 32)), "lit; ours"},
    {"sm90", "wgmma", hopper(narrow_fp8(e5m2, fp32, 32, 32)), "lit; cap; ours"},
    {"sm90", "wgmma", hopper(narrow_fp8(e5m2, fp16, 32, 32)), "lit; ours"},
    // B200 mma.sync: every shape as sm90 but with the literature's floor and zero sign (lit; cap
    // B200 for m16n8k16 fp16/bf16 and m16n8k32 fp8: fitted; the other shapes inferred from
    // sm90's: CUDA 13.0 compiles each to the same SASS for sm_100a as for sm_90a). m8n8k4 compiles
    // to an emulation we have not measured there: no preset.
    {"sm100", "mma.sync.m16n8k4", block(tf32, fp32, 4, 4, 25), "inferred (sm90 shape)"},
    {"sm100", "mma.sync.m16n8k8", block(fp16, fp32, 8, 8, 25), "inferred (sm90 shape)"},
    {"sm100", "mma.sync.m16n8k8", block(fp16, fp16, 8, 8, 25), "inferred (sm90 shape)"},
    {"sm100", "mma.sync.m16n8k8", block(bf16, fp32, 8, 8, 25), "inferred (sm90 shape)"},
    {"sm100", "mma.sync.m16n8k8", block(tf32, fp32, 8, 8, 25), "lit; cap (B200: K = 4)"},
    {"sm100", "mma.sync.m16n8k16", block(fp16, fp32, 16, 16, 25), "lit; cap (B200)"},
    {"sm100", "mma.sync.m16n8k16", block(fp16, fp16, 16, 16, 25), "lit; cap (B200)"},
    {"sm100", "mma.sync.m16n8k16", block(bf16, fp32, 16, 16, 25), "lit; cap (B200)"},
    {"sm100", "mma.sync.m16n8k16", fp8_halves(e4m3, fp32, 16), "inferred (sm90's SASS)"},
    {"sm100", "mma.sync.m16n8k16", fp8_halves(e4m3, fp16, 16), "inferred (sm90's SASS)"},
    {"sm100", "mma.sync.m16n8k16", fp8_halves(e5m2, fp32, 16), "inferred (sm90's SASS)"},
    {"sm100", "mma.sync.m16n8k16", fp8_halves(e5m2, fp16, 16), "inferred (sm90's SASS)"},
    {"sm100", "mma.sync.m16n8k32", fp8_halves(e4m3, fp32, 32), "cap (B200: fitted)"},
    {"sm100", "mma.sync.m16n8k32", fp8_halves(e4m3, fp16, 32), "cap (B200: fitted)"},
    {"sm100", "mma.sync.m16n8k32", fp8_halves(e5m2, fp32, 32), "cap (B200: fitted)"},
    {"sm100", "mma.sync.m16n8k32", fp8_halves(e5m2, fp16, 32), "cap (B200: fitted)"},
    // B200 tcgen05 kind::f16 and kind::tf32: one block of 32 bytes of inputs with two extra bits,
    // as MMA-Sim 2.1.1 models them (blackwell()); kind::f8f6f4 follows in kBlackwellPresets.
    {"sm100", "tcgen05", blackwell(block(fp16, fp32, 16, 16, 25)), "MMA-Sim 2.1.1"},
    {"sm100", "tcgen05", blackwell(block(fp16, fp16, 16, 16, 25)), "MMA-Sim 2.1.1"},
    {"sm100", "tcgen05", blackwell(block(bf16, fp32, 16, 16, 25)), "MMA-Sim 2.1.1"},
    {"sm100", "tcgen05", blackwell(block(tf32, fp32, 8, 8, 25)), "MMA-Sim 2.1.1"},
};

// Ootomo and Yokota's idealised RN and RZ Tensor Cores, one block per sm90-shaped
// instruction: 16 terms, tf32 8, fp8 32.
constexpr PresetEntry kIdealisedPresets[] = {
    {"exact-rn", "mma.sync", exact(fp16, fp32, 16, rn), "idealised"},
    {"exact-rn", "mma.sync", exact(fp16, fp16, 16, rn), "idealised"},
    {"exact-rn", "mma.sync", exact(bf16, fp32, 16, rn), "idealised"},
    {"exact-rn", "mma.sync", exact(tf32, fp32, 8, rn), "idealised"},
    {"exact-rn", "mma.sync", exact(e4m3, fp32, 32, rn), "idealised"},
    {"exact-rn", "mma.sync", exact(e4m3, fp16, 32, rn), "idealised"},
    {"exact-rn", "mma.sync", exact(e5m2, fp32, 32, rn), "idealised"},
    {"exact-rn", "mma.sync", exact(e5m2, fp16, 32, rn), "idealised"},
    {"exact-rz", "mma.sync", exact(fp16, fp32, 16, rz), "idealised"},
    {"exact-rz", "mma.sync", exact(fp16, fp16, 16, rz), "idealised"},
    {"exact-rz", "mma.sync", exact(bf16, fp32, 16, rz), "idealised"},
    {"exact-rz", "mma.sync", exact(tf32, fp32, 8, rz), "idealised"},
    {"exact-rz", "mma.sync", exact(e4m3, fp32, 32, rz), "idealised"},
    {"exact-rz", "mma.sync", exact(e4m3, fp16, 32, rz), "idealised"},
    {"exact-rz", "mma.sync", exact(e5m2, fp32, 32, rz), "idealised"},
    {"exact-rz", "mma.sync", exact(e5m2, fp16, 32, rz), "idealised"},
};

// Blackwell's FP8/FP6/FP4 and block-scaled rows, and sm_120's mma.sync (RTX Blackwell), all as
// MMA-Sim 2.1.1 models them (no GPU of ours has them: docs/presets.md). Generated, since
// kind::f8f6f4 takes every pair of its five formats: sm100 tcgen05 kind::f8f6f4 (K = 32, fp32 and
// fp16 results), kind::mxf8f6f4.block32 (ue8m0 scales), kind::mxf4.block32, kind::mxf4nvf4.block32
// (ue8m0) and .block16 (ue8m0 or ue4m3: NVFP4); then sm120's mma.sync shapes of sm_80 and sm_89
// with the Blackwell datapath (one block of 32 bytes of inputs), m16n8k32 kind::f8f6f4 and the same
// block-scaled kinds as mma.sync shapes.
constexpr FloatFormat kF8F6F4[] = {e5m2, e4m3, e3m2, e2m3, e2m1};
constexpr std::size_t kBlackwellRows = 79 + 95;

constexpr auto blackwell_rows() {
  std::array<PresetEntry, kBlackwellRows> rows{};
  std::size_t at = 0;
  const auto add = [&](std::string_view arch, std::string_view instruction, const Datapath& dp) {
    rows[at++] = PresetEntry{arch, instruction, dp, "MMA-Sim 2.1.1"};
  };
  const auto block_scaled = [&](std::string_view arch, std::string_view mxf8f6f4_name,
                                std::string_view mxf4_name, std::string_view mxf4nvf4_32_name,
                                std::string_view nvf4_ue8m0_name, std::string_view nvf4_name) {
    for (const FloatFormat& a : kF8F6F4) {
      for (const FloatFormat& b : kF8F6F4) add(arch, mxf8f6f4_name, mxf8f6f4(a, b));
    }
    add(arch, mxf4_name, mxf4(formats::ue8m0, 32));
    add(arch, mxf4nvf4_32_name, mxf4(formats::ue8m0, 32));
    add(arch, nvf4_ue8m0_name, mxf4(formats::ue8m0, 16));
    add(arch, nvf4_name, mxf4(formats::ue4m3, 16));
  };
  for (const FloatFormat& acc : {fp32, fp16}) {
    for (const FloatFormat& a : kF8F6F4) {
      for (const FloatFormat& b : kF8F6F4) add("sm100", "tcgen05", f8f6f4(a, b, acc, 32));
    }
  }
  block_scaled("sm100", "tcgen05.mxf8f6f4.block32", "tcgen05.mxf4.block32",
               "tcgen05.mxf4nvf4.block32", "tcgen05.mxf4nvf4.block16.ue8m0",
               "tcgen05.mxf4nvf4.block16.ue4m3");
  add("sm120", "mma.sync.m16n8k4", blackwell(block(tf32, fp32, 4, 4, 25)));
  add("sm120", "mma.sync.m16n8k8", blackwell(block(fp16, fp32, 8, 8, 25)));
  add("sm120", "mma.sync.m16n8k8", blackwell(block(fp16, fp16, 8, 8, 25)));
  add("sm120", "mma.sync.m16n8k8", blackwell(block(bf16, fp32, 8, 8, 25)));
  add("sm120", "mma.sync.m16n8k8", blackwell(block(tf32, fp32, 8, 8, 25)));
  add("sm120", "mma.sync.m16n8k16", blackwell(block(fp16, fp32, 16, 16, 25)));
  add("sm120", "mma.sync.m16n8k16", blackwell(block(fp16, fp16, 16, 16, 25)));
  add("sm120", "mma.sync.m16n8k16", blackwell(block(bf16, fp32, 16, 16, 25)));
  for (const FloatFormat& acc : {fp32, fp16}) {
    for (const FloatFormat& a : {e4m3, e5m2}) {
      for (const FloatFormat& b : {e4m3, e5m2})
        add("sm120", "mma.sync.m16n8k16", f8f6f4(a, b, acc, 16));
    }
  }
  for (const FloatFormat& acc : {fp32, fp16}) {
    for (const FloatFormat& a : kF8F6F4) {
      for (const FloatFormat& b : kF8F6F4) add("sm120", "mma.sync.m16n8k32", f8f6f4(a, b, acc, 32));
    }
  }
  block_scaled("sm120", "mma.sync.m16n8k32.mxf8f6f4.block32", "mma.sync.m16n8k64.mxf4.block32",
               "mma.sync.m16n8k64.mxf4nvf4.block32", "mma.sync.m16n8k64.mxf4nvf4.block16.ue8m0",
               "mma.sync.m16n8k64.mxf4nvf4.block16.ue4m3");
  if (at != kBlackwellRows) throw "kBlackwellRows does not count the rows";
  return rows;
}
constexpr auto kBlackwellPresets = blackwell_rows();

// WMMA fragment shapes and the mma.sync shape each compiles to, per architecture: a WMMA
// instruction is one or more of those mma.sync instructions over the fragment (each output
// element is computed by one chain of them in k order), so it has that shape's datapath. Seen
// with cuobjdump -sass for the CUDA 13.0 targets sm_75 to sm_100a (scripts/shape_sass.sh,
// docs/presets.md): fp16/bf16 k16 shapes are two HMMA.16816 (sm75: four HMMA.1688), tf32
// m16n16k8 is four HMMA.1684, i.e. a chain of two k4 instructions per element (measured on the
// H100). sm70: the literature (HMMA.884, Jia et al. 2018; Fasi et al. 2021 measured V100
// through WMMA).
struct WmmaShape {
  std::string_view arch;
  std::string_view name;
  FloatFormat input;
  std::string_view compiles_to;
};
constexpr WmmaShape kWmma[] = {
    {"sm70", "wmma.m16n16k16", fp16, "mma.sync.m8n8k4"},
    {"sm70", "wmma.m32n8k16", fp16, "mma.sync.m8n8k4"},
    {"sm70", "wmma.m8n32k16", fp16, "mma.sync.m8n8k4"},
    {"sm75", "wmma.m16n16k16", fp16, "mma.sync.m16n8k8"},
    {"sm75", "wmma.m32n8k16", fp16, "mma.sync.m16n8k8"},
    {"sm75", "wmma.m8n32k16", fp16, "mma.sync.m16n8k8"},
    {"sm80", "wmma.m16n16k16", fp16, "mma.sync.m16n8k16"},
    {"sm80", "wmma.m16n16k16", bf16, "mma.sync.m16n8k16"},
    {"sm80", "wmma.m32n8k16", fp16, "mma.sync.m16n8k16"},
    {"sm80", "wmma.m32n8k16", bf16, "mma.sync.m16n8k16"},
    {"sm80", "wmma.m8n32k16", fp16, "mma.sync.m16n8k16"},
    {"sm80", "wmma.m8n32k16", bf16, "mma.sync.m16n8k16"},
    {"sm80", "wmma.m16n16k8", tf32, "mma.sync.m16n8k4"},
    {"sm89", "wmma.m16n16k16", fp16, "mma.sync.m16n8k16"},
    {"sm89", "wmma.m16n16k16", bf16, "mma.sync.m16n8k16"},
    {"sm89", "wmma.m32n8k16", fp16, "mma.sync.m16n8k16"},
    {"sm89", "wmma.m32n8k16", bf16, "mma.sync.m16n8k16"},
    {"sm89", "wmma.m8n32k16", fp16, "mma.sync.m16n8k16"},
    {"sm89", "wmma.m8n32k16", bf16, "mma.sync.m16n8k16"},
    {"sm89", "wmma.m16n16k8", tf32, "mma.sync.m16n8k4"},
    {"sm90", "wmma.m16n16k16", fp16, "mma.sync.m16n8k16"},
    {"sm90", "wmma.m16n16k16", bf16, "mma.sync.m16n8k16"},
    {"sm90", "wmma.m32n8k16", fp16, "mma.sync.m16n8k16"},
    {"sm90", "wmma.m32n8k16", bf16, "mma.sync.m16n8k16"},
    {"sm90", "wmma.m8n32k16", fp16, "mma.sync.m16n8k16"},
    {"sm90", "wmma.m8n32k16", bf16, "mma.sync.m16n8k16"},
    {"sm90", "wmma.m16n16k8", tf32, "mma.sync.m16n8k4"},
    {"sm100", "wmma.m16n16k16", fp16, "mma.sync.m16n8k16"},
    {"sm100", "wmma.m16n16k16", bf16, "mma.sync.m16n8k16"},
    {"sm100", "wmma.m32n8k16", fp16, "mma.sync.m16n8k16"},
    {"sm100", "wmma.m32n8k16", bf16, "mma.sync.m16n8k16"},
    {"sm100", "wmma.m8n32k16", fp16, "mma.sync.m16n8k16"},
    {"sm100", "wmma.m8n32k16", bf16, "mma.sync.m16n8k16"},
    {"sm100", "wmma.m16n16k8", tf32, "mma.sync.m16n8k4"},
};

constexpr bool same_key(const PresetEntry& row, std::string_view arch, std::string_view instruction,
                        const FloatFormat& input, const FloatFormat& input_b,
                        const FloatFormat& accumulator) {
  return row.arch == arch && row.instruction == instruction && row.datapath.input == input &&
         row.datapath.b_format() == input_b && row.datapath.accumulator == accumulator;
}

// No key twice; the rows of one architecture together, and those of one instruction of it
// (preset_names() and instruction_names() list them in the order they first appear).
constexpr bool well_formed(const auto& table) {
  for (std::size_t j = 1; j < std::size(table); ++j) {
    const PresetEntry& row = table[j];
    const PresetEntry& previous = table[j - 1];
    for (std::size_t i = 0; i < j; ++i) {
      const PresetEntry& earlier = table[i];
      if (same_key(earlier, row.arch, row.instruction, row.datapath.input, row.datapath.b_format(),
                   row.datapath.accumulator))
        return false;
      if (earlier.arch == row.arch && previous.arch != row.arch) return false;
      if (earlier.arch == row.arch && earlier.instruction == row.instruction &&
          previous.instruction != row.instruction)
        return false;
    }
  }
  return true;
}
static_assert(well_formed(kMeasuredPresets));
static_assert(well_formed(kIdealisedPresets));

// Every WMMA row names an mma.sync shape of its architecture that takes its input.
constexpr bool wmma_resolves(const auto& wmma, const auto& table) {
  for (const WmmaShape& w : wmma) {
    if (std::none_of(std::begin(table), std::end(table), [&](const PresetEntry& row) {
          return row.arch == w.arch && row.instruction == w.compiles_to &&
                 row.datapath.input == w.input;
        }))
      return false;
  }
  return true;
}
static_assert(wmma_resolves(kWmma, kMeasuredPresets));

// Every preset in the order of `tcemu presets`: the measured and published rows, Blackwell's,
// the idealised ones.
const std::vector<PresetEntry>& table() {
  static const std::vector<PresetEntry> rows = [] {
    std::vector<PresetEntry> all(std::begin(kMeasuredPresets), std::end(kMeasuredPresets));
    all.insert(all.end(), kBlackwellPresets.begin(), kBlackwellPresets.end());
    all.insert(all.end(), std::begin(kIdealisedPresets), std::end(kIdealisedPresets));
    // The whole table is too long for a constant expression's step limit (clang), so its
    // well_formed() check runs once here.
    if (!well_formed(all))
      throw std::logic_error("presets.cpp: the preset table is not well formed");
    return all;
  }();
  return rows;
}

constexpr std::string_view kMmaSync = "mma.sync";
constexpr std::string_view kShapePrefix = "mma.sync.";

// The numbers of the ".mMnNkK" part of a name (m, n, k): its last dot-separated part, or the
// one before a block-scaled kind (mma.sync.m16n8k64.mxf4nvf4.block16.ue4m3); nullopt if none.
struct Mnk {
  int m, n, k;
};
std::optional<Mnk> shape_of_part(std::string_view part) {
  int values[3] = {0, 0, 0};
  const char letters[3] = {'m', 'n', 'k'};
  std::size_t at = 0;
  for (int i = 0; i < 3; ++i) {
    if (at >= part.size() || part[at] != letters[i]) return std::nullopt;
    ++at;
    const std::size_t digits = at;
    while (at < part.size() && part[at] >= '0' && part[at] <= '9' && at - digits < 4) {
      values[i] = values[i] * 10 + (part[at] - '0');
      ++at;
    }
    if (at == digits) return std::nullopt;
  }
  if (at != part.size()) return std::nullopt;
  return Mnk{values[0], values[1], values[2]};
}
std::optional<Mnk> shape_of(std::string_view name) {
  const std::size_t last = name.rfind('.');
  if (last == std::string_view::npos) return std::nullopt;
  if (const auto mnk = shape_of_part(name.substr(last + 1))) return mnk;
  const std::size_t kind = name.find(".mx");
  if (kind == std::string_view::npos) return std::nullopt;
  const std::size_t before = name.rfind('.', kind - 1);
  if (before == std::string_view::npos) return std::nullopt;
  return shape_of_part(name.substr(before + 1, kind - before - 1));
}

const PresetEntry* find_row(std::string_view arch, std::string_view instruction,
                            const FloatFormat& input, const FloatFormat& input_b,
                            const FloatFormat& accumulator) {
  for (const PresetEntry& row : table()) {
    if (same_key(row, arch, instruction, input, input_b, accumulator)) return &row;
  }
  return nullptr;
}

// The row an instruction name stands for: the row of that name; for "mma.sync" the mma.sync
// shape of the largest K; for a WMMA shape the mma.sync shape it compiles to; for wgmma.m64nNkK
// (N a multiple of 8 up to 256, K the wgmma K of the input) the wgmma row. nullptr: none.
const PresetEntry* resolve(std::string_view arch, std::string_view instruction,
                           const FloatFormat& input, const FloatFormat& input_b,
                           const FloatFormat& accumulator) {
  if (const PresetEntry* row = find_row(arch, instruction, input, input_b, accumulator)) return row;
  if (instruction == kMmaSync) {
    // The largest-K plain shape: the block-scaled kinds are named, never the default.
    const PresetEntry* best = nullptr;
    for (const PresetEntry& row : table()) {
      if (row.arch == arch && row.instruction.starts_with(kShapePrefix) &&
          !row.datapath.block_scaled() &&
          same_key(row, arch, row.instruction, input, input_b, accumulator) &&
          (best == nullptr || shape_of(row.instruction)->k > shape_of(best->instruction)->k))
        best = &row;
    }
    return best;
  }
  if (instruction.starts_with("wmma.")) {
    const std::string_view target = wmma_target(arch, instruction, input);
    return target.empty() || !(input == input_b)
               ? nullptr
               : find_row(arch, target, input, input_b, accumulator);
  }
  if (instruction.starts_with("wgmma.m64n")) {
    const auto mnk = shape_of(instruction);
    const PresetEntry* row = find_row(arch, "wgmma", input, input_b, accumulator);
    if (mnk && row && mnk->m == 64 && mnk->n >= 8 && mnk->n <= 256 && mnk->n % 8 == 0 &&
        mnk->k == row->datapath.instruction_k)
      return row;
  }
  return nullptr;
}

std::string joined(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::string_view name : names) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

[[noreturn]] void unsupported(std::string_view arch, std::string_view instruction,
                              const FloatFormat& input, const FloatFormat& input_b,
                              const FloatFormat& accumulator) {
  const std::string inputs = input == input_b
                                 ? std::string(input.name)
                                 : std::string(input.name) + " x " + std::string(input_b.name);
  std::string message = "no preset: " + std::string(arch) + " " + std::string(instruction) +
                        " has no " + inputs + " MMA with an " + std::string(accumulator.name) +
                        " accumulator";
  const std::vector<std::string_view> all = instruction_names(arch);
  const std::vector<std::string_view> fitting =
      instruction_names(arch, input, input_b, accumulator);
  if (std::find(all.begin(), all.end(), instruction) == all.end() &&
      !instruction.starts_with("wgmma.m64n")) {
    message += "; " + std::string(arch) + " has no instruction '" + std::string(instruction) + "'";
  }
  if (fitting.empty()) {
    message += "; " + std::string(arch) + " has no " + inputs + " -> " +
               std::string(accumulator.name) + " MMA at all (its instructions: " + joined(all) +
               ")";
  } else {
    message += "; " + std::string(arch) + " runs " + inputs + " -> " +
               std::string(accumulator.name) + " on: " + joined(fitting);
  }
  throw std::invalid_argument(message);
}

}  // namespace

Datapath block_datapath(const FloatFormat& input, const FloatFormat& accumulator, int instruction_k,
                        int block_terms, int fraction_bits) {
  return block(input, accumulator, instruction_k, block_terms, fraction_bits);
}

std::vector<std::string_view> preset_names() {
  std::vector<std::string_view> out;
  for (const PresetEntry& row : table()) {
    if (std::find(out.begin(), out.end(), row.arch) == out.end()) out.push_back(row.arch);
  }
  return out;
}

std::vector<std::string_view> instruction_names(std::string_view arch) {
  std::vector<std::string_view> out;
  const auto add = [&](std::string_view name) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  };
  add(kMmaSync);  // every architecture, and the default path of an unknown one
  for (const PresetEntry& row : table()) {
    if (row.arch == arch && row.instruction.starts_with(kShapePrefix)) add(row.instruction);
  }
  for (const WmmaShape& w : kWmma) {
    if (w.arch == arch) add(w.name);
  }
  for (const PresetEntry& row : table()) {
    if (row.arch == arch) add(row.instruction);
  }
  return out;
}

std::vector<std::string_view> instruction_names(std::string_view arch, const FloatFormat& input,
                                                const FloatFormat& input_b,
                                                const FloatFormat& accumulator) {
  std::vector<std::string_view> out;
  for (std::string_view name : instruction_names(arch)) {
    if (resolve(arch, name, input, input_b, accumulator)) out.push_back(name);
  }
  return out;
}

std::vector<std::string_view> instruction_names(std::string_view arch, const FloatFormat& input,
                                                const FloatFormat& accumulator) {
  return instruction_names(arch, input, input, accumulator);
}

std::string_view wmma_target(std::string_view arch, std::string_view wmma,
                             const FloatFormat& input) {
  for (const WmmaShape& w : kWmma) {
    if (w.arch == arch && w.name == wmma && w.input == input) return w.compiles_to;
  }
  return {};
}

Datapath preset(std::string_view arch, const FloatFormat& input, const FloatFormat& accumulator,
                std::string_view instruction) {
  return preset(arch, input, input, accumulator, instruction);
}

Datapath preset(std::string_view arch, const FloatFormat& input, const FloatFormat& input_b,
                const FloatFormat& accumulator, std::string_view instruction) {
  if (const PresetEntry* row = resolve(arch, instruction, input, input_b, accumulator)) {
    Datapath dp = row->datapath;
    // FloatFormat's == compares fields, not names: the caller's formats are the ones returned.
    dp.input = input;
    if (dp.has_input_b) dp.input_b = input_b;
    dp.accumulator = accumulator;
    return dp;
  }
  // Not in the table. An architecture that has no row is named as unknown, except where the
  // accumulator or the instruction alone rules the combination out: an accumulator other than
  // fp32 and fp16, an fp16 accumulator with an input other than fp16 and fp8 (the only inputs
  // with an fp16-accumulator MMA), or an instruction other than mma.sync.
  const bool known_arch = std::any_of(table().begin(), table().end(),
                                      [&](const PresetEntry& row) { return row.arch == arch; });
  const bool fp16_or_fp8_in = input == fp16 || input == e4m3 || input == e5m2;
  const bool possible = accumulator == fp32 || (accumulator == fp16 && fp16_or_fp8_in);
  if (!known_arch && possible && instruction == kMmaSync) {
    throw std::invalid_argument("unknown architecture preset '" + std::string(arch) + "'");
  }
  unsupported(arch, instruction, input, input_b, accumulator);
}

int instruction_shape_k(std::string_view arch, const FloatFormat& input,
                        const FloatFormat& accumulator, std::string_view instruction) {
  const Datapath dp = preset(arch, input, accumulator, instruction);
  const auto mnk = shape_of(instruction);
  return mnk ? mnk->k : dp.instruction_k;
}

void check_shape_k(std::string_view arch, const FloatFormat& input, const FloatFormat& accumulator,
                   std::string_view instruction, std::size_t k) {
  if (!shape_of(instruction)) return;
  const int shape_k = instruction_shape_k(arch, input, accumulator, instruction);
  if (k % static_cast<std::size_t>(shape_k) == 0) return;
  throw std::invalid_argument(
      "K = " + std::to_string(k) + " is not a multiple of " + std::string(instruction) +
      "'s K = " + std::to_string(shape_k) + "; " + std::string(arch) + " runs " +
      std::string(input.name) + " -> " + std::string(accumulator.name) +
      " on: " + joined(instruction_names(arch, input, accumulator)) +
      " (mma.sync, wgmma and tcgen05 take any K as a chain of instructions)");
}

std::vector<PresetEntry> all_presets() {
  return table();
}

std::string describe(const Datapath& dp) {
  std::ostringstream out;
  out << "input=" << dp.input.name << " accumulator=" << dp.accumulator.name
      << " instruction_k=" << dp.instruction_k << " block_terms=" << dp.block_terms
      << " k_group=" << dp.k_group << " alignment_fraction_bits="
      << (dp.alignment_fraction_bits ? std::to_string(*dp.alignment_fraction_bits) : "exact")
      << " alignment_floor=" << dp.alignment_floor
      << " block_rounding=" << name_of(dp.block_rounding)
      << " block_result_precision=" << dp.block_result_precision
      << " c_entry=" << name_of(dp.c_entry) << " overflow=" << name_of(dp.overflow)
      << " zero_sign=" << name_of(dp.zero_sign) << std::hex << " nan_bits=0x" << dp.nan_bits
      << std::dec;
  if (dp.has_input_b) out << " input_b=" << dp.input_b.name;
  if (dp.block_scaled()) {
    const BlockScaling& s = dp.block_scaling;
    out << " scale_block=" << s.scale_block << " scale_a=" << s.scale_a.name
        << " scale_b=" << s.scale_b.name << " group_terms=" << s.group_terms
        << " nan_scale=" << name_of(s.nan_scale);
  }
  return out.str();
}

}  // namespace tcemu
