// The blocked Ozaki scheme on backend buffers (handle.cpp moves the operands in and out).
#pragma once

#include <cstdint>

#include <tcemu/backend/backend.hpp>
#include <tcemu/ozaki/options.hpp>

namespace tcemu::ozaki::detail {

// One product C := alpha A B + beta C on the backend: A m x k, B k x n, C m x n (fp64 or fp32,
// any layout), k >= 1 and alpha != 0. input_precision: 53 (fp64 operands) or 24 (fp32).
struct Problem {
  RealMatrix a;
  RealMatrix b;
  RealMatrix c;
  double alpha;
  double beta;
  int input_precision;
};

// The sub-matrix of rows [i0, i0 + rows) and columns [j0, j0 + cols).
inline RealMatrix sub(const RealMatrix& x, std::int64_t i0, std::int64_t j0, std::int64_t rows,
                      std::int64_t cols) {
  const std::int64_t index = x.layout == Layout::row_major ? i0 * x.ld + j0 : j0 * x.ld + i0;
  RealMatrix s = x;
  s.offset_bytes += static_cast<std::size_t>(index) * real_bytes(x.format);
  s.rows = rows;
  s.cols = cols;
  return s;
}

// Runs `problem` by the scheme `products` asks for (CrtProducts: run_crt_scheme).
void run_scheme(Backend& backend, const Products& products, const Options& options,
                Buffer& workspace, const Problem& problem, Report& report);

}  // namespace tcemu::ozaki::detail
