#include <tcemu/backend/blas_routines.hpp>
#include <tcemu/emulator/floating_point_scope.hpp>

namespace tcemu {

void BlasRoutines::run(BlasCall call) {
  switch (call.work()) {
    case BlasCall::Work::none:
      return;
    case BlasCall::Work::scale_c:
      call.scale_c();
      break;
    case BlasCall::Work::products:
      compute(call);
      break;
  }
  call.finish(output_rounding(call));
}

double BlasRoutines::ddot(std::int64_t n, const double* x, std::int64_t incx, const double* y,
                          std::int64_t incy) {
  const FloatingPointScope scope;
  prepare("ddot", true);
  double result = 0;
  run(BlasCall::dot(backend_, "ddot", n, x, incx, y, incy, &result));
  return result;
}

float BlasRoutines::sdot(std::int64_t n, const float* x, std::int64_t incx, const float* y,
                         std::int64_t incy) {
  const FloatingPointScope scope;
  prepare("sdot", false);
  float result = 0;
  run(BlasCall::dot(backend_, "sdot", n, x, incx, y, incy, &result));
  return result;
}

void BlasRoutines::dgemv(char trans, std::int64_t m, std::int64_t n, double alpha, const double* a,
                         std::int64_t lda, const double* x, std::int64_t incx, double beta,
                         double* y, std::int64_t incy) {
  const FloatingPointScope scope;
  prepare("dgemv", true);
  run(BlasCall::gemv(backend_, "dgemv", trans, m, n, alpha, a, lda, x, incx, beta, y, incy));
}

void BlasRoutines::sgemv(char trans, std::int64_t m, std::int64_t n, float alpha, const float* a,
                         std::int64_t lda, const float* x, std::int64_t incx, float beta, float* y,
                         std::int64_t incy) {
  const FloatingPointScope scope;
  prepare("sgemv", false);
  run(BlasCall::gemv(backend_, "sgemv", trans, m, n, alpha, a, lda, x, incx, beta, y, incy));
}

void BlasRoutines::dgemm(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k,
                         double alpha, const double* a, std::int64_t lda, const double* b,
                         std::int64_t ldb, double beta, double* c, std::int64_t ldc) {
  const FloatingPointScope scope;
  prepare("dgemm", true);
  run(BlasCall::gemm(backend_, "dgemm", transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c,
                     ldc));
}

void BlasRoutines::sgemm(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k,
                         float alpha, const float* a, std::int64_t lda, const float* b,
                         std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  const FloatingPointScope scope;
  prepare("sgemm", false);
  run(BlasCall::gemm(backend_, "sgemm", transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c,
                     ldc));
}

void BlasRoutines::zgemm(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k,
                         std::complex<double> alpha, const std::complex<double>* a,
                         std::int64_t lda, const std::complex<double>* b, std::int64_t ldb,
                         std::complex<double> beta, std::complex<double>* c, std::int64_t ldc) {
  const FloatingPointScope scope;
  prepare("zgemm", true);
  run(BlasCall::complex_gemm(backend_, "zgemm", transa, transb, m, n, k, alpha, a, lda, b, ldb,
                             beta, c, ldc, value_format(Real::fp64)));
}

void BlasRoutines::cgemm(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k,
                         std::complex<float> alpha, const std::complex<float>* a, std::int64_t lda,
                         const std::complex<float>* b, std::int64_t ldb, std::complex<float> beta,
                         std::complex<float>* c, std::int64_t ldc) {
  const FloatingPointScope scope;
  prepare("cgemm", false);
  run(BlasCall::complex_gemm(backend_, "cgemm", transa, transb, m, n, k, alpha, a, lda, b, ldb,
                             beta, c, ldc, value_format(Real::fp32)));
}

}  // namespace tcemu
