#include "gemmul8_adapter.hpp"

#include <gemmul8.hpp>

namespace tcemu::experiments {

std::size_t gemmul8_workspace_bytes(std::int64_t n, int moduli) {
  const auto size = static_cast<std::size_t>(n);
  return gemmul8::workSize<false, gemmul8::Backend::INT8>(size, size, size,
                                                          static_cast<unsigned>(moduli));
}

void gemmul8_dgemm(cublasHandle_t handle, std::int64_t n, const double* a, const double* b,
                   double* c, int moduli, bool fast, void* workspace) {
  const auto size = static_cast<std::size_t>(n);
  const double one = 1.0, zero = 0.0;
  gemmul8::gemm<double, gemmul8::Backend::INT8>(handle, CUBLAS_OP_N, CUBLAS_OP_N, size, size, size,
                                                &one, a, size, b, size, &zero, c, size,
                                                static_cast<unsigned>(moduli), fast, workspace);
}

}  // namespace tcemu::experiments
