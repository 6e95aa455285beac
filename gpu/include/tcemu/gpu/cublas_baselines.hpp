// The vendor's fp32 and fp64 GEMMs on the buffers of a GPU backend: the baselines that the
// benchmarks and experiments set the error-corrected schemes against (cublasSgemm, cublasGemmEx
// with FAST_TF32, and cublasDgemm as a reference). Their bits are cuBLAS's (unspecified order).
// Plain C++ header: callers never include a CUDA header.
#pragma once

#include <memory>

#include <tcemu/backend/backend.hpp>

namespace tcemu::gpu {

enum class Baseline {
  sgemm,            // cublasSgemm, CUBLAS_DEFAULT_MATH: fp32 FMA, no tensor cores
  sgemm_fast_tf32,  // cublasGemmEx fp32 -> fp32 with CUBLAS_COMPUTE_32F_FAST_TF32
  dgemm,            // cublasDgemm
};

const char* name_of(Baseline baseline);

class CublasBaselines {
 public:
  // A cuBLAS handle on the current device for the buffers of `gpu`. Throws std::invalid_argument
  // unless `gpu` is a GPU backend (is_gpu_backend), std::runtime_error when cuBLAS fails.
  explicit CublasBaselines(const Backend& gpu);
  ~CublasBaselines();
  CublasBaselines(const CublasBaselines&) = delete;
  CublasBaselines& operator=(const CublasBaselines&) = delete;

  // D = A B (A m x k, B k x n, D m x n, any layouts), every matrix in a buffer of the backend and
  // of the baseline's type (fp32, or fp64 for dgemm). Throws std::invalid_argument naming the
  // problem (type, shape, a buffer of another backend, a view past its buffer's end).
  void gemm(Baseline baseline, const RealMatrix& a, const RealMatrix& b, const RealMatrix& d);

 private:
  struct Handle;
  const Backend& gpu_;
  std::unique_ptr<Handle> handle_;
};

}  // namespace tcemu::gpu
