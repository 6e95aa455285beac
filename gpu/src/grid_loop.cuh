// The grid-stride loop of the elementwise kernels: each element of a rows x cols matrix is
// visited once, by the thread t = blockIdx.x * blockDim.x + threadIdx.x + (a multiple of the
// grid's threads), in the order that makes consecutive threads touch consecutive elements of a
// row-major (row_order) or column-major matrix, so that accesses coalesce.
#pragma once

#include <algorithm>
#include <cstdint>

namespace tcemu::gpu::detail {

template <class Body>
__device__ void for_each_element(std::int64_t rows, std::int64_t cols, bool row_order,
                                 const Body& body) {
  const std::int64_t count = rows * cols;
  for (std::int64_t t = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; t < count;
       t += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    if (row_order) {
      body(t / cols, t % cols);
    } else {
      body(t % rows, t / rows);
    }
  }
}

// Blocks of `threads` for a grid-stride loop over `count` elements: one element per thread, at
// most 2^20 blocks (the loop covers the rest), at least one.
inline unsigned blocks_for(std::int64_t count, int threads) {
  return static_cast<unsigned>(std::max<std::int64_t>(
      1, std::min<std::int64_t>((count + threads - 1) / threads, std::int64_t{1} << 20)));
}

}  // namespace tcemu::gpu::detail
