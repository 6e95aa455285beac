// The emulated integer GEMM: D (s32) = A B + C through an integer Tensor Core datapath
// (integer_mma.hpp), for whole matrices. Every element d_ij is integer_mma_element over
// k = 0..K-1 in k order with c = C's element (0 without C), so the result is bitwise
// independent of the thread count. It is the host backend of an int8 Ozaki scheme: blocked, with a
// vectorisable int32 inner loop.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include <tcemu/emulator/integer_mma.hpp>
#include <tcemu/emulator/matrix.hpp>

namespace tcemu {

// A view of a matrix of integer operands, one value per byte: s8 as int8_t (two's complement), u8
// as uint8_t; s4 held sign-extended in a byte (-8..7, bytes 0xf8..0x07), u4 zero-extended (0..15,
// bytes 0x00..0x0f). ld counts elements (bytes) as in matrix.hpp.
struct IntegerOperandView {
  const std::uint8_t* data;
  IntegerFormat format;
  std::int64_t rows;
  std::int64_t cols;
  std::int64_t ld;
  Layout layout;

  std::int64_t index(std::int64_t i, std::int64_t j) const {
    return layout == Layout::row_major ? i * ld + j : j * ld + i;
  }
  // The byte (i, j) as a value: sign-extended for signed formats. Range checks are the GEMM's.
  std::int32_t get(std::int64_t i, std::int64_t j) const {
    const std::uint8_t byte = data[index(i, j)];
    return format.is_signed ? static_cast<std::int8_t>(byte) : byte;
  }
};

// A view of an int32 matrix (C or D).
template <typename Int32>
struct BasicInt32MatrixView {
  Int32* data;
  std::int64_t rows;
  std::int64_t cols;
  std::int64_t ld;
  Layout layout;

  std::int64_t index(std::int64_t i, std::int64_t j) const {
    return layout == Layout::row_major ? i * ld + j : j * ld + i;
  }
  Int32& at(std::int64_t i, std::int64_t j) const { return data[index(i, j)]; }
};

using ConstInt32MatrixView = BasicInt32MatrixView<const std::int32_t>;

struct Int32MatrixView : BasicInt32MatrixView<std::int32_t> {
  operator ConstInt32MatrixView() const { return {data, rows, cols, ld, layout}; }
};

// D = A B (+ C) through the datapath on `threads` threads (0: every hardware thread). C may alias
// D exactly (same data, ld and layout). Throws std::invalid_argument as check_integer_gemm_operands
// does, and naming the first element of A or B whose byte is not a value of its format (s4/u4).
void emulated_integer_gemm(const IntegerDatapath& datapath, IntegerOperandView a,
                           IntegerOperandView b, std::optional<ConstInt32MatrixView> c,
                           Int32MatrixView d, int threads = 0);

// The operand contract, written once: throws std::invalid_argument "<caller>: ..." naming the
// offending argument: an invalid datapath (validate); a negative dimension; A (m x k), B (k x n),
// C or D (m x n) of another shape; A or B not holding the datapath's a_format / b_format; a
// leading dimension too small; data missing for a non-empty matrix. Does not read the matrices.
void check_integer_gemm_operands(std::string_view caller, const IntegerDatapath& datapath,
                                 const IntegerOperandView& a, const IntegerOperandView& b,
                                 const std::optional<ConstInt32MatrixView>& c,
                                 const ConstInt32MatrixView& d);

}  // namespace tcemu
