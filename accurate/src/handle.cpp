#include <tcemu/accurate/handle.hpp>

namespace tcemu::accurate {

void Handle::run(BlasCall call) {
  switch (call.work()) {
    case BlasCall::Work::none:
      return;
    case BlasCall::Work::scale_c:
      call.scale_c();
      break;
    case BlasCall::Work::products:
      backend_.inner_products(method_, call.a(), call.b(), call.alpha(), call.beta(), call.c());
      break;
  }
  call.finish();
}

double Handle::ddot(std::int64_t n, const double* x, std::int64_t incx, const double* y,
                    std::int64_t incy) {
  double result = 0;
  run(BlasCall::dot(backend_, "ddot", n, x, incx, y, incy, &result));
  return result;
}

float Handle::sdot(std::int64_t n, const float* x, std::int64_t incx, const float* y,
                   std::int64_t incy) {
  float result = 0;
  run(BlasCall::dot(backend_, "sdot", n, x, incx, y, incy, &result));
  return result;
}

void Handle::dgemv(char trans, std::int64_t m, std::int64_t n, double alpha, const double* a,
                   std::int64_t lda, const double* x, std::int64_t incx, double beta, double* y,
                   std::int64_t incy) {
  run(BlasCall::gemv(backend_, "dgemv", trans, m, n, alpha, a, lda, x, incx, beta, y, incy));
}

void Handle::sgemv(char trans, std::int64_t m, std::int64_t n, float alpha, const float* a,
                   std::int64_t lda, const float* x, std::int64_t incx, float beta, float* y,
                   std::int64_t incy) {
  run(BlasCall::gemv(backend_, "sgemv", trans, m, n, alpha, a, lda, x, incx, beta, y, incy));
}

void Handle::dgemm(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k,
                   double alpha, const double* a, std::int64_t lda, const double* b,
                   std::int64_t ldb, double beta, double* c, std::int64_t ldc) {
  run(BlasCall::gemm(backend_, "dgemm", transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c,
                     ldc));
}

void Handle::sgemm(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k,
                   float alpha, const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
                   float beta, float* c, std::int64_t ldc) {
  run(BlasCall::gemm(backend_, "sgemm", transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c,
                     ldc));
}

}  // namespace tcemu::accurate
