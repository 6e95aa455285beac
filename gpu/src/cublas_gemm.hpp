// The GPU backend's cuBLAS calls: cublasGemmEx on device matrices (GemmEngine::cublas) and
// cublasDgemm (Backend::fp64_gemm).
#pragma once

#include <cublas_v2.h>

#include <optional>
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

// Throws std::invalid_argument unless cublasGemmEx offers this datapath's formats with these
// options (fp16/bf16/tf32 inputs, fp32 accumulator, epilogue mode, no take-out).
void check_cublas_gemm(const Datapath& datapath, const GemmOptions& options);

// D = alpha A B + beta C through cublasGemmEx; C is copied into D first when they differ (cuBLAS
// updates C in place).
void cublas_gemm(cublasHandle_t handle, const Datapath& datapath, const GemmOptions& options,
                 const DeviceMatrix& a, const DeviceMatrix& b, const std::optional<DeviceMatrix>& c,
                 const DeviceMatrix& d);

// c = a b in binary64 through cublasDgemm (any layouts; c must not overlap a or b).
void cublas_fp64_gemm(cublasHandle_t handle, const DeviceReal& a, const DeviceReal& b,
                      const DeviceReal& c);

}  // namespace tcemu::gpu::detail

#define TCEMU_CUBLAS_CHECK(call) \
  ::tcemu::gpu::detail::cublas_check((call), #call, __FILE__, __LINE__)
