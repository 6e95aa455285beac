#include "steps/integer_gemm_steps.hpp"

#include <cuda_runtime.h>

#include <stdexcept>

#include "cuda_check.hpp"
#include "device_matrix.hpp"
#include "gemm/cublas_gemm.hpp"
#include "grid_loop.cuh"

namespace tcemu::gpu::detail {
namespace {

constexpr int kThreads = 256;

// c_ij = the int32 sum s (column major, ld = c.rows), exactly as binary64; +0 for a zero sum.
__global__ void widen_kernel(const std::int32_t* sums, const DeviceReal c) {
  for_each_element(c.rows, c.cols, false, [&](std::int64_t i, std::int64_t j) {
    *c.fp64_at(i, j) = static_cast<double>(sums[j * c.rows + i]);
  });
}

}  // namespace

std::size_t integer_gemm_scratch_bytes(std::int64_t m, std::int64_t n) {
  return static_cast<std::size_t>(m) * static_cast<std::size_t>(n) * sizeof(std::int32_t);
}

void integer_gemm(cublasHandle_t handle, const IntegerMatrix& a, const IntegerMatrix& b,
                  const RealMatrix& c, void* scratch) {
  if (a.rows > INT32_MAX || b.cols > INT32_MAX || a.ld > INT32_MAX || b.ld > INT32_MAX) {
    throw std::invalid_argument("gpu: integer_gemm: dimensions past 2^31 - 1 are not supported");
  }
  const auto m = static_cast<int>(a.rows), n = static_cast<int>(b.cols),
             k = static_cast<int>(a.cols);
  auto* sums = static_cast<std::int32_t*>(scratch);
  if (k == 0) {
    TCEMU_CUDA_CHECK(cudaMemsetAsync(sums, 0, integer_gemm_scratch_bytes(m, n)));
  } else {
    // Column major for cuBLAS: A (m x k row major) is A^T (k x m) column major with ld a.ld, so
    // op(A) = T; B (k x n column major) is taken as it is: the "TN" product.
    const std::int32_t one = 1, zero = 0;
    TCEMU_CUBLAS_CHECK(
        cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one,
                     static_cast<const unsigned char*>(a.buffer->address()) + a.offset_bytes,
                     CUDA_R_8I, static_cast<int>(a.ld),
                     static_cast<const unsigned char*>(b.buffer->address()) + b.offset_bytes,
                     CUDA_R_8I, static_cast<int>(b.ld), &zero, sums, CUDA_R_32I, m,
                     CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT));
  }
  const DeviceReal out = device_real(c);
  widen_kernel<<<elementwise_grid(c.rows, c.cols, false, kThreads), kThreads>>>(sums, out);
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tcemu::gpu::detail
