// Arrays between Python and the libraries. NumPy arrays and DLPack producers come in as
// nb::ndarray views of their own memory; each argument is checked for dtype, rank, shape and
// device, and a 2-D one is described as the libraries describe a matrix (rows, cols, ld, layout)
// where its strides allow, else copied once into a contiguous row-major buffer. Results are new
// NumPy arrays that own their memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <tcemu/backend/buffer_matrix.hpp>
#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/matrix.hpp>

namespace tcemu::python {

namespace nb = nanobind;

using AnyArray = nb::ndarray<nb::ro>;

// An array argument and the number format its dtype names.
struct Operand {
  AnyArray array;
  // float16: fp16, bfloat16: bf16, float32: fp32, float8_e4m3fn: e4m3, float8_e5m2: e5m2;
  // nullopt for unsigned integers (bit patterns) and float64 (`real` says which).
  std::optional<FloatFormat> typed;
  std::optional<Real> real;             // float64 or float32
  std::string name;                     // the argument's name in messages
  std::string dtype;                    // the dtype's name in messages
  std::optional<Complex> complex = {};  // complex128 (c128) or complex64 (c64)
};

// `object`: a NumPy array (ml_dtypes' bfloat16, float8_e4m3fn and float8_e5m2 arrays are viewed
// as their unsigned bit patterns, without a copy) or any object with __dlpack__. Raises TypeError
// for anything else and for a dtype that is neither a float format nor unsigned integers.
Operand operand(nb::handle object, const char* name);

// Whether the array lives in CUDA device memory.
bool on_gpu(const Operand& op);

// Raises ValueError unless the array has `ndim` dimensions.
void require_ndim(const Operand& op, std::size_t ndim);

// Element i of a batched array (3-D: [batch, rows, cols]) as a 2-D operand over the same memory,
// valid while `op` lives, named "NAME[i]" in messages.
Operand batch_element(const Operand& op, std::size_t i);

// Raises TypeError unless the dtype holds `format`: that float format (fp32 also for tf32) or
// unsigned integers as wide as its container.
void require_format(const Operand& op, const FloatFormat& format);

// Raises TypeError unless the dtype is `real` (float64 or float32).
void require_real(const Operand& op, Real real);
// Raises TypeError unless the dtype is `complex` (complex128 or complex64).
void require_complex(const Operand& op, Complex complex);

// A contiguous copy of a 2-D host array in `layout`.
std::vector<unsigned char> copy_2d(const Operand& op, Layout layout);

// A 2-D array of bit patterns as a matrix view of host memory: the array's own memory where its
// strides are row-major or column-major with a leading dimension, else `storage` holds a
// row-major copy. Raises TypeError/ValueError for the wrong dtype, rank or device, and
// ValueError naming the element for an FP6/FP4 byte with bits set above the format's code.
struct BitMatrix {
  ConstMatrixView view;
  std::vector<unsigned char> storage;
};
BitMatrix bit_matrix(const Operand& op, const FloatFormat& format);

// Where two FP4 codes sit in a byte: byte j along k holds k = 2j in bits 7:4 and k = 2j + 1 in bits
// 3:0 (high_first, as MMA-Sim 2.1.1's unpack_uint8_to_fp4 reads them), or the other way round
// (low_first).
enum class NibbleOrder { high_first, low_first };

// A 2-D uint8 array of FP4 (e2m1) codes packed two a byte along `k_axis` (1: the columns, as A
// [m, k/2] holds them; 0: the rows, as B [k/2, n] does) in `order`. Returns a row-major e2m1
// matrix of one code a byte, twice as long along k_axis. Raises TypeError for another dtype
// (float4_e2m1fn arrays hold one value a byte).
BitMatrix unpacked_fp4(const Operand& op, int k_axis, NibbleOrder order);

// A 1-D array of bit patterns, one per element.
std::vector<std::uint32_t> bit_vector(const Operand& op, const FloatFormat& format);

// A 2-D float64, float32, complex128 or complex64 host array as BLAS takes it, column-major:
// op(X) = X with ld for a column-major array, X^T ('T') of the row-major transpose for a
// row-major one, or a column-major copy.
struct BlasMatrix {
  const void* data;
  char trans;
  std::int64_t rows, cols;  // of the array
  std::int64_t ld;
  Real real;     // the element's type, or each part's for a complex one
  bool complex;  // complex128 (real fp64) or complex64 (fp32)
  std::vector<unsigned char> storage;
};
BlasMatrix blas_matrix(const Operand& op);

// How an array of n x m elements is laid out in memory when it has a leading dimension.
struct Strided {
  Layout layout;
  std::int64_t ld;
};
std::optional<Strided> strided_2d(const Operand& op);

// A new host array that owns its memory: NumPy's view of it and its data, uninitialised.
struct NewArray {
  nb::object object;
  void* data;
};
nb::dlpack::dtype dtype_of(const FloatFormat& format);  // float32 or float16 (accumulators)
nb::dlpack::dtype dtype_of(Real real);
nb::dlpack::dtype dtype_of(Complex complex);
NewArray new_array(const std::vector<std::size_t>& shape, nb::dlpack::dtype dtype,
                   Layout layout = Layout::row_major);

}  // namespace tcemu::python
