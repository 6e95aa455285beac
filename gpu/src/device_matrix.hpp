// A matrix of bit patterns in device memory, as the kernels see a BufferMatrix or RealMatrix: the
// element container size is all they need of the format.
#pragma once

#include <cstdint>

#include <tcemu/emulator/backend.hpp>

namespace tcemu::gpu::detail {

struct DeviceMatrix {
  unsigned char* data;
  std::int64_t rows;
  std::int64_t cols;
  std::int64_t ld;
  bool row_major;
  int element_bytes;  // 1, 2 or 4

#if defined(__CUDACC__)
  __device__ std::int64_t index(std::int64_t i, std::int64_t j) const {
    return row_major ? i * ld + j : j * ld + i;
  }
  __device__ std::uint32_t get(std::int64_t i, std::int64_t j) const {
    const std::int64_t at = index(i, j);
    if (element_bytes == 1) return data[at];
    if (element_bytes == 2) return reinterpret_cast<const std::uint16_t*>(data)[at];
    return reinterpret_cast<const std::uint32_t*>(data)[at];
  }
  __device__ void set(std::int64_t i, std::int64_t j, std::uint32_t bits) const {
    const std::int64_t at = index(i, j);
    if (element_bytes == 1) {
      data[at] = static_cast<unsigned char>(bits);
    } else if (element_bytes == 2) {
      reinterpret_cast<std::uint16_t*>(data)[at] = static_cast<std::uint16_t>(bits);
    } else {
      reinterpret_cast<std::uint32_t*>(data)[at] = bits;
    }
  }
#endif
};

inline DeviceMatrix device_matrix(const BufferMatrix& m) {
  return {static_cast<unsigned char*>(m.buffer->address()) + m.offset_bytes,
          m.rows,
          m.cols,
          m.ld,
          m.layout == Layout::row_major,
          static_cast<int>(container_bytes(m.format))};
}

inline DeviceMatrix device_matrix(const RealMatrix& m) {
  return {static_cast<unsigned char*>(m.buffer->address()) + m.offset_bytes,
          m.rows,
          m.cols,
          m.ld,
          m.layout == Layout::row_major,
          static_cast<int>(real_bytes(m.type))};
}

}  // namespace tcemu::gpu::detail
