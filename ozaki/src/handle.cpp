#include <tcemu/ozaki/handle.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <tcemu/ozaki/split_rule.hpp>

#include "scheme.hpp"

namespace tcemu::ozaki {

Handle::Handle(Backend& backend, Products products, Options options)
    : backend_(backend), products_(std::move(products)), options_(options) {
  exact_product_bits(products_);  // refuses products that cannot be exact
  if (options_.mode == Mode::tunable && options_.splits < 1) {
    throw std::invalid_argument("ozaki: tunable mode needs splits >= 1, got " +
                                std::to_string(options_.splits));
  }
  if (options_.mode == Mode::cr && options_.max_splits < 1) {
    throw std::invalid_argument("ozaki: max_splits must be >= 1");
  }
  workspace_ = backend_.allocate(options_.workspace_bytes);
}

void Handle::check_mode(const char* routine, bool fp64) const {
  if (fp64 && options_.mode == Mode::sp) {
    throw std::invalid_argument(std::string(routine) +
                                ": mode sp is for fp32 operands (the s routines)");
  }
  if (!fp64 && options_.mode != Mode::sp && options_.mode != Mode::tunable) {
    throw std::invalid_argument(std::string(routine) + ": modes sp and tunable only");
  }
}

void Handle::run(BlasCall call) {
  report_ = Report{};
  switch (call.work()) {
    case BlasCall::Work::none:
      return;
    case BlasCall::Work::scale_c:
      call.scale_c();
      break;
    case BlasCall::Work::products:
      detail::run_scheme(
          backend_, products_, options_, workspace_,
          {call.a(), call.b(), call.c(), call.alpha(), call.beta(), call.precision()}, report_);
      break;
  }
  call.finish();
}

void Handle::dgemm(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k,
                   double alpha, const double* a, std::int64_t lda, const double* b,
                   std::int64_t ldb, double beta, double* c, std::int64_t ldc) {
  check_mode("dgemm", true);
  run(BlasCall::gemm(backend_, "dgemm", transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c,
                     ldc));
}

void Handle::sgemm(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k,
                   float alpha, const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
                   float beta, float* c, std::int64_t ldc) {
  check_mode("sgemm", false);
  run(BlasCall::gemm(backend_, "sgemm", transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c,
                     ldc));
}

double Handle::ddot(std::int64_t n, const double* x, std::int64_t incx, const double* y,
                    std::int64_t incy) {
  check_mode("ddot", true);
  double result = 0;
  run(BlasCall::dot(backend_, "ddot", n, x, incx, y, incy, &result));
  return result;
}

float Handle::sdot(std::int64_t n, const float* x, std::int64_t incx, const float* y,
                   std::int64_t incy) {
  check_mode("sdot", false);
  float result = 0;
  run(BlasCall::dot(backend_, "sdot", n, x, incx, y, incy, &result));
  return result;
}

void Handle::dgemv(char trans, std::int64_t m, std::int64_t n, double alpha, const double* a,
                   std::int64_t lda, const double* x, std::int64_t incx, double beta, double* y,
                   std::int64_t incy) {
  check_mode("dgemv", true);
  run(BlasCall::gemv(backend_, "dgemv", trans, m, n, alpha, a, lda, x, incx, beta, y, incy));
}

void Handle::sgemv(char trans, std::int64_t m, std::int64_t n, float alpha, const float* a,
                   std::int64_t lda, const float* x, std::int64_t incx, float beta, float* y,
                   std::int64_t incy) {
  check_mode("sgemv", false);
  run(BlasCall::gemv(backend_, "sgemv", trans, m, n, alpha, a, lda, x, incx, beta, y, incy));
}

}  // namespace tcemu::ozaki
