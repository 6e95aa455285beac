// Device memory holding one word per element (32-bit, or 64-bit for the fp64 runner), freed on
// scope exit; shared by the one-case runners and the GEMM kernel.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cuda_check.hpp"

namespace tcemu::gpu::detail {

template <typename Word>
class DeviceArray {
 public:
  // Uninitialised room for `count` words.
  explicit DeviceArray(std::size_t count) : count_(count) {
    TCEMU_CUDA_CHECK(cudaMalloc(&pointer_, std::max<std::size_t>(count, 1) * sizeof(Word)));
  }
  // A copy of `host` on the device.
  explicit DeviceArray(const std::vector<Word>& host) : DeviceArray(host.size()) {
    if (!host.empty()) {
      TCEMU_CUDA_CHECK(
          cudaMemcpy(pointer_, host.data(), host.size() * sizeof(Word), cudaMemcpyHostToDevice));
    }
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { cudaFree(pointer_); }

  Word* get() const { return pointer_; }
  std::vector<Word> to_host() const {
    std::vector<Word> out(count_);
    if (count_ > 0) {
      TCEMU_CUDA_CHECK(
          cudaMemcpy(out.data(), pointer_, count_ * sizeof(Word), cudaMemcpyDeviceToHost));
    }
    return out;
  }

 private:
  Word* pointer_ = nullptr;
  std::size_t count_;
};

using DeviceWords = DeviceArray<std::uint32_t>;

}  // namespace tcemu::gpu::detail
