// Device memory holding one 32-bit word per element, freed on scope exit; shared by the
// one-case runner and the GEMM kernel.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cuda_check.hpp"

namespace tcemu::gpu::detail {

class DeviceWords {
 public:
  // Uninitialised room for `count` words.
  explicit DeviceWords(std::size_t count) : count_(count) {
    TCEMU_CUDA_CHECK(
        cudaMalloc(&pointer_, std::max<std::size_t>(count, 1) * sizeof(std::uint32_t)));
  }
  // A copy of `host` on the device.
  explicit DeviceWords(const std::vector<std::uint32_t>& host) : DeviceWords(host.size()) {
    if (!host.empty()) {
      TCEMU_CUDA_CHECK(cudaMemcpy(pointer_, host.data(), host.size() * sizeof(std::uint32_t),
                                  cudaMemcpyHostToDevice));
    }
  }
  DeviceWords(const DeviceWords&) = delete;
  DeviceWords& operator=(const DeviceWords&) = delete;
  ~DeviceWords() { cudaFree(pointer_); }

  std::uint32_t* get() const { return pointer_; }
  std::vector<std::uint32_t> to_host() const {
    std::vector<std::uint32_t> out(count_);
    if (count_ > 0) {
      TCEMU_CUDA_CHECK(
          cudaMemcpy(out.data(), pointer_, count_ * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
    }
    return out;
  }

 private:
  std::uint32_t* pointer_ = nullptr;
  std::size_t count_;
};

}  // namespace tcemu::gpu::detail
