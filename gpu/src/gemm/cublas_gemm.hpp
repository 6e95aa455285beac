// The GPU backend's cuBLAS calls: cublasGemmEx on device matrices (GemmEngine::cublas, with C as
// the initial accumulator and take-out composed around it: gpu_backend.hpp) and
// cublasDgemm (Backend::fp64_gemm).
#pragma once

#include <cublas_v2.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/gemm.hpp>

#include "device_matrix.hpp"

namespace tcemu::gpu::detail {

inline void cublas_check(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw std::runtime_error(std::string(call) + " failed at " + file + ":" + std::to_string(line) +
                           ": " + cublasGetStatusName(status) + " (" +
                           cublasGetStatusString(status) + ")");
}

// A matrix as cuBLAS's column-major operand of a product: the data, its leading dimension and
// whether cuBLAS must transpose it to get the matrix we mean.
struct ColumnMajorOperand {
  const void* data;
  int ld;
  cublasOperation_t op;
};

// x itself (transposed = false) or x^T, as a column-major cuBLAS operand (x a DeviceMatrix or a
// DeviceReal).
template <class Matrix>
ColumnMajorOperand operand(const Matrix& x, bool transposed) {
  const bool stored_as_wanted = x.row_major == transposed;  // x^T row major is x column major
  return {x.data, static_cast<int>(x.ld), stored_as_wanted ? CUBLAS_OP_N : CUBLAS_OP_T};
}

// D = A B as one column-major cuBLAS product first * second (rows x cols, inner dimension k):
// cuBLAS writes a column-major D, and a row-major D is D^T column major, D^T = B^T A^T.
struct ColumnMajorProduct {
  ColumnMajorOperand first, second;
  int rows, cols, k;
};

template <class Matrix>
ColumnMajorProduct column_major_product(const Matrix& a, const Matrix& b, const Matrix& d) {
  const bool transposed = d.row_major;
  return {operand(transposed ? b : a, transposed), operand(transposed ? a : b, transposed),
          static_cast<int>(transposed ? d.cols : d.rows),
          static_cast<int>(transposed ? d.rows : d.cols), static_cast<int>(a.cols)};
}

// Throws std::invalid_argument unless cuBLAS offers this datapath's formats (fp16/bf16/tf32
// inputs, fp32 accumulator) and takeout_every_k is a non-negative multiple of its instruction_k.
void check_cublas_gemm(const Datapath& datapath, const GemmOptions& options);

// Device scratch of at least the bytes asked for, valid until the next request.
using Scratch = std::function<void*(std::size_t bytes)>;

// D = alpha A B + beta C as GemmOptions defines it, the products by cuBLAS (see
// GemmEngine::cublas): one cublasGemmEx without take-out (C copied into D first when they differ,
// since cuBLAS updates C in place), the k chunks through cublasGemmStridedBatchedEx into `scratch`
// and our in-order sum with take-out. The caller has checked the shapes and check_cublas_gemm.
void cublas_gemm(cublasHandle_t handle, const Datapath& datapath, const GemmOptions& options,
                 const DeviceMatrix& a, const DeviceMatrix& b, const std::optional<DeviceMatrix>& c,
                 const DeviceMatrix& d, const Scratch& scratch);

// One product of a batch: D = alpha A B.
struct DeviceProduct {
  DeviceMatrix a, b, d;
};

// Device bytes cublas_gemm_batch needs in `pointers`.
std::size_t batched_gemm_pointer_bytes();

// D_i = alpha A_i B_i for every product (all alike: Backend::mma_gemm_batch), as
// cublasGemmBatchedEx calls over chunks of products. A kernel writes each chunk's pointer arrays
// into `pointers` (device memory, batched_gemm_pointer_bytes()) from its parameters, so nothing
// is copied from the host and nothing synchronises; stream order keeps a chunk's arrays until its
// GEMMs have read them. The caller has checked the shapes and check_cublas_gemm (no take-out).
void cublas_gemm_batch(cublasHandle_t handle, const Datapath& datapath, float alpha,
                       std::span<const DeviceProduct> batch, void* pointers);

// c = a b in binary64 through cublasDgemm (any layouts; c must not overlap a or b).
void cublas_fp64_gemm(cublasHandle_t handle, const DeviceReal& a, const DeviceReal& b,
                      const DeviceReal& c);

}  // namespace tcemu::gpu::detail

#define TCEMU_CUBLAS_CHECK(call) \
  ::tcemu::gpu::detail::cublas_check((call), #call, __FILE__, __LINE__)
