// The arguments of a call on a block-scaled datapath (OCP MX, NVFP4): the operands, FP4 packed
// two codes a byte where the caller says so, and the scales of A and B, checked against the
// datapath and the operands' shapes with messages that name the argument.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/variant.h>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/gemm.hpp>

#include "arrays.hpp"

namespace tcemu::python {

// The `packed` argument of matmul() and mma(): False (one e2m1 code a byte), True or
// "high_first" (two a byte, k = 2j in bits 7:4, as MMA-Sim reads them), "low_first" (k = 2j in
// bits 3:0).
using PackedArg = std::variant<bool, std::string>;

// The nibble order `packed` names, nothing for False. ValueError naming `caller` for another
// word, or where packing is asked for but neither a nor b is e2m1.
std::optional<NibbleOrder> fp4_packing(const std::string& caller, const Datapath& datapath,
                                       const PackedArg& packed);

// An operand of `format`: with `packing`, an e2m1 operand is a uint8 array of two codes a byte
// along `k_axis` (unpacked_fp4); otherwise, and for the other formats, bit_matrix.
BitMatrix input_matrix(const Operand& op, const FloatFormat& format,
                       std::optional<NibbleOrder> packing, int k_axis);

// Whether the call takes scales: true for a block-scaled datapath given both, false for an
// unscaled one given neither. ValueError naming `caller` for scales missing on a block-scaled
// datapath (saying what they are: `shapes`), given to an unscaled one, or only one of the two
// given.
bool takes_scales(const std::string& caller, const Datapath& datapath, nb::handle scale_a,
                  nb::handle scale_b, const char* shapes);

// One argument's scales as a bit matrix of `format` (float8_e8m0fnu for ue8m0, float8_e4m3fn for
// ue4m3 with its sign ignored, or uint8 codes), `rows` x `cols`; `shape` says what those are
// in words ("m x ceil(k / scale_block)"). ValueError naming the argument, with the expected and
// the given shape, for another shape; TypeError for a dtype that does not hold `format`.
BitMatrix scale_matrix(nb::handle scales, const char* name, const FloatFormat& format,
                       std::int64_t rows, std::int64_t cols, const char* shape);
BitMatrix scale_matrix(const Operand& scales, const FloatFormat& format, std::int64_t rows,
                       std::int64_t cols, const char* shape);

// The scales of A and of B, each a scale_matrix().
struct ScaleMatrices {
  BitMatrix a, b;
  BlockScales view() const { return {a.view, b.view}; }
};

}  // namespace tcemu::python
