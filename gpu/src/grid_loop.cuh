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

// The elements (i, j) of a rows x cols matrix that this thread takes, in order, for any grid
// (each dimension strides): along the iterated order's contiguous dimension by the grid's threads
// in x, then to the next vector of the other dimension by the grid's rows in y. A thread whose
// first index lies past the vector's end takes none.
struct ElementCursor {
  std::int64_t inner, outer, first, o, t;
  bool row_order;

  __device__ ElementCursor(std::int64_t rows, std::int64_t cols, bool row_order_)
      : inner(row_order_ ? cols : rows),
        outer(row_order_ ? rows : cols),
        first(blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x),
        o(blockIdx.y),
        t(first),
        row_order(row_order_) {}
  __device__ bool valid() const { return o < outer && t < inner; }
  __device__ void advance() {
    t += static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    if (t >= inner) {
      t = first;
      o += gridDim.y;
    }
  }
  __device__ std::int64_t i() const { return row_order ? o : t; }
  __device__ std::int64_t j() const { return row_order ? t : o; }
};

// Every element (i, j) of a rows x cols matrix once, for any grid: ElementCursor's order.
template <class Body>
__device__ void for_each_element(std::int64_t rows, std::int64_t cols, bool row_order,
                                 const Body& body) {
  for (ElementCursor at(rows, cols, row_order); at.valid(); at.advance()) body(at.i(), at.j());
}

}  // namespace tcemu::gpu::detail
