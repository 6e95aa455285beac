#include "scales.hpp"

#include <nanobind/stl/string.h>

namespace tcemu::python {
namespace {

std::string scaling_words(const Datapath& dp) {
  const BlockScaling& s = dp.block_scaling;
  return "scale_block = " + std::to_string(s.scale_block) + ", " + std::string(s.scale_a.name) +
         "/" + std::string(s.scale_b.name) + " scales";
}

}  // namespace

std::optional<NibbleOrder> fp4_packing(const std::string& caller, const Datapath& datapath,
                                       const PackedArg& packed) {
  std::optional<NibbleOrder> order;
  if (const bool* yes = std::get_if<bool>(&packed)) {
    if (*yes) order = NibbleOrder::high_first;
  } else {
    const std::string& word = std::get<std::string>(packed);
    if (word == "high_first") {
      order = NibbleOrder::high_first;
    } else if (word == "low_first") {
      order = NibbleOrder::low_first;
    } else {
      throw nb::value_error(
          (caller + ": packed must be False, True, 'high_first' or 'low_first', got '" + word + "'")
              .c_str());
    }
  }
  if (order && datapath.input != formats::e2m1 && datapath.b_format() != formats::e2m1) {
    throw nb::value_error((caller + ": packed FP4 asked for, but neither a (" +
                           std::string(datapath.input.name) + ") nor b (" +
                           std::string(datapath.b_format().name) +
                           ") is e2m1: only FP4 codes pack two a byte")
                              .c_str());
  }
  return order;
}

BitMatrix input_matrix(const Operand& op, const FloatFormat& format,
                       std::optional<NibbleOrder> packing, int k_axis) {
  return packing && format == formats::e2m1 ? unpacked_fp4(op, k_axis, *packing)
                                            : bit_matrix(op, format);
}

bool takes_scales(const std::string& caller, const Datapath& datapath, nb::handle scale_a,
                  nb::handle scale_b, const char* shapes) {
  const bool a = !scale_a.is_none(), b = !scale_b.is_none();
  if (!datapath.block_scaled()) {
    if (a || b) {
      throw nb::value_error((caller + ": " + (a ? "scale_a" : "scale_b") +
                             " given, but the datapath is not block-scaled (scale_block = 0): "
                             "drop the scales, or use a block-scaled datapath such as "
                             "preset('sm100', 'e2m1', 'fp32', 'tcgen05.mxf4nvf4.block16.ue4m3')")
                                .c_str());
    }
    return false;
  }
  if (!a || !b) {
    throw nb::value_error(
        (caller + ": the datapath is block-scaled (" + scaling_words(datapath) + "): pass " +
         (!a && !b ? std::string("scale_a and scale_b") : std::string(!a ? "scale_a" : "scale_b")) +
         " (" + shapes + ")")
            .c_str());
  }
  return true;
}

BitMatrix scale_matrix(nb::handle scales, const char* name, const FloatFormat& format,
                       std::int64_t rows, std::int64_t cols, const char* shape) {
  return scale_matrix(operand(scales, name), format, rows, cols, shape);
}

BitMatrix scale_matrix(const Operand& scales, const FloatFormat& format, std::int64_t rows,
                       std::int64_t cols, const char* shape) {
  BitMatrix m = bit_matrix(scales, format);
  if (m.view.rows != rows || m.view.cols != cols) {
    throw nb::value_error((scales.name + " must be " + shape + " = " + std::to_string(rows) +
                           " x " + std::to_string(cols) + ", got " + std::to_string(m.view.rows) +
                           " x " + std::to_string(m.view.cols))
                              .c_str());
  }
  return m;
}

}  // namespace tcemu::python
