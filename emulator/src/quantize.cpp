#include <tcemu/emulator/quantize.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>

#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/floating_point_scope.hpp>
#include <tcemu/emulator/fp32_bits.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu {
namespace {

using formats::fp32;

// fp32 constants of the NVFP4 recipe, as bit patterns.
constexpr std::uint32_t kOne = 0x3F800000u;            // 1.0
constexpr std::uint32_t kSix = 0x40C00000u;            // 6.0, the largest e2m1 value
constexpr std::uint32_t kTensorDivisor = 0x45280000u;  // 2688.0 = 448 * 6
constexpr std::uint32_t kE4m3Tiny = 0x3C800000u;       // 2^-6, the smallest normal e4m3
constexpr std::uint32_t kE4m3Max = 0x43E00000u;        // 448.0

[[noreturn]] void refuse(const char* caller, const std::string& what) {
  throw std::invalid_argument(std::string(caller) + ": " + what);
}

void check_input(const char* caller, const FloatFormat& input) {
  if (!(input == fp32 || input == formats::bf16 || input == formats::fp16)) {
    refuse(caller, "the values are " + std::string(input.name) + "; fp32, bf16 or fp16 expected");
  }
}

void check_sizes(const char* caller, std::size_t values, std::size_t codes) {
  if (values != codes) {
    refuse(caller, std::to_string(values) + " values but " + std::to_string(codes) + " codes");
  }
}

void check_block(const char* caller, int block) {
  if (block < 1) refuse(caller, "block is " + std::to_string(block) + "; it must be at least 1");
}

// The magnitude of an fp32 pattern. Positive fp32 patterns other than NaN order as their values
// (exponent field above fraction, both unsigned), so the largest magnitude is an integer max.
std::uint32_t magnitude(std::uint32_t bits) {
  return bits & 0x7FFFFFFFu;
}
bool is_nan(std::uint32_t bits) {
  return magnitude(bits) > 0x7F800000u;
}

// One step of the largest magnitude of fp32 patterns as torch.amax(torch.abs(x)) takes it, from
// amax = +0: NaN once any value is NaN.
std::uint32_t amax_with(std::uint32_t amax, std::uint32_t v) {
  return is_nan(amax) || is_nan(v) ? kGpuFp32Nan : std::max(amax, magnitude(v));
}

std::vector<std::uint32_t> to_fp32(const FloatFormat& input,
                                   std::span<const std::uint32_t> values) {
  std::vector<std::uint32_t> out(values.size());
  // Exact: fp32 holds every bf16 and fp16 value, so the rounding is never used.
  for (std::size_t i = 0; i < values.size(); ++i) {
    out[i] = convert(input, fp32, values[i], Rounding::nearest_even);
  }
  return out;
}

std::uint8_t mx_block(const FloatFormat& input, std::span<const std::uint32_t> values,
                      const FloatFormat& element, std::span<std::uint8_t> codes) {
  // floor(log2(amax)) is the exponent of amax's leading bit, the largest over the block's values
  // (subnormals included: their significand has fewer bits). `nonzero` is false for a zero block.
  bool nonzero = false;
  int leading = 0;
  for (const std::uint32_t v : values) {
    const Decoded d = decode(input, v);
    if (d.value_class == ValueClass::nan || d.value_class == ValueClass::infinity) {
      std::fill(codes.begin(), codes.end(),
                static_cast<std::uint8_t>(detail::canonical_nan(element)));
      return 0xFF;
    }
    if (d.value_class != ValueClass::finite) continue;
    const int exponent = d.lsb_exponent + detail::bit_width(d.significand) - 1;
    leading = nonzero ? std::max(leading, exponent) : exponent;
    nonzero = true;
  }
  // X = 2^shared; ue8m0's smallest value 2^-127 is the floor (header: no block reaches its top).
  const int shared = nonzero ? std::max(leading - element.max_exponent(), -127) : -127;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const Decoded d = decode(input, values[i]);
    // value / 2^shared is exact: the same significand, its exponent lowered by shared.
    codes[i] = static_cast<std::uint8_t>(
        d.value_class == ValueClass::zero
            ? encode_zero(element, d.negative)
            : round_pack(element, d.negative, {d.significand, d.lsb_exponent - shared, false},
                         Rounding::nearest_even, Overflow::saturate));
  }
  return static_cast<std::uint8_t>(shared + formats::ue8m0.bias());
}

