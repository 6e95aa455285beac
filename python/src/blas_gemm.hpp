// A BLAS-shaped GEMM (C := alpha op(A) op(B) + beta C, column-major, blas_routines.hpp) of host
// arrays, real or complex, as `tcemu gemm` drives the schemes: A and B are described without a copy
// (blas_matrix), C is a new column-major array holding a copy of c (zeros without one) that the
// routine overwrites with the result.
#pragma once

#include <complex>
#include <cstdint>
#include <optional>

#include <tcemu/backend/blas_routines.hpp>

#include "arrays.hpp"

namespace tcemu::python {

struct BlasGemm {
  Real real;     // the element's type, or each part's
  bool complex;  // complex128 / complex64 arrays
  BlasMatrix a, b;
  std::int64_t m, n, k;
  NewArray c;
};

// Raises TypeError for dtypes other than float64, float32, complex128 or complex64 or differing
// among the arrays,
// ValueError for shapes that do not multiply (A [m, k], B [k, n], C [m, n]).
BlasGemm blas_gemm(const Operand& a, const Operand& b, const std::optional<Operand>& c);

// routines.dgemm, sgemm, zgemm or cgemm on the arrays (alpha and beta rounded to binary32 for
// the single-precision ones). Raises ValueError for a complex alpha or beta with real arrays.
void run_gemm(BlasRoutines& routines, BlasGemm& g, std::complex<double> alpha,
              std::complex<double> beta);

}  // namespace tcemu::python
