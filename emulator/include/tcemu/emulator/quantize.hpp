// Quantization of fp32, bf16 or fp16 values to the block-scaled formats of Blackwell's tensor
// cores: MX (OCP Microscaling spec v1.0) and NVFP4. Every step is exact integer arithmetic on
// decoded bit fields ending in one round-and-pack (round.hpp), apart from NVFP4's one fp32 multiply
// (fp32_mul_rn, run under a FloatingPointScope), so the bits do not depend on the caller's
// floating-point environment.
//
// MX (spec section 6.3, as its reference implementation microsoft/microxcaling mx/mx_ops.py
// _quantize_mx and torchao's to_mx with ScaleCalculationMode.FLOOR compute it): per block of
// `block` consecutive values along k, the shared scale X = 2^(floor(log2(amax)) - emax_elem) as a
// ue8m0 code, emax_elem the exponent of the element format's largest value (e4m3 8, e5m2 15, e3m2
// 4, e2m3 2, e2m1 2), raised to 2^-127 (code 0) where it would lie below (both references clamp
// there); an all-zero block has no log2 and gets code 0 as both references give (microxcaling
// takes log2 of FP32_MIN_NORMAL for it, torchao the exponent field 0; either clamps to -127).
// Elements are value / X (exact: X is a power of two) rounded to nearest even into the element
// format, saturating to its largest magnitude (the spec's default). A block holding a NaN or an Inf
// gets the NaN scale 0xFF (both references: the block's values are NaN), and each element the
// element format's image of NaN under convert(): 0x7F for e4m3 and e5m2, the largest positive value
// for FP6 and FP4, which have no NaN. The scale never exceeds 2^125 (floor(log2(amax)) <= 127 for
// the inputs, emax_elem >= 2), so no block overflows ue8m0.
//
// NVFP4 (torchao 0.18's nvfp4_quantize with per_tensor_amax_to_scale, the two-level scaling of
// pytorch/ao torchao/prototype/mx_formats/nvfp4_tensor.py, each of its fp32 operations rounded to
// nearest even as IEEE 754 and torch compute them):
//   tensor_scale = fp32(amax_tensor / 2688)            2688 = 448 * 6 (e4m3 and e2m1 maxima)
//   per block of 16: s = fp32(fp32(amax_block / 6) / tensor_scale), clamped to [2^-6, 448]
//     (torchao's E4M3_EPS, the smallest normal e4m3, keeps a block scale off zero), rounded to
//     nearest even into e4m3: the ue4m3 scale code; a NaN s gives 0x7F (NaN)
//   elements: fp32(value * fp32(fp32(1 / tensor_scale) / scale)) rounded to nearest even into
//     e2m1, saturating (torchao clamps to +-6 first, the same result); a NaN product gives 0x7.
//     (torchao 0.18 multiplies by this reciprocal, as the MSLK Triton kernel does; earlier
//     torchao divided by fp32(tensor_scale * scale), which rounds some elements differently.)
// One departure: a tensor scale that rounds to zero (an all-zero tensor, or amax_tensor below
// 2688 * 2^-150) is made 1.0, as Transformer Engine's compute_global_encode_scaling_factor_FP4
// makes a degenerate global scale 1; torchao divides 0 by 0 there and writes NaN. The dequantized
// value of code c in block b is e2m1(c) * ue4m3(scale_b) * tensor_scale.
//
// Layout (gemm.hpp's BlockScales, so that a quantized A and B go straight into emulated_gemm): the
// codes keep the input's shape, one per byte (row major); the scales of A (m x k, blocks along each
// row) are m x ceil(k / block), those of B (k x n, blocks down each column) ceil(k / block) x n.
// A last partial block covers the remaining k.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/matrix.hpp>

namespace tcemu {

// Which operand of a GEMM the matrix is, so which way its blocks run: a (m x k) along each row,
// b (k x n) down each column.
enum class ScaledOperand { a, b };

// The MX element formats: e4m3, e5m2, e3m2, e2m3, e2m1.
bool is_mx_element_format(const FloatFormat& f);

// One MX block: writes the code of each of `values` (bit patterns of `input`: fp32, bf16 or
// fp16) into `codes` (as many) and returns the ue8m0 scale code. Throws std::invalid_argument for
// another input or element format or a size mismatch.
std::uint8_t quantize_mx_block(const FloatFormat& input, std::span<const std::uint32_t> values,
                               const FloatFormat& element, std::span<std::uint8_t> codes);

// NVFP4's per-tensor scale (fp32 bits) for the largest magnitude of a tensor (fp32 bits; NaN if
// the tensor holds one).
std::uint32_t nvfp4_tensor_scale(std::uint32_t amax);

// One NVFP4 block under `tensor_scale` (fp32 bits, from nvfp4_tensor_scale): writes the e2m1 code
// of each of `values` into `codes` and returns the ue4m3 scale code.
std::uint8_t quantize_nvfp4_block(const FloatFormat& input, std::span<const std::uint32_t> values,
                                  std::uint32_t tensor_scale, std::span<std::uint8_t> codes);

// A quantized matrix: codes of `element`, scale codes of `scale`, both row major.
struct QuantizedMatrix {
  FloatFormat element;
  FloatFormat scale;
  std::int64_t rows = 0, cols = 0;              // of the codes: the input's shape
  std::int64_t scale_rows = 0, scale_cols = 0;  // m x s (operand a) or s x n (operand b)
  std::vector<std::uint8_t> codes;
  std::vector<std::uint8_t> scales;
  std::uint32_t tensor_scale = 0x3F800000u;  // fp32 bits: NVFP4's per-tensor scale, 1.0 for MX

  ConstMatrixView code_view() const;
  ConstMatrixView scale_view() const;
};

// Quantizes `x` (fp32, bf16 or fp16 bit patterns) to MX with `element` (is_mx_element_format) and
// ue8m0 scales per `block` k. Throws std::invalid_argument naming the argument: the format of x,
// the element format, block < 1.
QuantizedMatrix quantize_mx(ConstMatrixView x, const FloatFormat& element, ScaledOperand operand,
                            int block = 32);

// Quantizes `x` to NVFP4: e2m1 codes, ue4m3 scales per `block` k, the per-tensor scale from the
// largest magnitude of all of x.
QuantizedMatrix quantize_nvfp4(ConstMatrixView x, ScaledOperand operand, int block = 16);

// The scales of a quantized A and B as emulated_gemm takes them (with a.code_view() and
// b.code_view()). For NVFP4 the GEMM's result times a.tensor_scale * b.tensor_scale approximates
// A B (GemmOptions::alpha can apply it).
BlockScales block_scales(const QuantizedMatrix& a, const QuantizedMatrix& b);

}  // namespace tcemu
