// What the GPU table programs share (ozaki_gpu_table.cpp, int8_ozaki_table.cpp,
// cublas_gemm_program.cpp): CUDA and cuBLAS statuses as text, the median time of a call on the
// device, and cuBLAS's own FP64 emulation as one of the table's methods.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/backend/backend.hpp>

namespace tcemu::experiments {

// Throws std::runtime_error "WHAT: REASON" unless `status` is cudaSuccess.
inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
  }
}

// A cuBLAS status as text ("NAME (REASON)"), or nothing on success.
inline std::optional<std::string> failure(cublasStatus_t status) {
  if (status == CUBLAS_STATUS_SUCCESS) return std::nullopt;
  return std::string(cublasGetStatusName(status)) + " (" + cublasGetStatusString(status) + ")";
}

// The median seconds of `runs` calls of `call` after one warm-up call, each timed from a
// synchronised device to a synchronised device; 0 with the first failure's text in `note`
// when a call returns one.
inline double median_seconds(int runs, const std::function<std::optional<std::string>()>& call,
                             std::string& note) {
  std::vector<double> seconds;
  for (int r = 0; r <= runs; ++r) {
    check(cudaDeviceSynchronize(), "synchronize");
    const auto start = std::chrono::steady_clock::now();
    if (auto f = call()) {
      note = *f;
      return 0.0;
    }
    check(cudaDeviceSynchronize(), "synchronize");
    if (r > 0) {
      seconds.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

// cuBLAS's fixed-point FP64 emulation (cublasGemmEx with CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT,
// strategy EAGER) on a handle of its own, for n x n products: a workspace for the int8 slices of A
// and B (cuBLAS's estimate: padded (m + n) k bytes per slice, 10 slices for 79 bits, with a margin)
// and a device word where cuBLAS reports the mantissa width it used.
class CublasFp64Emulation {
 public:
  CublasFp64Emulation(Backend& backend, std::int64_t n)
      : backend_(backend),
        workspace_(backend.allocate(workspace_bytes(n))),
        used_bits_word_(backend.allocate(sizeof(int))) {
    if (auto f = failure(cublasCreate(&handle_))) throw std::runtime_error("cublasCreate: " + *f);
    for (const auto status : {cublasSetWorkspace(handle_, workspace_.address(), workspace_bytes(n)),
                              cublasSetMathMode(handle_, CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH),
                              cublasSetEmulationStrategy(handle_, CUBLAS_EMULATION_STRATEGY_EAGER),
                              cublasSetFixedPointEmulationMantissaBitCountPointer(
                                  handle_, static_cast<int*>(used_bits_word_.address()))}) {
      if (!setup_) setup_ = failure(status);
    }
  }
  CublasFp64Emulation(const CublasFp64Emulation&) = delete;
  CublasFp64Emulation& operator=(const CublasFp64Emulation&) = delete;
  ~CublasFp64Emulation() { cublasDestroy(handle_); }

  // Dynamic mantissa control (width 0) or a fixed width; why the emulation is not available
  // otherwise (this cuBLAS or device lacks it, or refuses the width).
  std::optional<std::string> use_width(int width) {
    if (setup_) return setup_;
    if (auto f = failure(cublasSetFixedPointEmulationMantissaControl(
            handle_, width == 0 ? CUDA_EMULATION_MANTISSA_CONTROL_DYNAMIC
                                : CUDA_EMULATION_MANTISSA_CONTROL_FIXED))) {
      return f;
    }
    return failure(cublasSetFixedPointEmulationMaxMantissaBitCount(handle_, width));
  }

  // C := A B, n x n column major on the device; the failure's text.
  std::optional<std::string> gemm(int n, const double* a, const double* b, double* c) {
    const double one = 1, zero = 0;
    return failure(cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, CUDA_R_64F, n,
                                b, CUDA_R_64F, n, &zero, c, CUDA_R_64F, n,
                                CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT, CUBLAS_GEMM_DEFAULT));
  }

  // The mantissa width the last gemm used (negative: cuBLAS ran native FP64).
  int used_bits() const {
    int bits = 0;
    backend_.copy_out(used_bits_word_, &bits, sizeof(int));
    return bits;
  }

 private:
  static std::size_t workspace_bytes(std::int64_t n) {
    const auto padded = static_cast<std::size_t>((n + 1023) / 1024 * 1024);
    return padded * padded * 2 * 10 * 5 / 4 + static_cast<std::size_t>(n * n) * 8;
  }

  Backend& backend_;
  Buffer workspace_, used_bits_word_;
  cublasHandle_t handle_ = nullptr;
  std::optional<std::string> setup_;
};

}  // namespace tcemu::experiments
