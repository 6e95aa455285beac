// One complex product C := alpha op(A) op(B) + beta C as one real product on a backend: the real
// forms A2 (m x 2k) and B2 (2k x 2n) of op(A) and op(B) (complex_steps.hpp, which states why each
// part of the product is one real inner product), built in buffers of the backend, and the real
// value S = A2 B2 (m x 2n) that a scheme computes with alpha = 1 and beta = 0 before
// Backend::complex_epilogue applies the complex alpha and beta. What BlasCall's complex GEMMs
// and ozaki::Handle::gemm on complex matrices share.
#pragma once

#include <tcemu/backend/backend.hpp>

namespace tcemu {

class ComplexProduct {
 public:
  // Builds A2 from a (op(A), m x k, conjugated when conjugate_a) and B2 from b (op(B), k x n),
  // both of the parts' format, and allocates S of `value` format (column-major); k >= 1.
  ComplexProduct(Backend& backend, const ComplexMatrix& a, bool conjugate_a, const ComplexMatrix& b,
                 bool conjugate_b, Real value);
  ComplexProduct(const ComplexProduct&) = delete;
  ComplexProduct& operator=(const ComplexProduct&) = delete;

  const RealMatrix& a2() const { return a2_; }
  const RealMatrix& b2() const { return b2_; }
  const RealMatrix& value() const { return value_; }

 private:
  Buffer a2_buffer_, b2_buffer_, value_buffer_;
  RealMatrix a2_{}, b2_{}, value_{};
};

}  // namespace tcemu
