// The accurate BLAS of the seed slides besides the Ozaki scheme: Dot2 (BLAS-DOT2, Ogita, Rump
// and Oishi 2005; Mukunoki and Ogita 2020) and ExBLAS-style correctly rounded inner products
// (Collange, Defour, Graillat and Iakymchuk 2015), with the DOT-, GEMV- and GEMM-shaped calls of
// blas_routines.hpp on any backend (column-major, as the reference BLAS):
//
//   auto backend = tcemu::make_cpu64_backend();            // or tcemu::gpu::make_gpu_backend()
//   tcemu::accurate::Handle exblas(*backend, tcemu::InnerProduct::exact);
//   double d = exblas.ddot(n, x, 1, y, 1);                    // correctly rounded x'y
//   exblas.dgemm('N', 'N', m, n, k, 1.0, a, m, b, k, 0.0, c, m);
//
// Each inner product is Backend::inner_products's: Dot2 in the order dot2.hpp fixes, or the
// exact sum rounded once (exact_dot.hpp); then the BLAS epilogue alpha s + beta c in the working
// precision (blas_epilogue.hpp), so that alpha = 1, beta = 0 gives the correctly rounded product
// with InnerProduct::exact. The bits are the same on every backend and every thread count.
// Bad arguments throw std::invalid_argument naming the parameter (blas_call.hpp).
#pragma once

#include <tcemu/emulator/backend.hpp>
#include <tcemu/emulator/blas_routines.hpp>

namespace tcemu::accurate {

class Handle final : public BlasRoutines {
 public:
  Handle(Backend& backend, InnerProduct method) : BlasRoutines(backend), method_(method) {}
  InnerProduct method() const { return method_; }

 protected:
  void prepare(const char*, bool) override {}  // every routine, fp64 and fp32
  void compute(const BlasCall& call) override {
    backend().inner_products(method_, call.a(), call.b(), call.alpha(), call.beta(), call.c());
  }

 private:
  InnerProduct method_;
};

}  // namespace tcemu::accurate
