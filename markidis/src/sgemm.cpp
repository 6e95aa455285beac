// The BLAS SGEMM entry point of the error-corrected schemes: the arguments go through the BLAS
// call plumbing every scheme shares (tcemu/backend/blas_call.hpp: xerbla's checks and messages,
// the operands moved into the backend, C copied back), and the product through gemm().
#include <optional>

#include <tcemu/backend/blas_call.hpp>
#include <tcemu/emulator/floating_point_scope.hpp>
#include <tcemu/markidis/gemm.hpp>

namespace tcemu::markidis {
namespace {

// A binary32 RealMatrix of the BLAS call as the fp32 bit matrix the fp32 steps take: the same
// bytes, element for element.
BufferMatrix fp32_bits(const RealMatrix& m) {
  return {m.buffer, m.offset_bytes, formats::fp32, m.rows, m.cols, m.ld, m.layout};
}

}  // namespace

void sgemm(Backend& backend, const Scheme& scheme, const Datapath& datapath, char transa,
           char transb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
           std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
           std::int64_t ldc, int threads) {
  const FloatingPointScope scope;
  BlasCall call = BlasCall::gemm(backend, "sgemm", transa, transb, m, n, k, alpha, a, lda, b, ldb,
                                 beta, c, ldc);
  validate(scheme, datapath);
  const BufferMatrix c_bits = fp32_bits(call.c());
  switch (call.work()) {
    case BlasCall::Work::none:
      return;
    case BlasCall::Work::scale_c:
      // C := beta C: +0 without reading C when beta == 0 (BLAS), otherwise RN(beta c) in the
      // fp32 arithmetic of the scheme's other steps (combine_fp32 with alpha = beta: its NaN is
      // the fp32 split steps').
      if (beta == 0.0f) {
        call.scale_c();
      } else {
        backend.combine_fp32(c_bits, std::nullopt, std::nullopt, c_bits, {.alpha = beta});
      }
      break;
    case BlasCall::Work::products:
      gemm(backend, scheme, datapath, fp32_bits(call.a()), fp32_bits(call.b()),
           beta != 0.0f ? std::optional<BufferMatrix>(c_bits) : std::nullopt, c_bits,
           {.alpha = alpha, .beta = beta, .threads = threads});
      break;
  }
  call.finish();
}

}  // namespace tcemu::markidis
