// The Ozaki scheme's user interface: a handle holding a backend, the products (tensor cores
// through a datapath, or FP64), the mode and a workspace allocated once, with dgemm- and
// sgemm-shaped calls (column-major, as BLAS).
//
//   auto backend = tcemu::host::make_emulator_backend();
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

#include <complex>
#include <cstdint>

#include <tcemu/backend/backend.hpp>
#include <tcemu/backend/blas_routines.hpp>
#include <tcemu/ozaki/options.hpp>

namespace tcemu::ozaki {

class Handle final : public BlasRoutines {
 public:
  // Allocates options.workspace_bytes on `backend`, which must outlive the handle. Throws
  // std::invalid_argument for inconsistent options or products that cannot be exact.
  Handle(Backend& backend, Products products, Options options);

  // The routines of blas_routines.hpp. dgemm, dgemv and ddot: modes dp, cr and tunable; sgemm,
  // sgemv and sdot (SGEMM-TC: the scheme's FP64 value scaled by alpha, beta C added in FP64, the
  // result rounded to nearest even to fp32): modes sp, cr and tunable. Mode cr with alpha = 1
  // and beta = 0 gives the exact product rounded once to C's type in Options::rounding's
  // direction (fp32: the scheme rounds it to odd in binary64, the epilogue that once to fp32,
  // fp64::Direction::to_odd); with other alpha or beta (to nearest only) the correctly rounded
  // binary64 product goes through the binary64 epilogue, then to nearest fp32. DOT and GEMV run
  // the same scheme as OzBLAS's DDOT and DGEMV: the product with n = 1 (x as a k x 1 matrix,
  // split as B's column) and, for a DOT, m = 1 (x' as A's one row).
  // zgemm and cgemm (modes of dgemm and sgemm), as blas_routines.hpp states them: the real
  // form's product in the mode of dgemm (sgemm), its value S held in binary64 for both (as the
  // scheme's value before sgemm's epilogue), then alpha and beta applied in binary64 and the
  // parts rounded once to C's type: with real alpha and beta, the bits of dgemm (sgemm) on the
  // real form, element for element. Mode cr with alpha = 1 and beta = 0: each part of C is the
  // exact part of op(A) op(B) rounded once to C's part type, in Options::rounding's direction (a
  // directed rounding with any other alpha or beta is refused, as for dgemm).

  // The same product on matrices already in the backend's buffers, with no copy to or from the
  // host (the GPU backend's device memory): C := alpha A B + beta C with A m x k, B k x n and
  // C m x n, any layouts. All three hold fp64 (modes dp, cr, tunable) or all fp32 (sp, cr,
  // tunable). Throws std::invalid_argument naming the mismatch otherwise.
  void gemm(double alpha, const RealMatrix& a, const RealMatrix& b, double beta,
            const RealMatrix& c);
  // The same for complex matrices in the backend's buffers (cublasZgemm's device memory): C :=
  // alpha op(A) op(B) + beta C with op(A) = a (m x k) conjugated when conjugate_a, op(B) = b
  // (k x n) likewise, C m x n; all c128 (modes dp, cr, tunable) or all c64 (sp, cr, tunable). The
  // semantics of zgemm and cgemm (below): one real product of the real form, then the complex
  // epilogue in binary64.
  void gemm(std::complex<double> alpha, const ComplexMatrix& a, bool conjugate_a,
            const ComplexMatrix& b, bool conjugate_b, std::complex<double> beta,
            const ComplexMatrix& c);

  const Report& report() const { return report_; }
  const Options& options() const { return options_; }
  const Products& products() const { return products_; }

 protected:
  // Refuses a mode that does not take this precision; clears the report.
  void prepare(const char* routine, bool fp64) override;
  void compute(const BlasCall& call) override;
  // Mode cr, C := A B in binary32: Options::rounding (the scheme rounds to odd, see
  // Options::rounding); otherwise to nearest.
  fp64::Direction output_rounding(const BlasCall& call) const override;
  // The scheme's value is binary64 for fp32 operands too (SGEMM-TC's epilogue is in binary64).
  Real value_format(Real) const override { return Real::fp64; }

 private:
  Products products_;
  Options options_;
  Buffer workspace_;
  Report report_;
};

}  // namespace tcemu::ozaki
