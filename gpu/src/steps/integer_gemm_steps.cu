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

// cuBLAS's int8 GEMM refuses (CUBLAS_STATUS_NOT_SUPPORTED, seen on the H100 with k = 130) unless
// k, the leading dimensions and the addresses are multiples of 4: otherwise integer_gemm_into
// copies both operands with k padded by zeros to a multiple of 16 (zero terms leave every sum
// unchanged).
bool needs_padding(const IntegerMatrix& a, const IntegerMatrix& b) {
  const auto aligned4 = [](const IntegerMatrix& x) {
    return (reinterpret_cast<std::uintptr_t>(x.buffer->address()) + x.offset_bytes) % 4 == 0;
  };
  return a.cols % 4 != 0 || a.ld % 4 != 0 || b.ld % 4 != 0 || !aligned4(a) || !aligned4(b);
}

// The padded copies: A (m x k16) at 0, B (n x k16) at b_at.
struct Padding {
  std::int64_t k16;
  std::size_t b_at, bytes;
};

Padding padding(std::int64_t m, std::int64_t n, std::int64_t k) {
  Padding p{};
  p.k16 = round_up(k, 16);
  p.b_at = static_cast<std::size_t>(round_up(m * p.k16, 256));
  p.bytes = p.b_at + static_cast<std::size_t>(n * p.k16);
  return p;
}

// integer_gemm_sums's scratch: the sums, then the padded copies.
std::size_t sums_scratch_bytes(std::int64_t m, std::int64_t n) {
  return static_cast<std::size_t>(round_up(integer_sums_ld(m) * n * 4, 256));
}

}  // namespace

std::int64_t integer_sums_ld(std::int64_t m) {
  return round_up(m, 4);
}

std::size_t integer_gemm_scratch_bytes(std::int64_t m, std::int64_t n, std::int64_t k) {
  return sums_scratch_bytes(m, n) + padding(m, n, k).bytes;
}

std::size_t integer_gemm_padding_bytes(const IntegerMatrix& a, const IntegerMatrix& b) {
  return needs_padding(a, b) ? padding(a.rows, b.cols, a.cols).bytes : 0;
}

void integer_gemm_into(cublasHandle_t handle, const IntegerMatrix& a, const IntegerMatrix& b,
                       std::int32_t* sums, std::int64_t ld, void* scratch) {
  if (a.rows > INT32_MAX || b.cols > INT32_MAX || a.ld > INT32_MAX || b.ld > INT32_MAX ||
      ld > INT32_MAX) {
    throw std::invalid_argument("gpu: integer_gemm: dimensions past 2^31 - 1 are not supported");
  }
  const std::int64_t m = a.rows, n = b.cols, k = a.cols;
  if (k == 0) {
    TCEMU_CUDA_CHECK(cudaMemsetAsync(sums, 0, static_cast<std::size_t>(ld * n) * 4));
    return;
  }
  const auto* a8 = static_cast<const std::int8_t*>(a.buffer->address()) + a.offset_bytes;
  const auto* b8 = static_cast<const std::int8_t*>(b.buffer->address()) + b.offset_bytes;
  std::int64_t lda = a.ld, ldb = b.ld, kk = k;
  if (needs_padding(a, b)) {
    const Padding p = padding(m, n, k);
    auto* pa = static_cast<std::int8_t*>(scratch);
    auto* pb = pa + p.b_at;
    pad_kernel<<<elementwise_grid(m, p.k16, true, kThreads), kThreads>>>(a8, lda, k, pa, m, p.k16);
    pad_kernel<<<elementwise_grid(n, p.k16, true, kThreads), kThreads>>>(b8, ldb, k, pb, n, p.k16);
    TCEMU_CUDA_CHECK(cudaGetLastError());
    a8 = pa;
    b8 = pb;
    lda = ldb = kk = p.k16;
  }
  // Column major for cuBLAS: A (m x k row major) is A^T (k x m) column major with ld lda, so
  // op(A) = T; B (k x n column major) is taken as it is: the "TN" product. Wide products go as
  // blocks of 8192 columns (the last block up to 12288): cuBLAS ran n = m = k = 16384 at 1200
  // TOPS in one call and at 1790 TOPS as two calls of 8192 columns (H200, 2026-11-24; the
  // blocking GEMMul8 uses). The sums are exact, so the blocking changes no bit.
  const std::int32_t one = 1, zero = 0;
  for (std::int64_t j0 = 0; j0 < n;) {
    const std::int64_t cols = n - j0 <= 12288 ? n - j0 : 8192;
    TCEMU_CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(m),
                                    static_cast<int>(cols), static_cast<int>(kk), &one, a8,
                                    CUDA_R_8I, static_cast<int>(lda), b8 + j0 * ldb, CUDA_R_8I,
                                    static_cast<int>(ldb), &zero, sums + j0 * ld, CUDA_R_32I,
                                    static_cast<int>(ld), CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT));
    j0 += cols;
  }
}

const std::int32_t* integer_gemm_sums(cublasHandle_t handle, const IntegerMatrix& a,
                                      const IntegerMatrix& b, void* scratch) {
  auto* sums = static_cast<std::int32_t*>(scratch);
  integer_gemm_into(handle, a, b, sums, integer_sums_ld(a.rows),
                    static_cast<unsigned char*>(scratch) + sums_scratch_bytes(a.rows, b.cols));
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
