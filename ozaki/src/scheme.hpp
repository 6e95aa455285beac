// The blocked Ozaki scheme (scheme I) on backend buffers, and what it shares with scheme II
// (crt_scheme.hpp): the problem, its sub-matrices, the workspace alignment and the phase clock
// (handle.cpp moves the operands in and out and picks the scheme).
#pragma once

#include <chrono>
#include <cstddef>
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
  // The direction of the epilogue's rounding to a binary32 C (Backend::epilogue).
  fp64::Direction output_rounding = fp64::Direction::nearest_even;
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

// Workspace regions start on 64-byte boundaries.
constexpr std::size_t kAlign = 64;

inline std::size_t aligned(std::size_t bytes) {
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

// The phase times of a Report.
class Clock {
 public:
  explicit Clock(Backend& backend) : backend_(backend) {}
  // Adds the time since the last lap (after synchronising the backend) to `seconds`.
  void lap(double& seconds) {
    backend_.synchronize();
    const auto now = std::chrono::steady_clock::now();
    seconds += std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }

 private:
  Backend& backend_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// Runs `problem` by Ozaki scheme I, slices multiplied as `products` asks (TensorCoreProducts,
// Fp64Products or IntegerProducts; CrtProducts is Ozaki scheme II: run_crt_scheme).
void run_scheme(Backend& backend, const Products& products, const Options& options,
                Buffer& workspace, const Problem& problem, Report& report);

}  // namespace tcemu::ozaki::detail
