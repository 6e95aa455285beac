// NumPy's .npy format (format versions 1.0, 2.0 and 3.0) for 2-D matrices of bit patterns:
// the magic "\x93NUMPY", the version, a little-endian header length, then a Python dict literal
// {'descr': ..., 'fortran_order': ..., 'shape': (ROWS, COLS)} padded to a multiple of 64 bytes,
// then the elements in C (row-major) or Fortran (column-major) order.
#pragma once

#include <istream>
#include <ostream>
#include <string>

#include "matrix_file.hpp"

namespace tcemu::cli {

// Reads a .npy matrix of `type` (matrix_file.hpp says which dtypes fit; bit patterns only where
// type.given, else the message says to give type.option). Throws
// InputError naming the file and what is wrong: magic, version, header field, dtype,
// dimensions, a byte count that does not match the shape. Allocates only after the stream has
// shown that it holds every element (a header promising 10^12 elements in a short file costs
// nothing).
BitMatrix read_npy(std::istream& in, const std::string& name, const ElementType& type);

// What the dtype `descr` (a dtype read_npy took) says of its elements, for messages: "float16",
// "2-byte void items, as ml_dtypes saves bfloat16", "uint16 bit patterns".
std::string describe_npy_dtype(const std::string& descr);

// Whether two dtypes read as one element type say that their elements are of different formats:
// NumPy's float and ml_dtypes' void items (float16 and bfloat16 alike are 2 bytes). Bit patterns
// (uint, int) say nothing and differ from neither.
bool npy_dtypes_differ_in_format(const std::string& a, const std::string& b);

// Writes version 1.0 in m's layout: descr '<f2'/'<f4'/'<f8' where NumPy has the type's float,
// '<u1'/'<u2'/'<u4'/'<u8' bit patterns otherwise.
void write_npy(std::ostream& out, const BitMatrix& m);

}  // namespace tcemu::cli