// The NVFP4 block on fp32 patterns (the recipe of the header, step by step).
std::uint8_t nvfp4_block(std::span<const std::uint32_t> values, std::uint32_t tensor_scale,
                         std::span<std::uint8_t> codes) {
  std::uint32_t amax = 0;
  for (const std::uint32_t v : values) amax = amax_with(amax, v);
  const std::uint32_t block_scale = fp32_div_rn(amax, kSix);
  std::uint32_t s = fp32_div_rn(block_scale, tensor_scale);
  // s is +0, positive or NaN (amax >= 0, tensor_scale > 0 or NaN), so the clamp may compare
  // patterns; torch.clamp keeps a NaN.
  if (!is_nan(s)) s = std::clamp(s, kE4m3Tiny, kE4m3Max);
  // In [2^-6, 448] no rounding leaves e4m3's normal range; NaN gives 0x7F.
  const std::uint32_t code = convert(fp32, formats::e4m3, s, Rounding::nearest_even);
  // Each value times the reciprocal of the combined scale, fp32(fp32(1 / tensor_scale) / scale),
  // as torchao 0.18 computes it (to match the MSLK Triton kernel), not divided by their product.
  const std::uint32_t reciprocal =
      fp32_div_rn(fp32_div_rn(kOne, tensor_scale),
                  convert(formats::e4m3, fp32, code, Rounding::nearest_even));
  for (std::size_t i = 0; i < values.size(); ++i) {
    codes[i] =
        static_cast<std::uint8_t>(convert(fp32, formats::e2m1, fp32_mul_rn(values[i], reciprocal),
                                          Rounding::nearest_even, Overflow::saturate));
  }
  return static_cast<std::uint8_t>(code);
}

// The values of block `j` of line `line` of x: a row's k range (operand a) or a column's.
std::vector<std::uint32_t> block_values(const ConstMatrixView& x, ScaledOperand operand,
                                        std::int64_t line, std::int64_t first, std::int64_t count) {
  std::vector<std::uint32_t> out(static_cast<std::size_t>(count));
  for (std::int64_t t = 0; t < count; ++t) {
    out[static_cast<std::size_t>(t)] =
        operand == ScaledOperand::a ? x.get(line, first + t) : x.get(first + t, line);
  }
  return out;
}

// Runs `quantize_block(values, codes) -> scale code` over every block of x.
template <typename Block>
QuantizedMatrix quantize_blocks(const ConstMatrixView& x, ScaledOperand operand, int block,
                                const FloatFormat& element, const FloatFormat& scale,
                                Block quantize_block) {
  const bool along_rows = operand == ScaledOperand::a;
  const std::int64_t lines = along_rows ? x.rows : x.cols;
  const std::int64_t k = along_rows ? x.cols : x.rows;
  const std::int64_t s = (k + block - 1) / block;
  QuantizedMatrix q{element,
                    scale,
                    x.rows,
                    x.cols,
                    along_rows ? lines : s,
                    along_rows ? s : lines,
                    std::vector<std::uint8_t>(static_cast<std::size_t>(x.rows * x.cols)),
                    std::vector<std::uint8_t>(static_cast<std::size_t>(lines * s))};
  std::vector<std::uint8_t> codes;
  for (std::int64_t line = 0; line < lines; ++line) {
    for (std::int64_t j = 0; j < s; ++j) {
      const std::int64_t first = j * block;
      const std::int64_t count = std::min<std::int64_t>(block, k - first);
      codes.resize(static_cast<std::size_t>(count));
      const std::uint8_t scale_code =
          quantize_block(block_values(x, operand, line, first, count), std::span(codes));
      const std::int64_t scale_index = along_rows ? line * s + j : j * lines + line;
      q.scales[static_cast<std::size_t>(scale_index)] = scale_code;
      for (std::int64_t t = 0; t < count; ++t) {
        const std::int64_t index =
            along_rows ? line * x.cols + first + t : (first + t) * x.cols + line;
        q.codes[static_cast<std::size_t>(index)] = codes[static_cast<std::size_t>(t)];
      }
    }
  }
  return q;
}

}  // namespace

