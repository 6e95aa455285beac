// The GPU kernels of dp's bound steps (crt_steps.hpp: crt_magnitude_bound, crt_bound_need) on the
// default stream, running the element functions of crt_elements.hpp, so the GPU backend gives
// the emulator's quanta, exponents and need.
#include "steps/crt_bound_steps.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include <tcemu/backend/crt_elements.hpp>

#include "cuda_check.hpp"
#include "device_matrix.hpp"
#include "grid_loop.cuh"
#include "steps/integer_gemm_steps.hpp"

namespace tcemu::gpu::detail {
namespace {

namespace el = crt_elements;

constexpr int kThreads = 256;
constexpr int kBias = 1 << 20;

// The scratch of crt_magnitude_bound, per vector v: VectorBits slots (top + 2^20 and 2^20 - low
// by atomicMax: positive for every element, 0 for none), the bound shift, the MagnitudeSums
// (added and maxed atomically: integer operations, so their order does not matter) and the
// quantum shift.
struct BoundScratch {
  int* slots;
  std::int32_t* bound_shift;
  unsigned long long* sum;
  unsigned long long* squares;
  unsigned long long* largest;
  std::int32_t* quantum_shift;
};

BoundScratch bound_scratch(void* scratch, std::int64_t vectors) {
  auto* base = static_cast<unsigned char*>(scratch);
  const auto n = static_cast<std::size_t>(vectors);
  BoundScratch s{};
  s.sum = reinterpret_cast<unsigned long long*>(base);
  s.squares = s.sum + n;
  s.largest = s.squares + n;
  s.slots = reinterpret_cast<int*>(s.largest + n);
  s.bound_shift = s.slots + 2 * n;
  s.quantum_shift = s.bound_shift + n;
  return s;
}

// A chunk [begin, end) of vector v: its VectorBits folded into the vector's slots.
__device__ void fold_bits(const DeviceReal& x, bool rows, std::int64_t v, std::int64_t begin,
                          std::int64_t end, std::int64_t step, int* slots) {
  el::VectorBits mine;
  for (std::int64_t p = begin; p < end; p += step) mine.add(rows ? x.get(v, p) : x.get(p, v));
  if (mine.empty()) return;
  atomicMax(&slots[2 * v], mine.top + kBias);
  atomicMax(&slots[2 * v + 1], kBias - mine.low);
}

// The same for the MagnitudeSums at the vector's bound shift.
__device__ void fold_sums(const DeviceReal& x, bool rows, std::int64_t v, std::int64_t begin,
                          std::int64_t end, std::int64_t step, const BoundScratch& s) {
  el::MagnitudeSums mine;
  const int shift = s.bound_shift[v];
  for (std::int64_t p = begin; p < end; p += step) {
    mine.add(rows ? x.get(v, p) : x.get(p, v), shift);
  }
  if (mine.squares == 0) return;
  atomicAdd(&s.sum[v], static_cast<unsigned long long>(mine.sum));
  atomicAdd(&s.squares[v], static_cast<unsigned long long>(mine.squares));
  atomicMax(&s.largest[v], static_cast<unsigned long long>(mine.largest));
}

// Contiguous vectors: one block per vector (grid-stride), its threads striding over the vector.
// Across x's layout: a thread per vector and chunk (neighbouring threads on neighbouring vectors).
__global__ void __launch_bounds__(kThreads)
    bits_kernel(const DeviceReal x, const bool rows, const bool across, const std::int64_t chunk,
                const BoundScratch s) {
  const std::int64_t vectors = rows ? x.rows : x.cols, length = rows ? x.cols : x.rows;
  if (across) {
    const std::int64_t v = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x;
    const std::int64_t begin = blockIdx.y * chunk;
    if (v < vectors) fold_bits(x, rows, v, begin, min(length, begin + chunk), 1, s.slots);
    return;
  }
  for (std::int64_t v = blockIdx.x; v < vectors; v += gridDim.x) {
    fold_bits(x, rows, v, threadIdx.x, length, kThreads, s.slots);
  }
}

__global__ void __launch_bounds__(kThreads)
    bound_shift_kernel(const std::int64_t vectors, const BoundScratch s) {
  for (std::int64_t v = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x; v < vectors;
       v += static_cast<std::int64_t>(gridDim.x) * kThreads) {
    el::VectorBits all;
    if (s.slots[2 * v] != 0) {
      all.top = s.slots[2 * v] - kBias;
      all.low = kBias - s.slots[2 * v + 1];
    }
    s.bound_shift[v] = all.shift(el::kNormBoundBits);
  }
}

__global__ void __launch_bounds__(kThreads)
    sums_kernel(const DeviceReal x, const bool rows, const bool across, const std::int64_t chunk,
                const BoundScratch s) {
  const std::int64_t vectors = rows ? x.rows : x.cols, length = rows ? x.cols : x.rows;
  if (across) {
    const std::int64_t v = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x;
    const std::int64_t begin = blockIdx.y * chunk;
    if (v < vectors) fold_sums(x, rows, v, begin, min(length, begin + chunk), 1, s);
    return;
  }
  for (std::int64_t v = blockIdx.x; v < vectors; v += gridDim.x) {
    fold_sums(x, rows, v, threadIdx.x, length, kThreads, s);
  }
}

__global__ void __launch_bounds__(kThreads)
    bound_vector_kernel(const std::int64_t vectors, const int log2_length, const int depth,
                        const BoundScratch s, std::int32_t* norm2, std::int32_t* norm1) {
  for (std::int64_t v = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x; v < vectors;
       v += static_cast<std::int64_t>(gridDim.x) * kThreads) {
    el::MagnitudeSums sums;
    sums.sum = s.sum[v];
    sums.squares = s.squares[v];
    sums.largest = s.largest[v];
    const el::BoundVector b = el::bound_vector(sums, s.bound_shift[v], log2_length, depth);
    s.quantum_shift[v] = b.quantum_shift;
    norm2[v] = b.norm2;
    norm1[v] = b.norm1;
  }
}

// In the quanta's order (their byte writes coalesce).
__global__ void __launch_bounds__(kThreads)
    quanta_kernel(const DeviceReal x, const bool rows, const std::int32_t* quantum_shift,
                  std::int8_t* out, const std::int64_t ld, const bool out_rows) {
  for_each_element(x.rows, x.cols, out_rows, [&](std::int64_t i, std::int64_t j) {
    out[out_rows ? i * ld + j : j * ld + i] =
        static_cast<std::int8_t>(el::magnitude_quanta(x.get(i, j), quantum_shift[rows ? i : j]));
  });
}

// The same when x's layout differs from the quanta's (A column major, its quanta row major):
// each 32 x 32 tile of x is read in x's order into shared memory, then its quanta are written in
// their order, so that both the reads and the writes are coalesced.
constexpr int kTile = 32;

__global__ void __launch_bounds__(kThreads)
    quanta_transposing_kernel(const DeviceReal x, const bool rows,
                              const std::int32_t* quantum_shift, std::int8_t* out,
                              const std::int64_t ld, const bool out_rows) {
  __shared__ double tile[kTile][kTile + 1];  // [local row][local column]
  const int lane = static_cast<int>(threadIdx.x) % kTile, step = kThreads / kTile;
  const std::int64_t tiles_i = (x.rows + kTile - 1) / kTile, tiles_j = (x.cols + kTile - 1) / kTile;
  for (std::int64_t t = blockIdx.x; t < tiles_i * tiles_j; t += gridDim.x) {
    const std::int64_t i0 = (t % tiles_i) * kTile, j0 = (t / tiles_i) * kTile;
    for (int r = static_cast<int>(threadIdx.x) / kTile; r < kTile; r += step) {
      const int ii = x.row_major ? r : lane, jj = x.row_major ? lane : r;
      if (i0 + ii < x.rows && j0 + jj < x.cols) tile[ii][jj] = x.get(i0 + ii, j0 + jj);
    }
    __syncthreads();
    for (int r = static_cast<int>(threadIdx.x) / kTile; r < kTile; r += step) {
      const int ii = out_rows ? r : lane, jj = out_rows ? lane : r;
      const std::int64_t i = i0 + ii, j = j0 + jj;
      if (i >= x.rows || j >= x.cols) continue;
      out[out_rows ? i * ld + j : j * ld + i] =
          static_cast<std::int8_t>(el::magnitude_quanta(tile[ii][jj], quantum_shift[rows ? i : j]));
    }
    __syncthreads();  // the tile is read before the next one is written
  }
}

// What need_kernel reads of one level: its int32 sums and its exponents.
struct LevelView {
  const std::int32_t* sums;
  const std::int32_t* norm2_i;
  const std::int32_t* norm1_i;
  const std::int32_t* norm2_j;
  const std::int32_t* norm1_j;
};

// The largest over the elements of the least bound_need over the levels into *need (atomicMax of
// each block's maximum).
__global__ void __launch_bounds__(kThreads)
    need_kernel(const LevelView first, const LevelView second, const int levels,
                const std::int64_t sums_ld, const std::int64_t rows, const std::int64_t cols,
                const int log2_k, int* need) {
  __shared__ int most[kThreads];
  int mine = el::kNoNeed;
  for_each_element(rows, cols, false, [&](std::int64_t i, std::int64_t j) {
    int least = el::kBoundUncertified;
    for (int l = 0; l < levels; ++l) {
      const LevelView& v = l == 0 ? first : second;
      least = min(least, el::bound_need(v.sums[j * sums_ld + i], v.norm2_i[i], v.norm1_i[i],
                                        v.norm2_j[j], v.norm1_j[j], log2_k));
    }
    mine = max(mine, least);
  });
  most[threadIdx.x] = mine;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) {
      most[threadIdx.x] = max(most[threadIdx.x], most[threadIdx.x + half]);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicMax(need, most[0]);
}

}  // namespace

std::size_t crt_magnitude_bound_scratch_bytes(const RealMatrix& x, SplitAxis axis) {
  return static_cast<std::size_t>(axis == SplitAxis::rows ? x.rows : x.cols) * 40 + 16;
}

void crt_magnitude_bound(const RealMatrix& x, SplitAxis axis, int depth, const IntegerMatrix& out,
                         const BoundExponents& exponents, void* scratch) {
  const bool rows = axis == SplitAxis::rows;
  const std::int64_t vectors = rows ? x.rows : x.cols, length = rows ? x.cols : x.rows;
  if (vectors == 0) return;
  TCEMU_CUDA_CHECK(cudaMemsetAsync(scratch, 0, crt_magnitude_bound_scratch_bytes(x, axis)));
  const BoundScratch s = bound_scratch(scratch, vectors);
  const DeviceReal in = device_real(x);
  const bool across = rows != in.row_major;
  // About 64 chunks per vector across the layout: enough threads to cover the memory latency.
  const std::int64_t chunk = std::max<std::int64_t>(64, (length + 63) / 64);
  const dim3 grid =
      across ? dim3(static_cast<unsigned>((vectors + kThreads - 1) / kThreads),
                    static_cast<unsigned>(std::max<std::int64_t>(1, (length + chunk - 1) / chunk)))
             : dim3(static_cast<unsigned>(std::min<std::int64_t>(vectors, 1 << 16)));
  const auto finish =
      static_cast<unsigned>(std::min<std::int64_t>((vectors + kThreads - 1) / kThreads, 4096));
  const int log2_length =
      length == 0 ? 0 : tcemu::detail::bit_width(static_cast<std::uint64_t>(length)) - 1;
  bits_kernel<<<grid, kThreads>>>(in, rows, across, chunk, s);
  bound_shift_kernel<<<finish, kThreads>>>(vectors, s);
  sums_kernel<<<grid, kThreads>>>(in, rows, across, chunk, s);
  bound_vector_kernel<<<finish, kThreads>>>(vectors, log2_length, depth, s,
                                            device_exponents(exponents.norm2),
                                            device_exponents(exponents.norm1));
  if (length > 0) {
    const bool out_rows = out.layout == Layout::row_major;
    auto* quanta = static_cast<std::int8_t*>(out.buffer->address()) + out.offset_bytes;
    if (in.row_major == out_rows) {
      quanta_kernel<<<elementwise_grid(x.rows, x.cols, out_rows, kThreads), kThreads>>>(
          in, rows, s.quantum_shift, quanta, out.ld, out_rows);
    } else {
      const std::int64_t tiles = ((x.rows + kTile - 1) / kTile) * ((x.cols + kTile - 1) / kTile);
      quanta_transposing_kernel<<<static_cast<unsigned>(std::min<std::int64_t>(tiles, 8192)),
                                  kThreads>>>(in, rows, s.quantum_shift, quanta, out.ld, out_rows);
    }
  }
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

namespace {

std::size_t aligned16(std::size_t bytes) {
  return (bytes + 15) / 16 * 16;
}

std::size_t sums_bytes(std::int64_t m, std::int64_t n) {
  return aligned16(static_cast<std::size_t>(integer_sums_ld(m) * n) * 4);
}

LevelView level_view(const BoundLevel& level, const std::int32_t* sums) {
  return {sums, device_exponents(level.rows.norm2), device_exponents(level.rows.norm1),
          device_exponents(level.columns.norm2), device_exponents(level.columns.norm1)};
}

}  // namespace

std::size_t crt_bound_need_scratch_bytes(std::int64_t m, std::int64_t n, std::int64_t k,
                                         std::size_t levels) {
  return aligned16(integer_gemm_scratch_bytes(m, n, k)) + (levels - 1) * sums_bytes(m, n) + 16;
}

int crt_bound_need(cublasHandle_t handle, std::span<const BoundLevel> levels, int log2_k,
                   void* scratch) {
  const BoundLevel& first = levels.front();
  const std::int64_t m = first.a.rows, n = first.b.cols;
  auto* base = static_cast<unsigned char*>(scratch);
  auto* kept = reinterpret_cast<std::int32_t*>(
      base + aligned16(integer_gemm_scratch_bytes(m, n, first.a.cols)));
  int* need = reinterpret_cast<int*>(reinterpret_cast<unsigned char*>(kept) +
                                     (levels.size() - 1) * sums_bytes(m, n));
  LevelView views[2] = {};
  for (std::size_t l = 0; l < levels.size(); ++l) {
    const std::int32_t* sums = integer_gemm_sums(handle, levels[l].a, levels[l].b, scratch);
    if (l + 1 < levels.size()) {  // the next level's GEMM writes over this one's sums
      TCEMU_CUDA_CHECK(cudaMemcpyAsync(kept, sums,
                                       static_cast<std::size_t>(integer_sums_ld(m) * n) * 4,
                                       cudaMemcpyDeviceToDevice));
      sums = kept;
    }
    views[l] = level_view(levels[l], sums);
  }
  const int none = el::kNoNeed;
  TCEMU_CUDA_CHECK(cudaMemcpy(need, &none, sizeof(int), cudaMemcpyHostToDevice));
  need_kernel<<<elementwise_grid(m, n, false, kThreads), kThreads>>>(
      views[0], views[1], static_cast<int>(levels.size()), integer_sums_ld(m), m, n, log2_k, need);
  TCEMU_CUDA_CHECK(cudaGetLastError());
  int result = none;
  TCEMU_CUDA_CHECK(cudaMemcpy(&result, need, sizeof(int), cudaMemcpyDeviceToHost));
  return result;
}

}  // namespace tcemu::gpu::detail
