// Matrix files: the hex text format and NumPy's .npy, chosen by the file name (".npy" or not).
//
// Text: a first line `ROWS COLS`, then ROWS lines of COLS hex bit patterns of the element type
// (16 digits for fp64, 8 for fp32 and tf32, 4 for fp16 and bf16, 2 for fp8), row major. Blank
// lines and lines starting with # are skipped. ROWS and COLS are decimal digits only; an R x 0
// matrix has no row lines. Lines are read by cases' LineReader: one is at most 1 MiB, a row line
// what its COLS elements with a blank each need plus 1 MiB; a longer one is refused unread.
//
// .npy (npy_file.hpp): a 2-D array, C or Fortran order, of the element type's own NumPy float
// (float16 for fp16, float32 for fp32 and tf32, float64 for fp64) or of bit patterns of its size
// (uint/int, or the void dtypes that ml_dtypes' bfloat16 and float8 arrays save as). A dtype of
// bit patterns does not say which format they are: such a file is read only where the command
// line gave the format (ElementType::given).
#pragma once

#include <cstdint>
#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include <tcemu/backend/backend.hpp>
#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/matrix.hpp>

namespace tcemu::cli {

// What a file's elements are: bit patterns of `bits` bits (8, 16, 32 or 64) of the format
// `name`; `numpy_float` when NumPy's float of that size is that format's container. `option`
// names the option that chose the format ("--type"), and `given` says whether the command line
// gave it (false: the option's default).
struct ElementType {
  std::string name;
  int bits = 0;
  bool numpy_float = false;
  std::string option;
  bool given = true;

  int bytes() const { return bits / 8; }
  int hex_digits() const { return bits / 4; }
};

ElementType element_type(const FloatFormat& format);
ElementType element_type(Real real);

// A matrix of bit patterns as a file holds it: `bytes` are the elements, little endian, in
// `layout` order with no gap between rows (row major) or columns (column major). `npy_dtype` is
// the dtype of the .npy it was read from ("<f2", "<V2"), empty for hex text.
struct BitMatrix {
  ElementType type;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  Layout layout = Layout::row_major;
  std::vector<unsigned char> bytes;
  std::string npy_dtype;

  std::uint64_t get(std::int64_t i, std::int64_t j) const;
  // A view for the emulator (types of at most 32 bits) reading the elements as `format`.
  ConstMatrixView view(const FloatFormat& format) const;
};

// Reads `path` (.npy by its name, hex text otherwise) with elements of `type`; throws
// InputError (tcemu/cases/input_error.hpp) naming the file, and the line or header field, that is
// wrong.
BitMatrix read_bit_matrix_file(const std::string& path, const ElementType& type);

// Writes `m` to `path`: .npy by its name (NumPy's float where there is one, unsigned bit
// patterns otherwise), hex text otherwise.
void write_bit_matrix_file(const std::string& path, const BitMatrix& m);

// The text format on streams; `name` stands for the file in messages (fuzz/ reads bytes).
BitMatrix read_text_matrix(std::istream& in, const std::string& name, const ElementType& type);
void write_text_matrix(std::ostream& out, const BitMatrix& m);

// A dense matrix in column-major order (the BLAS order the schemes take), fp32 values widened.
struct DenseMatrix {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<double> values;  // values[j * rows + i]
};

// The matrices of `tcemu gemm`: fp64 or fp32 elements, in either file format.
DenseMatrix read_matrix_file(const std::string& path, Real type);
void write_matrix_file(const std::string& path, const DenseMatrix& m, Real type);

DenseMatrix to_dense(const BitMatrix& m);            // m.type is fp64 or fp32
BitMatrix to_bits(const DenseMatrix& m, Real type);  // fp32: each value a binary32 value

}  // namespace tcemu::cli
