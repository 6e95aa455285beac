#include "steps/integer_gemm_steps.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>

#include "cuda_check.hpp"
#include "device_matrix.hpp"
#include "gemm/cublas_gemm.hpp"
#include "grid_loop.cuh"

namespace tcemu::gpu::detail {
namespace {

constexpr int kThreads = 256;

std::int64_t round_up(std::int64_t x, std::int64_t to) {
  return (x + to - 1) / to * to;
}

// c_ij = the int32 sum (column major, leading dimension ld), exactly as binary64; +0 for zero.
__global__ void widen_kernel(const std::int32_t* sums, const std::int64_t ld, const DeviceReal c) {
  for_each_element(c.rows, c.cols, false, [&](std::int64_t i, std::int64_t j) {
    *c.fp64_at(i, j) = static_cast<double>(sums[j * ld + i]);
  });
}

// dst (vectors x padded, contiguous) = src (vectors x k, leading dimension ld) with zeros in
// the columns k .. padded - 1: zero terms leave every sum unchanged.
__global__ void pad_kernel(const std::int8_t* src, const std::int64_t ld, const std::int64_t k,
                           std::int8_t* dst, const std::int64_t vectors,
                           const std::int64_t padded) {
  for_each_element(vectors, padded, true, [&](std::int64_t v, std::int64_t p) {
    dst[v * padded + p] = p < k ? src[v * ld + p] : std::int8_t{0};
  });
}

// The scratch: the int32 sums (ld = m rounded up to 4), then padded copies of A and B.
struct ScratchLayout {
  std::int64_t ldc, k16;
  std::size_t a_at, b_at, bytes;
};

ScratchLayout scratch_layout(std::int64_t m, std::int64_t n, std::int64_t k) {
  ScratchLayout l{};
  l.ldc = round_up(m, 4);
  l.k16 = round_up(k, 16);
  l.a_at = static_cast<std::size_t>(round_up(l.ldc * n * 4, 256));
  l.b_at = l.a_at + static_cast<std::size_t>(round_up(m * l.k16, 256));
  l.bytes = l.b_at + static_cast<std::size_t>(n * l.k16);
  return l;
}

}  // namespace

std::size_t integer_gemm_scratch_bytes(std::int64_t m, std::int64_t n, std::int64_t k) {
  return scratch_layout(m, n, k).bytes;
}

std::int64_t integer_sums_ld(std::int64_t m) {
  return round_up(m, 4);
}

const std::int32_t* integer_gemm_sums(cublasHandle_t handle, const IntegerMatrix& a,
                                      const IntegerMatrix& b, void* scratch) {
  if (a.rows > INT32_MAX || b.cols > INT32_MAX || a.ld > INT32_MAX || b.ld > INT32_MAX) {
    throw std::invalid_argument("gpu: integer_gemm: dimensions past 2^31 - 1 are not supported");
  }
  const std::int64_t m = a.rows, n = b.cols, k = a.cols;
  const ScratchLayout l = scratch_layout(m, n, k);
  auto* base = static_cast<unsigned char*>(scratch);
  auto* sums = reinterpret_cast<std::int32_t*>(base);
  if (k == 0) {
    TCEMU_CUDA_CHECK(cudaMemsetAsync(sums, 0, static_cast<std::size_t>(l.ldc * n) * 4));
  } else {
    const auto* a8 = static_cast<const std::int8_t*>(a.buffer->address()) + a.offset_bytes;
    const auto* b8 = static_cast<const std::int8_t*>(b.buffer->address()) + b.offset_bytes;
    std::int64_t lda = a.ld, ldb = b.ld, kk = k;
    // cuBLAS's int8 GEMM refuses (CUBLAS_STATUS_NOT_SUPPORTED, seen on the H100 with k = 130)
    // unless k, the leading dimensions and the addresses are multiples of 4: otherwise both
    // operands are copied with k padded by zeros to a multiple of 16.
    const auto aligned4 = [](const void* p) {
      return reinterpret_cast<std::uintptr_t>(p) % 4 == 0;
    };
    if (k % 4 != 0 || lda % 4 != 0 || ldb % 4 != 0 || !aligned4(a8) || !aligned4(b8)) {
      auto* pa = reinterpret_cast<std::int8_t*>(base + l.a_at);
      auto* pb = reinterpret_cast<std::int8_t*>(base + l.b_at);
      pad_kernel<<<elementwise_grid(m, l.k16, true, kThreads), kThreads>>>(a8, lda, k, pa, m,
                                                                           l.k16);
      pad_kernel<<<elementwise_grid(n, l.k16, true, kThreads), kThreads>>>(b8, ldb, k, pb, n,
                                                                           l.k16);
      TCEMU_CUDA_CHECK(cudaGetLastError());
      a8 = pa;
      b8 = pb;
      lda = ldb = kk = l.k16;
    }
    // Column major for cuBLAS: A (m x k row major) is A^T (k x m) column major with ld lda, so
    // op(A) = T; B (k x n column major) is taken as it is: the "TN" product. Wide products go as
    // blocks of 8192 columns (the last block up to 12288): cuBLAS ran n = m = k = 16384 at 1200
    // TOPS in one call and at 1790 TOPS as two calls of 8192 columns (H200, 2026-11-24; the
    // blocking GEMMul8 uses). The sums are exact, so the blocking changes no bit.
    const std::int32_t one = 1, zero = 0;
    for (std::int64_t j0 = 0; j0 < n;) {
      const std::int64_t cols = n - j0 <= 12288 ? n - j0 : 8192;
      TCEMU_CUBLAS_CHECK(cublasGemmEx(
          handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(m), static_cast<int>(cols),
          static_cast<int>(kk), &one, a8, CUDA_R_8I, static_cast<int>(lda), b8 + j0 * ldb,
          CUDA_R_8I, static_cast<int>(ldb), &zero, sums + j0 * l.ldc, CUDA_R_32I,
          static_cast<int>(l.ldc), CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT));
      j0 += cols;
    }
  }
  return sums;
}

void integer_gemm(cublasHandle_t handle, const IntegerMatrix& a, const IntegerMatrix& b,
                  const RealMatrix& c, void* scratch) {
  const std::int32_t* sums = integer_gemm_sums(handle, a, b, scratch);
  const DeviceReal out = device_real(c);
  widen_kernel<<<elementwise_grid(c.rows, c.cols, false, kThreads), kThreads>>>(
      sums, integer_sums_ld(c.rows), out);
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tcemu::gpu::detail
