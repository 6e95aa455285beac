// Every CUDA and cuBLAS status is checked; a failure becomes a std::runtime_error that names the
// call, the file and line, and the driver's message (out of memory, no device, ...).
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace tcemu::gpu::detail {

inline void cuda_check(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return;
  throw std::runtime_error(std::string(call) + " failed at " + file + ":" + std::to_string(line) +
                           ": " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) +
                           ")");
}

}  // namespace tcemu::gpu::detail

#define TCEMU_CUDA_CHECK(call) ::tcemu::gpu::detail::cuda_check((call), #call, __FILE__, __LINE__)
