// Every element of a matrix visited in an output layout that differs from its input layout (A
// column major, its int8 residues or quanta row major): in the output's coordinates (o the outer
// index, p along the output's contiguous dimension; the input is contiguous along o), each tile
// of kTileOuter x kTileInner elements is read in the input's order into shared memory (a warp
// reads 32 consecutive o: 256 bytes of fp64), then each warp takes whole tile rows, kTilePack
// consecutive p per lane, so that a warp writes 32 kTilePack = 128 contiguous bytes of each int8
// output (the full lines that a 32 x 32 tile would split into quarters).
#pragma once

#include <cstdint>

namespace tcemu::gpu::detail {

constexpr int kTileOuter = 32;
constexpr int kTileInner = 128;
constexpr int kTilePack = 4;
constexpr int kTileLoads = 8;

// The shared tile, [o][p]; the odd row length keeps a warp's column of 32 doubles on distinct
// banks.
using TransposingTile = double[kTileOuter][kTileInner + 1];

// For each tile of the outer x inner output (blocks stride over the tiles; blockDim.x a multiple
// of 32): element(o, p) loads the input, then body(o, p, valid,
// value) runs once per lane and pack, value(w) the element (o, p + w) for w < valid <=
// kTilePack. Every thread of the block must call it (it synchronizes).
template <class Element, class Body>
__device__ void for_each_transposed_pack(std::int64_t outer, std::int64_t inner,
                                         TransposingTile& tile, const Element& element,
                                         const Body& body) {
  static_assert(kTileOuter == 32 && kTileInner == 32 * kTilePack);
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  const int warps = static_cast<int>(blockDim.x) / 32;
  const std::int64_t tiles_o = (outer + kTileOuter - 1) / kTileOuter,
                     tiles_p = (inner + kTileInner - 1) / kTileInner;
  for (std::int64_t t = blockIdx.x; t < tiles_o * tiles_p; t += gridDim.x) {
    const std::int64_t o0 = (t % tiles_o) * kTileOuter, p0 = (t / tiles_o) * kTileInner;
    if (o0 + lane < outer) {
      // kTileLoads loads in flight per thread before the tile is written (one at a time, A's
      // residues took 5.1 ms against B's 4.2 at n = 16384 on the H100, 4.3 after;
      // docs/results/int8-ozaki.md, seventh round).
      for (int q0 = warp; q0 < kTileInner; q0 += kTileLoads * warps) {
        double v[kTileLoads];
#pragma unroll
        for (int b = 0; b < kTileLoads; ++b) {
          const int q = q0 + b * warps;
          v[b] = q < kTileInner && p0 + q < inner ? element(o0 + lane, p0 + q) : 0.0;
        }
#pragma unroll
        for (int b = 0; b < kTileLoads; ++b) {
          const int q = q0 + b * warps;
          if (q < kTileInner && p0 + q < inner) tile[lane][q] = v[b];
        }
      }
    }
    __syncthreads();
    for (int r = warp; r < kTileOuter && o0 + r < outer; r += warps) {
      const std::int64_t p = p0 + lane * kTilePack;
      if (p < inner) {
        const int valid = inner - p < kTilePack ? static_cast<int>(inner - p) : kTilePack;
        body(o0 + r, p, valid, [&](int w) { return tile[r][lane * kTilePack + w]; });
      }
    }
    __syncthreads();  // the tile is read before the next one is written
  }
}

// Tiles of an outer x inner output: the grid for_each_transposed_pack strides over (at most 8192
// blocks).
inline unsigned transposed_tiles_grid(std::int64_t outer, std::int64_t inner) {
  const std::int64_t tiles =
      ((outer + kTileOuter - 1) / kTileOuter) * ((inner + kTileInner - 1) / kTileInner);
  return static_cast<unsigned>(tiles < 8192 ? (tiles < 1 ? 1 : tiles) : 8192);
}

}  // namespace tcemu::gpu::detail
