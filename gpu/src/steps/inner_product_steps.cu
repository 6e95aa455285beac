#include "steps/inner_product_steps.hpp"

#include <algorithm>

#include <tcemu/backend/blas_epilogue.hpp>
#include <tcemu/backend/dot2.hpp>
#include <tcemu/backend/exact_dot.hpp>

#include "cuda_check.hpp"
#include "device_matrix.hpp"

namespace tcemu::gpu::detail {
namespace {

template <RealType T, InnerProduct M>
using Accumulator = std::conditional_t<M == InnerProduct::dot2, Dot2<T>, ExactDot<T>>;

template <RealType T>
__device__ void finish(const DeviceReal& c, std::int64_t i, std::int64_t j, T alpha, T s, T beta) {
  c.at<T>(i, j) = blas_epilogue(alpha, s, beta, beta != 0 ? c.at<T>(i, j) : T(0));
}

constexpr int kTile = 16;

// C tile (blockIdx.x, blockIdx.y) of 16 x 16 elements, thread (x, y) owning element
// (16 blockIdx.x + x, 16 blockIdx.y + y). Each step stages A(i0.., p0..p0+15) and
// B(p0..p0+15, j0..) in shared memory (consecutive threads read consecutive rows of a
// column-major A and B) and every thread adds its 16 terms in k order.
template <RealType T, InnerProduct M>
__global__ void tiled_kernel(const DeviceReal a, const DeviceReal b, const DeviceReal c,
                             std::int64_t m, std::int64_t n, std::int64_t k, T alpha, T beta) {
  __shared__ T as[kTile][kTile + 1];  // as[row][p], padded against bank conflicts
  __shared__ T bs[kTile][kTile + 1];  // bs[p][column]
  const int x = threadIdx.x, y = threadIdx.y;
  const std::int64_t i = std::int64_t{blockIdx.x} * kTile + x;
  const std::int64_t j = std::int64_t{blockIdx.y} * kTile + y;
  const std::int64_t a_row = std::int64_t{blockIdx.x} * kTile + x;  // loads: thread x, column y
  const std::int64_t b_col = std::int64_t{blockIdx.y} * kTile + y;
  Accumulator<T, M> acc;
  for (std::int64_t p0 = 0; p0 < k; p0 += kTile) {
    as[x][y] = a_row < m && p0 + y < k ? a.at<T>(a_row, p0 + y) : T(0);
    bs[x][y] = p0 + x < k && b_col < n ? b.at<T>(p0 + x, b_col) : T(0);
    __syncthreads();
    const int terms = static_cast<int>(k - p0 < kTile ? k - p0 : kTile);
    for (int q = 0; q < terms; ++q) acc.add(as[x][q], bs[q][y]);
    __syncthreads();
  }
  if (i < m && j < n) finish(c, i, j, alpha, acc.result(), beta);
}

// y = A x: thread i sums row i in k order.
template <RealType T, InnerProduct M>
__global__ void row_kernel(const DeviceReal a, const DeviceReal b, const DeviceReal c,
                           std::int64_t m, std::int64_t k, T alpha, T beta) {
  const std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= m) return;
  Accumulator<T, M> acc;
  for (std::int64_t p = 0; p < k; ++p) acc.add(a.at<T>(i, p), b.at<T>(p, 0));
  finish(c, i, 0, alpha, acc.result(), beta);
}

// ---- Dot2 DOT: kDot2Lanes lanes, one per thread, then dot2.hpp's tree ---------------------------
constexpr int kLaneThreads = 256;
constexpr int kLaneBlocks = static_cast<int>(kDot2Lanes / kLaneThreads);

// The tree of dot2_merge_lanes over the `count` (a power of two) states in shared memory.
// Shared-memory room for `count` Dot2 states (raw bytes: a __shared__ variable cannot run the
// member initialisers of Dot2).
#define TCEMU_SHARED_DOT2(T, name, count)                                            \
  __shared__ alignas(Dot2<T>) unsigned char name##_bytes[sizeof(Dot2<T>) * (count)]; \
  Dot2<T>* name = reinterpret_cast<Dot2<T>*>(name##_bytes)

template <RealType T>
__device__ void merge_in_block(Dot2<T>* lanes, int count) {
  for (int s = 1; s < count; s *= 2) {
    __syncthreads();
    const int l = static_cast<int>(threadIdx.x);
    if (l % (2 * s) == 0 && l + s < count) lanes[l].merge(lanes[l + s]);
  }
  __syncthreads();
}

// Block b holds lanes [256 b, 256 b + 256): strides 1..128 of the tree stay inside it, and the
// block's result is its lane 256 b.
template <RealType T>
__global__ void dot2_lanes_kernel(const DeviceReal x, const DeviceReal y, std::int64_t k,
                                  Dot2<T>* block_results) {
  TCEMU_SHARED_DOT2(T, lanes, kLaneThreads);
  const std::int64_t lane = std::int64_t{blockIdx.x} * kLaneThreads + threadIdx.x;
  Dot2<T> d;
  for (std::int64_t p = lane; p < k; p += kDot2Lanes) d.add(x.at<T>(0, p), y.at<T>(p, 0));
  lanes[threadIdx.x] = d;
  merge_in_block(lanes, kLaneThreads);
  if (threadIdx.x == 0) block_results[blockIdx.x] = lanes[0];
}

// The tree's strides 256..kDot2Lanes/2: over the blocks' results with strides 1..kLaneBlocks/2.
template <RealType T>
__global__ void dot2_blocks_kernel(const Dot2<T>* block_results, const DeviceReal c, T alpha,
                                   T beta) {
  TCEMU_SHARED_DOT2(T, lanes, kLaneBlocks);
  lanes[threadIdx.x] = block_results[threadIdx.x];
  merge_in_block(lanes, kLaneBlocks);
  if (threadIdx.x == 0) finish(c, 0, 0, alpha, lanes[0].result(), beta);
}

// ---- Exact DOT: per-thread ExactDot, accumulators merged limb by limb -------------------------
constexpr int kExactThreads = 256;
constexpr int kStaged = 32;  // accumulators staged in shared memory at a time
constexpr int kLimbs = LongAccumulator::kLimbs;

// One merged accumulator and the OR of the non-finite products, per block.
struct BlockSum {
  LongAccumulator sum;
  NonfiniteProducts special;
};

// Sums the accumulators of the block's threads: threads t < kLimbs add limb t of every
// accumulator into a 128-bit column sum (kStaged accumulators at a time through shared memory),
// then thread 0 carries the columns into one accumulator.
__device__ LongAccumulator merge_accumulators(const LongAccumulator& mine) {
  __shared__ std::uint64_t staged[kStaged][kLimbs];
  __shared__ std::uint64_t low[kLimbs], high[kLimbs];
  std::uint64_t lo = 0, hi = 0;
  for (int first = 0; first < static_cast<int>(blockDim.x); first += kStaged) {
    const int t = static_cast<int>(threadIdx.x) - first;
    if (t >= 0 && t < kStaged) {
      for (int l = 0; l < kLimbs; ++l) staged[t][l] = mine.limb(l);
    }
    __syncthreads();
    if (threadIdx.x < kLimbs) {
      const int count = min(kStaged, static_cast<int>(blockDim.x) - first);
      for (int s = 0; s < count; ++s) {
        const std::uint64_t v = staged[s][threadIdx.x];
        lo += v;
        hi += static_cast<std::uint64_t>(lo < v);
      }
    }
    __syncthreads();
  }
  if (threadIdx.x < kLimbs) {
    low[threadIdx.x] = lo;
    high[threadIdx.x] = hi;
  }
  __syncthreads();
  return LongAccumulator::from_limb_sums(low, high);  // every thread; thread 0 uses it
}

__device__ NonfiniteProducts merge_special(const NonfiniteProducts& mine) {
  NonfiniteProducts all;
  all.nan = __syncthreads_or(mine.nan) != 0;
  all.plus_infinity = __syncthreads_or(mine.plus_infinity) != 0;
  all.minus_infinity = __syncthreads_or(mine.minus_infinity) != 0;
  return all;
}

template <RealType T>
__global__ void exact_dot_kernel(const DeviceReal x, const DeviceReal y, std::int64_t k,
                                 BlockSum* block_sums) {
  ExactDot<T> e;
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t p = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; p < k; p += stride) {
    e.add(x.at<T>(0, p), y.at<T>(p, 0));
  }
  const LongAccumulator sum = merge_accumulators(e.flushed());
  const NonfiniteProducts special = merge_special(e.special());
  if (threadIdx.x == 0) block_sums[blockIdx.x] = {sum, special};
}

template <RealType T>
__global__ void exact_blocks_kernel(const BlockSum* block_sums, int blocks, const DeviceReal c,
                                    T alpha, T beta) {
  LongAccumulator mine;
  NonfiniteProducts special;
  for (int b = static_cast<int>(threadIdx.x); b < blocks; b += static_cast<int>(blockDim.x)) {
    mine.add(block_sums[b].sum);
    special.add(block_sums[b].special);
  }
  const LongAccumulator sum = merge_accumulators(mine);
  const NonfiniteProducts all = merge_special(special);
  if (threadIdx.x == 0) finish(c, 0, 0, alpha, ExactDot<T>::round(sum, all), beta);
}

int exact_dot_blocks(int multiprocessors) {
  return std::max(1, multiprocessors) * 4;
}

template <RealType T>
void run(InnerProduct method, const RealMatrix& am, const RealMatrix& bm, T alpha, T beta,
         const RealMatrix& cm, void* scratch, int multiprocessors) {
  const DeviceReal a = device_real(am), b = device_real(bm), c = device_real(cm);
  const std::int64_t m = am.rows, k = am.cols, n = bm.cols;
  const bool dot2 = method == InnerProduct::dot2;
  if (m == 1 && n == 1) {
    if (dot2) {
      auto* results = static_cast<Dot2<T>*>(scratch);
      dot2_lanes_kernel<T><<<kLaneBlocks, kLaneThreads>>>(a, b, k, results);
      dot2_blocks_kernel<T><<<1, kLaneBlocks>>>(results, c, alpha, beta);
    } else {
      auto* sums = static_cast<BlockSum*>(scratch);
      const int blocks = exact_dot_blocks(multiprocessors);
      exact_dot_kernel<T><<<blocks, kExactThreads>>>(a, b, k, sums);
      exact_blocks_kernel<T><<<1, kExactThreads>>>(sums, blocks, c, alpha, beta);
    }
  } else if (n == 1) {
    const unsigned blocks = static_cast<unsigned>((m + 127) / 128);
    if (dot2) {
      row_kernel<T, InnerProduct::dot2><<<blocks, 128>>>(a, b, c, m, k, alpha, beta);
    } else {
      row_kernel<T, InnerProduct::exact><<<blocks, 128>>>(a, b, c, m, k, alpha, beta);
    }
  } else {
    const dim3 grid(static_cast<unsigned>((m + kTile - 1) / kTile),
                    static_cast<unsigned>((n + kTile - 1) / kTile));
    const dim3 block(kTile, kTile);
    if (dot2) {
      tiled_kernel<T, InnerProduct::dot2><<<grid, block>>>(a, b, c, m, n, k, alpha, beta);
    } else {
      tiled_kernel<T, InnerProduct::exact><<<grid, block>>>(a, b, c, m, n, k, alpha, beta);
    }
  }
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

std::size_t inner_products_scratch_bytes(InnerProduct method, const RealMatrix& c,
                                         int multiprocessors) {
  if (c.rows != 1 || c.cols != 1) return 0;
  if (method == InnerProduct::dot2) return kLaneBlocks * sizeof(Dot2<double>);
  return static_cast<std::size_t>(exact_dot_blocks(multiprocessors)) * sizeof(BlockSum);
}

void inner_products(InnerProduct method, const RealMatrix& a, const RealMatrix& b, double alpha,
                    double beta, const RealMatrix& c, void* scratch, int multiprocessors) {
  if (a.format == Real::fp64) {
    run<double>(method, a, b, alpha, beta, c, scratch, multiprocessors);
  } else {
    run<float>(method, a, b, static_cast<float>(alpha), static_cast<float>(beta), c, scratch,
               multiprocessors);
  }
}

}  // namespace tcemu::gpu::detail
