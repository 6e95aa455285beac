// The blocked Ozaki scheme on backend buffers (handle.cpp moves the operands in and out).
#pragma once

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

void run_scheme(Backend& backend, const Products& products, const Options& options,
                const Buffer& workspace, const Problem& problem, Report& report);

}  // namespace tcemu::ozaki::detail
