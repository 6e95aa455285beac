// The Ozaki scheme's user interface: a handle holding a backend, the products (tensor cores
// through a datapath, or FP64), the mode and a workspace allocated once, with dgemm- and
// sgemm-shaped calls (column-major, as BLAS).
//
//   auto backend = tcemu::make_emulator_backend();
//   tcemu::ozaki::Handle h(*backend,
//       tcemu::ozaki::TensorCoreProducts{tcemu::preset("sm90", tcemu::formats::fp16,
//                                                      tcemu::formats::fp32)},
//       {.mode = tcemu::ozaki::Mode::cr});
//   h.dgemm('N', 'N', m, n, k, 1.0, a, m, b, k, 0.0, c, m);
//
// The scheme is written once against the Backend interface (backend.hpp) and runs unchanged on
// every backend. For a given mode, d and product kind the result is bitwise identical across
// runs, thread counts, backends and datapaths with the same exact-product width
// (split_rule.hpp); in CR mode it is the correctly rounded product whatever the products.
#pragma once

#include <cstdint>

#include <tcemu/emulator/backend.hpp>
#include <tcemu/emulator/blas_call.hpp>
#include <tcemu/ozaki/options.hpp>

namespace tcemu::ozaki {

class Handle {
 public:
  // Allocates options.workspace_bytes on `backend`, which must outlive the handle. Throws
  // std::invalid_argument for inconsistent options or products that cannot be exact.
  Handle(Backend& backend, Products products, Options options);

  // C := alpha op(A) op(B) + beta C with op(X) = X ('N', 'n') or X^T ('T', 't', 'C', 'c'); A is
  // m x k after op, B k x n, C m x n, column-major with leading dimensions lda, ldb, ldc. Modes
  // dp, cr and tunable. Invalid arguments throw std::invalid_argument naming the parameter as
  // BLAS's xerbla does ("dgemm: parameter 8 (lda) = 2 must be >= max(1, 5)"); m, n = 0 or
  // (alpha = 0 or k = 0) with beta = 1 return at once, as BLAS does.
  void dgemm(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
             const double* a, std::int64_t lda, const double* b, std::int64_t ldb, double beta,
             double* c, std::int64_t ldc);

  // The same for fp32 operands (SGEMM-TC): modes sp and tunable. The scheme's FP64 value is
  // scaled by alpha, beta C added in FP64, and the result rounded to nearest even to fp32.
  void sgemm(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
             const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta,
             float* c, std::int64_t ldc);

  // DOT and GEMV by the same scheme (OzBLAS's DDOT and DGEMV): the product with n = 1 (x as a
  // k x 1 matrix, split as B's column) and, for a DOT, m = 1 (x' as A's one row). Arguments as
  // the reference BLAS's; increments may be negative, ddot's also zero (blas_call.hpp). Modes as
  // dgemm (ddot, dgemv) and sgemm (sdot, sgemv).
  double ddot(std::int64_t n, const double* x, std::int64_t incx, const double* y,
              std::int64_t incy);
  float sdot(std::int64_t n, const float* x, std::int64_t incx, const float* y, std::int64_t incy);
  void dgemv(char trans, std::int64_t m, std::int64_t n, double alpha, const double* a,
             std::int64_t lda, const double* x, std::int64_t incx, double beta, double* y,
             std::int64_t incy);
  void sgemv(char trans, std::int64_t m, std::int64_t n, float alpha, const float* a,
             std::int64_t lda, const float* x, std::int64_t incx, float beta, float* y,
             std::int64_t incy);

  const Report& report() const { return report_; }
  const Options& options() const { return options_; }
  const Products& products() const { return products_; }
  Backend& backend() const { return backend_; }

 private:
  // Refuses a mode that does not take this precision (routine names the call).
  void check_mode(const char* routine, bool fp64) const;
  void run(BlasCall call);

  Backend& backend_;
  Products products_;
  Options options_;
  Buffer workspace_;
  Report report_;
};

}  // namespace tcemu::ozaki
