// The BLAS epilogue of one output element of the accurate inner products (Backend::
// inner_products), for host and device, in the working precision T:
//   r = RN(alpha * s), a zero r made +0 (BLAS's C = 0 + alpha * ...);
//   r = RN(r + RN(beta * c)) when beta != 0 (c is not read when beta == 0, as in BLAS);
//   a NaN result is the canonical quiet NaN (IEEE 754 leaves the payload to the hardware).
// With alpha = 1 and beta = 0 the result is s itself: a correctly rounded s stays correctly
// rounded.
#pragma once

#include <limits>

#include <tcemu/backend/error_free.hpp>

namespace tcemu {

template <RealType T>
TCEMU_HOST_DEVICE inline T blas_epilogue(T alpha, T s, T beta, T c) {
  T r = mul_rn(alpha, s);
  if (r == 0) r = 0;
  if (beta != 0) r = add_rn(r, mul_rn(beta, c));
  if (r != r) return std::numeric_limits<T>::quiet_NaN();
  return r;
}

}  // namespace tcemu
