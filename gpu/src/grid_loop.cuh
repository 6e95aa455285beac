// The grid-stride loop of the elementwise kernels and its grid. Blocks run along the contiguous
// dimension of the order iterated (x), one block row per vector of the other dimension (y,
// grid-stride beyond the grid), so consecutive threads touch consecutive elements of a row-major
// (row_order) or column-major matrix and accesses coalesce; no division per element.
#pragma once

#include <algorithm>
#include <cstdint>

namespace tcemu::gpu::detail {

// A grid for for_each_element over a rows x cols matrix with blocks of `threads`: at most 64
// blocks along a vector (each thread strides over the rest), at most 65535 block rows.
inline dim3 elementwise_grid(std::int64_t rows, std::int64_t cols, bool row_order, int threads) {
  const std::int64_t inner = row_order ? cols : rows, outer = row_order ? rows : cols;
  return dim3(
      static_cast<unsigned>(std::clamp<std::int64_t>((inner + threads - 1) / threads, 1, 64)),
      static_cast<unsigned>(std::clamp<std::int64_t>(outer, 1, 65535)));
}

// Every element (i, j) of a rows x cols matrix once, for any grid (each dimension strides).
template <class Body>
__device__ void for_each_element(std::int64_t rows, std::int64_t cols, bool row_order,
                                 const Body& body) {
  const std::int64_t inner = row_order ? cols : rows, outer = row_order ? rows : cols;
  for (std::int64_t o = blockIdx.y; o < outer; o += gridDim.y) {
    for (std::int64_t t = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
         t < inner; t += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
      if (row_order) {
        body(o, t);
      } else {
        body(t, o);
      }
    }
  }
}

}  // namespace tcemu::gpu::detail
