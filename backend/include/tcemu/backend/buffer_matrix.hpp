// A matrix inside a backend's buffer (memory.hpp), described as BLAS describes one: the bytes
// from offset_bytes on hold rows x cols elements of `format`, ld elements apart between
// consecutive rows (row major) or columns (column major). The tensor-core and fp32 split steps
// work on BufferMatrix (bit patterns of a FloatFormat, in the containers of matrix.hpp), the
// Ozaki and inner-product steps on RealMatrix (IEEE binary32/binary64, the host's native
// little-endian float/double bit patterns), the integer GEMM step on IntegerMatrix (two's
// complement int8 / int32), the complex steps on ComplexMatrix (interleaved pairs); all are one
// template.
#pragma once

#include <cstddef>
#include <cstdint>

#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/matrix.hpp>

namespace tcemu {

class Buffer;

// IEEE 754 binary formats of the "high-precision" matrices of the Ozaki and inner-product steps
// (the user's DGEMM/SGEMM operands, remainders, partial products, sums).
enum class Real { fp32, fp64 };

constexpr std::size_t real_bytes(Real r) {
  return r == Real::fp64 ? 8 : 4;
}

// Two's complement integers of the integer tensor cores (IMMA): int8 operands (the slices of the
// integer Ozaki schemes) and int32 results.
enum class Integer { s8, s32 };

constexpr std::size_t integer_bytes(Integer i) {
  return i == Integer::s8 ? 1 : 4;
}

// Complex matrices of the complex GEMMs (complex_steps.hpp), stored as BLAS stores them: each
// element a (real, imaginary) pair of binary32 (c64, std::complex<float>) or binary64 (c128,
// std::complex<double>), ld counted in complex elements.
enum class Complex { c64, c128 };

// The format of either part of a complex element.
constexpr Real part_format(Complex c) {
  return c == Complex::c128 ? Real::fp64 : Real::fp32;
}

// The bytes of one element of any kind of matrix.
constexpr std::size_t element_bytes(const FloatFormat& f) {
  return container_bytes(f);
}
constexpr std::size_t element_bytes(Real r) {
  return real_bytes(r);
}
constexpr std::size_t element_bytes(Integer i) {
  return integer_bytes(i);
}
constexpr std::size_t element_bytes(Complex c) {
  return 2 * real_bytes(part_format(c));
}

template <class Format>
struct BufferMatrixOf {
  const Buffer* buffer;
  std::size_t offset_bytes;
  Format format;
  std::int64_t rows;
  std::int64_t cols;
  std::int64_t ld;
  Layout layout;
};

using BufferMatrix = BufferMatrixOf<FloatFormat>;
using RealMatrix = BufferMatrixOf<Real>;
using IntegerMatrix = BufferMatrixOf<Integer>;
using ComplexMatrix = BufferMatrixOf<Complex>;

}  // namespace tcemu
