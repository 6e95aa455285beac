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

  // The same product on matrices already in the backend's buffers, with no copy to or from the
  // host (the GPU backend's device memory): C := alpha A B + beta C with A m x k, B k x n and
  // C m x n, any layouts. All three hold fp64 (modes dp, cr, tunable) or all fp32 (sp,
  // tunable). Throws std::invalid_argument naming the mismatch otherwise.
  void gemm(double alpha, const RealMatrix& a, const RealMatrix& b, double beta,
            const RealMatrix& c);

  const Report& report() const { return report_; }
  const Options& options() const { return options_; }
  const Products& products() const { return products_; }
  Backend& backend() const { return backend_; }

 private:
  // C := alpha A B + beta C on backend matrices whose shapes and types are checked.
  void run(double alpha, const RealMatrix& a, const RealMatrix& b, double beta,
           const RealMatrix& c);
  template <typename T>
  void gemm(const char* routine, char transa, char transb, std::int64_t m, std::int64_t n,
            std::int64_t k, double alpha, const T* a, std::int64_t lda, const T* b,
            std::int64_t ldb, double beta, T* c, std::int64_t ldc);

  Backend& backend_;
  Products products_;
  Options options_;
  Buffer workspace_;
  Report report_;
};

}  // namespace tcemu::ozaki
