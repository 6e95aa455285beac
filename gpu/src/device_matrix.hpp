// Matrices in device memory as the kernels see them: DeviceMatrix for a BufferMatrix (bit
// patterns; the element container size is all they need of the format) and DeviceReal for a
// RealMatrix (fp32 or fp64 elements), with the ExponentVector's data beside them.
#pragma once

#include <cstdint>

#include <tcemu/backend/backend.hpp>
#include <tcemu/emulator/fp64_bits.hpp>

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

struct DeviceReal {
  unsigned char* data;
  std::int64_t rows;
  std::int64_t cols;
  std::int64_t ld;
  bool row_major;
  bool fp64;  // fp32 otherwise

#if defined(__CUDACC__)
  __device__ std::int64_t index(std::int64_t i, std::int64_t j) const {
    return row_major ? i * ld + j : j * ld + i;
  }
  // The stored bit pattern (fp32: in the low 32 bits).
  __device__ std::uint64_t raw(std::int64_t i, std::int64_t j) const {
    return fp64 ? reinterpret_cast<const std::uint64_t*>(data)[index(i, j)]
                : reinterpret_cast<const std::uint32_t*>(data)[index(i, j)];
  }
  // The element as a double (fp32 widens exactly).
  __device__ double get(std::int64_t i, std::int64_t j) const {
    return fp64 ? get_as<true>(i, j) : get_as<false>(i, j);
  }
  // get() for a format known at compile time (no branch on fp64).
  template <bool Fp64>
  __device__ double get_as(std::int64_t i, std::int64_t j) const {
    if constexpr (Fp64) {
      return fp64::value(reinterpret_cast<const std::uint64_t*>(data)[index(i, j)]);
    } else {
      return fp64::widen(reinterpret_cast<const std::uint32_t*>(data)[index(i, j)]);
    }
  }
  // Four consecutive elements of the storage from `first` (a multiple of four, the data 16-byte
  // aligned), as get_as reads them: two 16-byte loads of fp64, one of fp32, so that a warp has
  // 1 KB of fp64 (512 bytes of fp32) in flight at once.
  template <bool Fp64>
  __device__ void load_four(std::int64_t first, double (&v)[4]) const {
    if constexpr (Fp64) {
      const auto* at = reinterpret_cast<const double2*>(data) + first / 2;
      const double2 low = at[0], high = at[1];
      v[0] = low.x;
      v[1] = low.y;
      v[2] = high.x;
      v[3] = high.y;
    } else {
      const float4 f = reinterpret_cast<const float4*>(data)[first / 4];
      v[0] = fp64::widen(__float_as_uint(f.x));
      v[1] = fp64::widen(__float_as_uint(f.y));
      v[2] = fp64::widen(__float_as_uint(f.z));
      v[3] = fp64::widen(__float_as_uint(f.w));
    }
  }
  // Whether load_four may read four elements at any multiple of four along the contiguous
  // dimension: the data 16-byte aligned and every row or column too (the leading dimension even
  // for fp64, a multiple of 4 for fp32).
  bool four_aligned() const {
    return reinterpret_cast<std::uintptr_t>(data) % 16 == 0 && ld % (fp64 ? 2 : 4) == 0;
  }
  __device__ void set_bits(std::int64_t i, std::int64_t j, std::uint64_t bits) const {
    if (fp64) {
      reinterpret_cast<std::uint64_t*>(data)[index(i, j)] = bits;
    } else {
      reinterpret_cast<std::uint32_t*>(data)[index(i, j)] = static_cast<std::uint32_t>(bits);
    }
  }
  // The element in its own type (T = double for fp64, float for fp32).
  template <class T>
  __device__ T& at(std::int64_t i, std::int64_t j) const {
    return reinterpret_cast<T*>(data)[index(i, j)];
  }
  __device__ double* fp64_at(std::int64_t i, std::int64_t j) const {
    return &at<double>(i, j);
  }
  // The matrix `l` strides further on (a layer of a RealMatrixStack).
  __device__ DeviceReal layer(std::int64_t l, std::size_t stride_bytes) const {
    DeviceReal m = *this;
    m.data += static_cast<std::size_t>(l) * stride_bytes;
    return m;
  }
#endif
};

inline DeviceReal device_real(const RealMatrix& m) {
  return {static_cast<unsigned char*>(m.buffer->address()) + m.offset_bytes,
          m.rows,
          m.cols,
          m.ld,
          m.layout == Layout::row_major,
          m.format == Real::fp64};
}

inline std::int32_t* device_exponents(const ExponentVector& v) {
  return reinterpret_cast<std::int32_t*>(static_cast<unsigned char*>(v.buffer->address()) +
                                         v.offset_bytes);
}

}  // namespace tcemu::gpu::detail
