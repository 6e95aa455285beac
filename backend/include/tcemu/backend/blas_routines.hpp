// The BLAS-shaped entry points that a scheme's handle (ozaki::Handle, accurate::Handle) offers,
// column-major as the reference BLAS: ?dot, ?gemv and ?gemm for fp64 (d) and fp32 (s), and ?gemm
// for complex<double> (z) and complex<float> (c) through the real form (complex_steps.hpp). Each
// one lets the handle refuse it (prepare), checks and moves the arguments (blas_call.hpp: DOT and
// GEMV are the GEMM with n = 1 and m = 1), then does what is left: nothing (BLAS's quick return),
// C := beta C, or the scheme's product (compute), and copies C back.
#pragma once

#include <complex>
#include <cstdint>

#include <tcemu/backend/backend.hpp>
#include <tcemu/backend/blas_call.hpp>

namespace tcemu {

class BlasRoutines {
 public:
  // `backend` must outlive the handle.
  explicit BlasRoutines(Backend& backend) : backend_(backend) {}
  BlasRoutines(const BlasRoutines&) = delete;
  BlasRoutines& operator=(const BlasRoutines&) = delete;
  virtual ~BlasRoutines() = default;

  // x'y (n <= 0: 0). Increments may be negative (read from the far end) or zero.
  double ddot(std::int64_t n, const double* x, std::int64_t incx, const double* y,
              std::int64_t incy);
  float sdot(std::int64_t n, const float* x, std::int64_t incx, const float* y, std::int64_t incy);
  // y := alpha op(A) x + beta y, A m x n with leading dimension lda, trans 'N', 'T' or 'C'.
  void dgemv(char trans, std::int64_t m, std::int64_t n, double alpha, const double* a,
             std::int64_t lda, const double* x, std::int64_t incx, double beta, double* y,
             std::int64_t incy);
  void sgemv(char trans, std::int64_t m, std::int64_t n, float alpha, const float* a,
             std::int64_t lda, const float* x, std::int64_t incx, float beta, float* y,
             std::int64_t incy);
  // C := alpha op(A) op(B) + beta C, op(A) m x k, op(B) k x n, C m x n.
  void dgemm(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
             const double* a, std::int64_t lda, const double* b, std::int64_t ldb, double beta,
             double* c, std::int64_t ldc);
  void sgemm(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
             const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta,
             float* c, std::int64_t ldc);

  // The same for complex matrices, interleaved (std::complex) and column-major as BLAS stores
  // them; op(X) = X ('N'), X^T ('T') or the conjugate transpose ('C'). The scheme computes ONE
  // real product, the real form A2 B2 = [Re Im] of op(A) op(B) (complex_steps.hpp) with alpha = 1
  // and beta = 0 (zgemm as dgemm, cgemm as sgemm: prepare is asked for that precision), so each
  // part of op(A) op(B) is what the scheme gives for one element of a real product of inner
  // dimension 2k (cr: each part correctly rounded, in the handle's direction). Then
  // Backend::complex_epilogue applies alpha and beta in value_format()'s arithmetic: with alpha
  // and beta real (imaginary parts zero), the bits are those of dgemm (sgemm) on the real form
  // with that alpha and beta; otherwise each product of the complex multiplications and each sum
  // is rounded to nearest once. Arguments are checked as ?gemm checks them.
  void zgemm(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k,
             std::complex<double> alpha, const std::complex<double>* a, std::int64_t lda,
             const std::complex<double>* b, std::int64_t ldb, std::complex<double> beta,
             std::complex<double>* c, std::int64_t ldc);
  void cgemm(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k,
             std::complex<float> alpha, const std::complex<float>* a, std::int64_t lda,
             const std::complex<float>* b, std::int64_t ldb, std::complex<float> beta,
             std::complex<float>* c, std::int64_t ldc);

  Backend& backend() const { return backend_; }

 protected:
  // Called first by every routine (`routine` its name, fp64 for the d routines): throws
  // std::invalid_argument if this handle does not offer it, and resets per-call state.
  virtual void prepare(const char* routine, bool fp64) = 0;
  // call.c() := alpha op(A) op(B) + beta C on the backend (BlasCall::Work::products).
  virtual void compute(const BlasCall& call) = 0;
  // The format in which compute() delivers C := A B for operands of format `operands` and in
  // whose arithmetic a real alpha and beta are applied: the real form's value S and the
  // arithmetic of the complex epilogue. The operands' own unless a handle computes wider.
  virtual Real value_format(Real operands) const { return operands; }
  // The direction in which the complex epilogue rounds the parts of a c64 C after compute()
  // (Backend::complex_epilogue): to nearest unless the handle's scheme is correctly rounded.
  virtual fp64::Direction output_rounding(const BlasCall&) const {
    return fp64::Direction::nearest_even;
  }

 private:
  void run(BlasCall call);

  Backend& backend_;
};

}  // namespace tcemu
