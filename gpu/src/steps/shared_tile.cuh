// A 32 x 32 tile of a real matrix staged in shared memory, so that a kernel whose output runs
// across x's layout (A column major, its int8 copies row major) reads x and writes its output
// both along their contiguous dimensions (coalesced). The CRT residues and dp's bound quanta
// (crt_steps.cu, crt_bound_steps.cu) use it.
#pragma once

#include <cstdint>

#include "device_matrix.hpp"

namespace tcemu::gpu::detail {

inline constexpr int kSharedTile = 32;

// tile[ii][jj] = x(i0 + ii, j0 + jj) for the elements inside x (the others are left as they
// are), the block's `threads` threads reading kSharedTile consecutive elements of x's contiguous
// dimension at a time. threads is a multiple of kSharedTile; the caller synchronises after it.
__device__ inline void load_shared_tile(const DeviceReal& x, std::int64_t i0, std::int64_t j0,
                                        int threads, double (&tile)[kSharedTile][kSharedTile + 1]) {
  const int lane = static_cast<int>(threadIdx.x) % kSharedTile;
  for (int r = static_cast<int>(threadIdx.x) / kSharedTile; r < kSharedTile;
       r += threads / kSharedTile) {
    const int ii = x.row_major ? r : lane, jj = x.row_major ? lane : r;
    if (i0 + ii < x.rows && j0 + jj < x.cols) tile[ii][jj] = x.get(i0 + ii, j0 + jj);
  }
}

}  // namespace tcemu::gpu::detail
