// The operands of one BLAS call (DOT, GEMV or GEMM, column-major as the reference BLAS) checked
// as the reference BLAS checks them and moved into a backend's buffers, as one product
//   C := alpha op(A) op(B) + beta C      (RealMatrix views A m x k, B k x n, C m x n)
// that a scheme (ozaki/, accurate/) computes with backend steps: GEMV is the GEMM with n = 1
// (x and y as k x 1 and m x 1 columns with their increments as leading dimensions), DOT the GEMM
// with m = n = 1. finish() moves C back into the caller's array.
//
// Bad arguments throw std::invalid_argument naming the parameter as the reference BLAS's xerbla
// numbers it: "dgemv: parameter 6 (lda) = 2 must be >= max(1, 5)".
#pragma once

#include <complex>
#include <cstdint>
#include <memory>

#include <tcemu/backend/backend.hpp>
#include <tcemu/backend/complex_product.hpp>
#include <tcemu/backend/error_free.hpp>

namespace tcemu {

class BlasCall {
 public:
  // ?gemm: op(X) = X for 'N'/'n', X^T for 'T'/'t'/'C'/'c'. Quick return (nothing to do) for
  // m = 0, n = 0, or (alpha = 0 or k = 0) with beta = 1.
  template <RealType T>
  static BlasCall gemm(Backend& backend, const char* routine, char transa, char transb,
                       std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,
                       std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c,
                       std::int64_t ldc);
  // ?gemm on complex matrices (zgemm: T = double, cgemm: float), interleaved as BLAS stores
  // them: op(X) = X for 'N', X^T for 'T', the conjugate transpose for 'C'. The same checks and
  // quick return as gemm. The product is one real product (ComplexProduct): a(), b() and c() are
  // the real forms A2, B2 and the value S (`value` format), alpha() = 1 and beta() = 0; finish()
  // applies the complex alpha and beta (Backend::complex_epilogue in `value` arithmetic) and
  // copies C back; scale_c() is C := beta C in that arithmetic.
  template <RealType T>
  static BlasCall complex_gemm(Backend& backend, const char* routine, char transa, char transb,
                               std::int64_t m, std::int64_t n, std::int64_t k,
                               std::complex<T> alpha, const std::complex<T>* a, std::int64_t lda,
                               const std::complex<T>* b, std::int64_t ldb, std::complex<T> beta,
                               std::complex<T>* c, std::int64_t ldc, Real value);
  // ?gemv: y := alpha op(A) x + beta y, A m x n. Increments may be negative (the vector is read
  // from its far end) but not zero. Quick return for m = 0, n = 0, or alpha = 0 with beta = 1.
  template <RealType T>
  static BlasCall gemv(Backend& backend, const char* routine, char trans, std::int64_t m,
                       std::int64_t n, T alpha, const T* a, std::int64_t lda, const T* x,
                       std::int64_t incx, T beta, T* y, std::int64_t incy);
  // ?dot: *result := x'y. n <= 0 gives 0; increments may be negative or zero (every element
  // x[0]), as the reference BLAS allows.
  template <RealType T>
  static BlasCall dot(Backend& backend, const char* routine, std::int64_t n, const T* x,
                      std::int64_t incx, const T* y, std::int64_t incy, T* result);

  BlasCall(BlasCall&&) = default;
  ~BlasCall() = default;

  // What the scheme has to do.
  enum class Work {
    none,      // quick return
    scale_c,   // alpha = 0 or k = 0: C := beta C, which scale_c() does
    products,  // compute alpha op(A) op(B) + beta C into c(), then finish()
  };
  Work work() const { return work_; }
  // The views, valid while this object lives (it owns their buffers).
  RealMatrix a() const { return form_ ? form_->a2() : in(a_, a_buffer_); }
  RealMatrix b() const { return form_ ? form_->b2() : in(b_, b_buffer_); }
  RealMatrix c() const { return form_ ? form_->value() : in(c_, c_buffer_); }
  double alpha() const { return alpha_; }
  double beta() const { return beta_; }
  // 53 for fp64 operands, 24 for fp32.
  int precision() const { return a().format == Real::fp64 ? 53 : 24; }
  // A complex GEMM (complex_gemm), and its alpha and beta (alpha() and beta() are 1 and 0).
  bool complex() const { return complex_; }
  std::complex<double> complex_alpha() const { return complex_alpha_; }
  std::complex<double> complex_beta() const { return complex_beta_; }

  // C := beta C by Backend::epilogue (BLAS: +0 when beta = 0, C not read).
  void scale_c();
  // Copies C back into the caller's array (no-op after a quick return), after the complex
  // epilogue, whose binary32 parts are rounded in direction d (BlasRoutines::output_rounding).
  void finish(fp64::Direction d = fp64::Direction::nearest_even);

 private:
  explicit BlasCall(Backend& backend) : backend_(&backend) {}
  // A vector of n elements with increment inc, moved into a buffer as an n x 1 column. A
  // positive increment becomes the leading dimension (row-major n x 1); any other is gathered.
  template <RealType T>
  RealMatrix vector_in(Buffer& buffer, const T* x, std::int64_t n, std::int64_t inc);

  // The views are kept without their buffer (a move of this object moves the buffers).
  template <class Format>
  static BufferMatrixOf<Format> in(BufferMatrixOf<Format> m, const Buffer& buffer) {
    m.buffer = &buffer;
    return m;
  }
  ComplexMatrix complex_c() const { return in(complex_c_, complex_c_buffer_); }

  Backend* backend_;
  Work work_ = Work::none;
  Buffer a_buffer_, b_buffer_, c_buffer_;
  RealMatrix a_{}, b_{}, c_{};
  double alpha_ = 1, beta_ = 0;
  // A complex GEMM: C in the caller's layout, the real form and its value, the scalars.
  bool complex_ = false;
  Buffer complex_c_buffer_;
  ComplexMatrix complex_c_{};
  std::unique_ptr<ComplexProduct> form_;
  std::complex<double> complex_alpha_ = 1, complex_beta_ = 0;
  Real value_ = Real::fp64;
  // Where C goes back: a column-major array (ldc) or a vector with its increment.
  void* c_host_ = nullptr;
  std::int64_t c_inc_ = 0;  // 0: a matrix (copied as its extent), else the vector's increment
};

}  // namespace tcemu