bool is_mx_element_format(const FloatFormat& f) {
  return f == formats::e4m3 || f == formats::e5m2 || f == formats::e3m2 || f == formats::e2m3 ||
         f == formats::e2m1;
}

std::uint8_t quantize_mx_block(const FloatFormat& input, std::span<const std::uint32_t> values,
                               const FloatFormat& element, std::span<std::uint8_t> codes) {
  const FloatingPointScope scope;
  check_input("quantize_mx_block", input);
  if (!is_mx_element_format(element)) {
    refuse("quantize_mx_block", "element format " + std::string(element.name) +
                                    " is not an MX element format (e4m3, e5m2, e3m2, e2m3, e2m1)");
  }
  check_sizes("quantize_mx_block", values.size(), codes.size());
  return mx_block(input, values, element, codes);
}

std::uint32_t nvfp4_tensor_scale(std::uint32_t amax) {
  const FloatingPointScope scope;
  const std::uint32_t scale = fp32_div_rn(amax, kTensorDivisor);
  return magnitude(scale) == 0 ? kOne : scale;
}

std::uint8_t quantize_nvfp4_block(const FloatFormat& input, std::span<const std::uint32_t> values,
                                  std::uint32_t tensor_scale, std::span<std::uint8_t> codes) {
  const FloatingPointScope scope;
  check_input("quantize_nvfp4_block", input);
  check_sizes("quantize_nvfp4_block", values.size(), codes.size());
  if ((tensor_scale & 0x80000000u) != 0 || magnitude(tensor_scale) == 0) {
    refuse("quantize_nvfp4_block",
           "the tensor scale (fp32 bits) is zero or negative; "
           "nvfp4_tensor_scale gives a positive one");
  }
  return nvfp4_block(to_fp32(input, values), tensor_scale, codes);
}

ConstMatrixView QuantizedMatrix::code_view() const {
  return {codes.data(), element, rows, cols, cols, Layout::row_major};
}

ConstMatrixView QuantizedMatrix::scale_view() const {
  return {scales.data(), scale, scale_rows, scale_cols, scale_cols, Layout::row_major};
}

QuantizedMatrix quantize_mx(ConstMatrixView x, const FloatFormat& element, ScaledOperand operand,
                            int block) {
  const FloatingPointScope scope;
  check_input("quantize_mx", x.format);
  if (!is_mx_element_format(element)) {
    refuse("quantize_mx", "element format " + std::string(element.name) +
                              " is not an MX element format (e4m3, e5m2, e3m2, e2m3, e2m1)");
  }
  check_block("quantize_mx", block);
  return quantize_blocks(x, operand, block, element, formats::ue8m0,
                         [&](std::span<const std::uint32_t> values, std::span<std::uint8_t> codes) {
                           return mx_block(x.format, values, element, codes);
                         });
}

QuantizedMatrix quantize_nvfp4(ConstMatrixView x, ScaledOperand operand, int block) {
  const FloatingPointScope scope;
  check_input("quantize_nvfp4", x.format);
  check_block("quantize_nvfp4", block);
  std::uint32_t amax = 0;
  for (std::int64_t i = 0; i < x.rows; ++i) {
    for (std::int64_t j = 0; j < x.cols; ++j) {
      amax = amax_with(amax, convert(x.format, fp32, x.get(i, j), Rounding::nearest_even));
    }
  }
  const std::uint32_t tensor_scale = nvfp4_tensor_scale(amax);
  QuantizedMatrix q =
      quantize_blocks(x, operand, block, formats::e2m1, formats::ue4m3,
                      [&](std::span<const std::uint32_t> values, std::span<std::uint8_t> codes) {
                        return nvfp4_block(to_fp32(x.format, values), tensor_scale, codes);
                      });
  q.tensor_scale = tensor_scale;
  return q;
}

BlockScales block_scales(const QuantizedMatrix& a, const QuantizedMatrix& b) {
  return {a.scale_view(), b.scale_view()};
}

}  // namespace tcemu
