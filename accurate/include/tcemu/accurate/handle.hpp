// The accurate BLAS besides the Ozaki scheme: Dot2 (BLAS-DOT2, Ogita, Rump and Oishi 2005;
// Mukunoki and Ogita 2020) and ExBLAS-style correctly rounded inner products (Collange, Defour,
// Graillat and Iakymchuk 2015), with the DOT-, GEMV- and GEMM-shaped calls of blas_routines.hpp
// on any backend (column-major, as the reference BLAS):
//
//   auto backend = tcemu::host::make_cpu64_backend();     // or tcemu::gpu::make_gpu_backend()
//   tcemu::accurate::Handle exblas(*backend, tcemu::InnerProduct::exact);
//   double d = exblas.ddot(n, x, 1, y, 1);                    // correctly rounded x'y
//   exblas.dgemm('N', 'N', m, n, k, 1.0, a, m, b, k, 0.0, c, m);
//
// Each inner product is one backend step, InnerProductSteps::inner_products
// (tcemu/backend/inner_product_steps.hpp): Dot2 in the order dot2.hpp fixes, or the exact sum
// rounded once (exact_dot.hpp over long_accumulator.hpp); then the BLAS epilogue alpha s + beta c
// in the working precision (blas_epilogue.hpp), so that alpha = 1, beta = 0 gives the correctly
// rounded product with InnerProduct::exact. Those element functions run in
// host/src/inner_product_steps.cpp and gpu/src/steps/inner_product_steps.cu, with the same bits on
// every backend and every thread count. Bad arguments throw std::invalid_argument naming the
// parameter (blas_call.hpp).
#pragma once

#include <tcemu/backend/backend.hpp>
#include <tcemu/backend/blas_routines.hpp>

namespace tcemu::accurate {

class Handle final : public BlasRoutines {
 public:
  Handle(Backend& backend, InnerProduct method) : BlasRoutines(backend), method_(method) {}
  InnerProduct method() const { return method_; }

 protected:
  void prepare(const char* routine, bool fp64) override;
  void compute(const BlasCall& call) override;

 private:
  InnerProduct method_;
};

}  // namespace tcemu::accurate
