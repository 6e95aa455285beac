// quantize_mx(), quantize_nvfp4(): fp32, bf16 or fp16 arrays to the codes and scales of the
// block-scaled formats (tcemu/emulator/quantize.hpp), the scales laid out as the block-scaled GEMM
// takes them (gemm.hpp BlockScales: A's m x s, B's s x n).
#include <cstring>
#include <string>

#include <tcemu/emulator/quantize.hpp>

#include "arrays.hpp"
#include "bindings.hpp"

namespace tcemu::python {
namespace {

// x as a matrix of its own format and the operand its axis names: a 1-D x is one row of k values
// (axis 0 or -1), a 2-D x has its blocks along axis 1 (-1; A, m x k) or axis 0 (-2; B, k x n).
struct Input {
  BitMatrix matrix;
  ScaledOperand operand;
  bool vector;
};

Input input_of(nb::handle x, int axis) {
  const Operand probe = operand(x, "x");
  const std::size_t ndim = probe.array.ndim();
  if (ndim != 1 && ndim != 2) {
    throw nb::value_error(
        ("x: expected a 1-D or 2-D array, got " + std::to_string(ndim) + "-D").c_str());
  }
  const int positive = axis < 0 ? axis + static_cast<int>(ndim) : axis;
  if (positive < 0 || positive >= static_cast<int>(ndim)) {
    throw nb::value_error(
        ("axis " + std::to_string(axis) + " is out of range for a " + std::to_string(ndim) + "-D x")
            .c_str());
  }
  const Operand op = ndim == 1 ? operand(x.attr("reshape")(1, -1), "x") : probe;
  const std::optional<FloatFormat> format = op.typed;
  if (!format ||
      !(*format == formats::fp32 || *format == formats::bf16 || *format == formats::fp16)) {
    throw nb::type_error(("x: dtype " + op.dtype +
                          " is not supported: pass float32, bfloat16 (ml_dtypes) or float16 values")
                             .c_str());
  }
  const bool along_rows = ndim == 1 || positive == 1;
  return {bit_matrix(op, *format), along_rows ? ScaledOperand::a : ScaledOperand::b, ndim == 1};
}

nb::object uint8_array(const std::vector<std::uint8_t>& bytes, std::vector<std::size_t> shape) {
  const NewArray out = new_array(
      shape, {static_cast<std::uint8_t>(nb::dlpack::dtype_code::UInt), 8, 1}, Layout::row_major);
  if (!bytes.empty()) std::memcpy(out.data, bytes.data(), bytes.size());
  return out.object;
}

// (codes, scale_codes) in x's shape and the scales' (a 1-D x gives 1-D arrays).
nb::tuple arrays_of(const QuantizedMatrix& q, bool vector) {
  const auto n = [](std::int64_t v) { return static_cast<std::size_t>(v); };
  if (vector) {
    return nb::make_tuple(uint8_array(q.codes, {n(q.cols)}),
                          uint8_array(q.scales, {n(q.scale_cols)}));
  }
  return nb::make_tuple(uint8_array(q.codes, {n(q.rows), n(q.cols)}),
                        uint8_array(q.scales, {n(q.scale_rows), n(q.scale_cols)}));
}

}  // namespace

void bind_quantize(nb::module_& m) {
  m.def(
      "quantize_mx",
      [](nb::handle x, const FormatArg& element_format, int block, int axis) {
        const FloatFormat element = format_of(element_format);
        const Input in = input_of(x, axis);
        const QuantizedMatrix q = [&] {
          nb::gil_scoped_release release;
          return quantize_mx(in.matrix.view, element, in.operand, block);
        }();
        return arrays_of(q, in.vector);
      },
      nb::arg("x"), nb::arg("element_format"), nb::arg("block") = 32, nb::arg("axis") = -1,
      "Quantizes x (float32, ml_dtypes bfloat16 or float16; 1-D or 2-D) to MX (OCP MX v1.0): per "
      "block of `block` consecutive values along `axis`, the ue8m0 scale 2^(floor(log2(amax)) - "
      "emax) and the elements value / scale rounded to nearest even into element_format (e4m3, "
      "e5m2, e3m2, e2m3 or e2m1), saturating. axis -1 (1) blocks each row (A, m x k), axis 0 "
      "each column (B, k x n). Returns (codes, scale_codes) as uint8 arrays: the codes in x's "
      "shape (one per byte), the scales m x ceil(k / block) for axis -1 and ceil(k / block) x n "
      "for axis 0, as the block-scaled matmul takes them. A block with a NaN or Inf gets the NaN "
      "scale 0xFF; an all-zero block the scale code 0 (2^-127).");
  m.def(
      "quantize_nvfp4",
      [](nb::handle x, int block, int axis) {
        const Input in = input_of(x, axis);
        const QuantizedMatrix q = [&] {
          nb::gil_scoped_release release;
          return quantize_nvfp4(in.matrix.view, in.operand, block);
        }();
        // The tensor scale as a numpy.float32: element 0 of a one-element float32 array.
        const NewArray scale =
            new_array({1}, {static_cast<std::uint8_t>(nb::dlpack::dtype_code::Float), 32, 1});
        std::memcpy(scale.data, &q.tensor_scale, 4);
        const nb::object tensor_scale = scale.object[nb::int_(0)];
        const nb::tuple arrays = arrays_of(q, in.vector);
        return nb::make_tuple(arrays[0], arrays[1], tensor_scale);
      },
      nb::arg("x"), nb::arg("block") = 16, nb::arg("axis") = -1,
      "Quantizes x (float32, ml_dtypes bfloat16 or float16; 1-D or 2-D) to NVFP4 by torchao's "
      "two-level recipe: tensor_scale = amax(x) / 2688 in float32 (1.0 for an all-zero x), per "
      "block of `block` values along `axis` the ue4m3 scale amax / 6 / tensor_scale clamped to "
      "[2^-6, 448], and the e2m1 elements value / (tensor_scale * scale), each step rounded to "
      "nearest even in float32. axis as quantize_mx. Returns (codes, scale_codes, tensor_scale): "
      "uint8 arrays laid out as quantize_mx's and a numpy.float32; a code c of block b stands for "
      "e2m1(c) * ue4m3(scale_b) * tensor_scale.");
}

}  // namespace tcemu::python
