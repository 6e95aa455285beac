// The inner-product step of a backend (backend.hpp): Dot2 and the correctly rounded (ExBLAS-style)
// inner products of the accurate BLAS (accurate/). Its checks are in inner_product_steps.cpp, the
// element functions every backend applies in dot2.hpp, exact_dot.hpp (over long_accumulator.hpp)
// and blas_epilogue.hpp; the host implementation in host/src/inner_product_steps.cpp, the GPU's
// in gpu/src/steps/inner_product_steps.cu.
#pragma once

#include <tcemu/backend/buffer_matrix.hpp>
#include <tcemu/backend/memory.hpp>

namespace tcemu {

// How Backend::inner_products forms each inner product.
enum class InnerProduct {
  dot2,   // Dot2 of Ogita, Rump and Oishi (dot2.hpp): as if in twice the working precision
  exact,  // the exact sum rounded once (exact_dot.hpp): correctly rounded, ExBLAS-style
};

class InnerProductSteps : public virtual MemorySpace {
 public:
  // c_ij := blas_epilogue(alpha, s_ij, beta, c_ij) (blas_epilogue.hpp) for every element of c
  // (m x n), where s_ij is the inner product of row i of a (m x k, k >= 1) and column j of b
  // (k x n) by `method`, in the arithmetic of their type: a, b and c are all fp64 or all fp32
  // (then alpha and beta must be binary32 values). exact: the exact sum of the exact products
  // rounded once to that type (exact_dot.hpp), the same bits whatever the order. dot2: element
  // (i, j) sums its terms in k order, except a 1 x 1 result (a DOT), which sums in the lanes of
  // dot2.hpp; every backend follows that order and gives the same bits. c must not overlap a or b.
  void inner_products(InnerProduct method, const RealMatrix& a, const RealMatrix& b, double alpha,
                      double beta, const RealMatrix& c);

 protected:
  // What each backend implements; arguments are already checked.
  virtual void inner_products_checked(InnerProduct method, const RealMatrix& a, const RealMatrix& b,
                                      double alpha, double beta, const RealMatrix& c) = 0;
};

}  // namespace tcemu
