// The accurate BLAS of the seed slides besides the Ozaki scheme: Dot2 (BLAS-DOT2, Ogita, Rump
// and Oishi 2005; Mukunoki and Ogita 2020) and ExBLAS-style correctly rounded inner products
// (Collange, Defour, Graillat and Iakymchuk 2015), with DOT-, GEMV- and GEMM-shaped calls on any
// backend (column-major, as the reference BLAS):
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

#include <cstdint>

#include <tcemu/emulator/backend.hpp>
#include <tcemu/emulator/blas_call.hpp>

namespace tcemu::accurate {

class Handle {
 public:
  // `backend` must outlive the handle.
  Handle(Backend& backend, InnerProduct method) : backend_(backend), method_(method) {}

  double ddot(std::int64_t n, const double* x, std::int64_t incx, const double* y,
              std::int64_t incy);
  float sdot(std::int64_t n, const float* x, std::int64_t incx, const float* y, std::int64_t incy);

  void dgemv(char trans, std::int64_t m, std::int64_t n, double alpha, const double* a,
             std::int64_t lda, const double* x, std::int64_t incx, double beta, double* y,
             std::int64_t incy);
  void sgemv(char trans, std::int64_t m, std::int64_t n, float alpha, const float* a,
             std::int64_t lda, const float* x, std::int64_t incx, float beta, float* y,
             std::int64_t incy);

  void dgemm(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
             const double* a, std::int64_t lda, const double* b, std::int64_t ldb, double beta,
             double* c, std::int64_t ldc);
  void sgemm(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
             const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta,
             float* c, std::int64_t ldc);

  InnerProduct method() const { return method_; }
  Backend& backend() const { return backend_; }

 private:
  void run(BlasCall call);

  Backend& backend_;
  InnerProduct method_;
};

}  // namespace tcemu::accurate
