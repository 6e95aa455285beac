// The argument checks several step families share (their own checks are in their source files).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <tcemu/backend/buffer_matrix.hpp>

namespace tcemu::detail {

[[noreturn]] inline void refuse(const std::string& backend, const std::string& what) {
  throw std::invalid_argument(backend + ": " + what);
}

inline std::string shape(std::int64_t rows, std::int64_t cols) {
  return std::to_string(rows) + " x " + std::to_string(cols);
}

// Refuses x (named x_name in the message) unless it is rows x cols; either kind of matrix.
template <class Format>
void same_shape(const std::string& backend, const BufferMatrixOf<Format>& x,
                const std::string& x_name, std::int64_t rows, std::int64_t cols) {
  if (x.rows != rows || x.cols != cols) {
    refuse(backend, x_name + " is " + shape(x.rows, x.cols) + ", expected " + shape(rows, cols));
  }
}

inline void require_fp64(const std::string& backend, const RealMatrix& x, const char* x_name) {
  if (x.format != Real::fp64) refuse(backend, std::string(x_name) + " must be fp64");
}

}  // namespace tcemu::detail
