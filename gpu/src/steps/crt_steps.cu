#include "steps/crt_steps.hpp"

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

// One block per vector (grid-stride): the block's VectorBits by a shared-memory reduction, the
// shift written by thread 0 and the exact bits folded into *bits by atomicMax.
__global__ void __launch_bounds__(kThreads)
    scale_kernel(const DeviceReal x, const bool rows, const int max_bits, std::int32_t* shifts,
                 int* bits) {
  __shared__ int top[kThreads], low[kThreads];
  const std::int64_t vectors = rows ? x.rows : x.cols, length = rows ? x.cols : x.rows;
  for (std::int64_t v = blockIdx.x; v < vectors; v += gridDim.x) {
    el::VectorBits mine;
    for (std::int64_t p = threadIdx.x; p < length; p += blockDim.x) {
      mine.add(rows ? x.get(v, p) : x.get(p, v));
    }
    top[threadIdx.x] = mine.top;
    low[threadIdx.x] = mine.low;
    __syncthreads();
    for (int half = kThreads / 2; half > 0; half /= 2) {
      if (static_cast<int>(threadIdx.x) < half) {
        top[threadIdx.x] = max(top[threadIdx.x], top[threadIdx.x + half]);
        low[threadIdx.x] = min(low[threadIdx.x], low[threadIdx.x + half]);
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      el::VectorBits all;
      all.top = top[0];
      all.low = low[0];
      shifts[v] = all.shift(max_bits);
      atomicMax(bits, all.exact_bits());
    }
    __syncthreads();  // the slots are written again for the next vector
  }
}

// The same when the vectors run across x's layout (rows of a column-major x, columns of a
// row-major one): a thread per vector and chunk of its elements, so that a warp reads 32
// neighbouring vectors at once (coalesced), each chunk's VectorBits folded into the vector's
// slots by atomicMax on top + 2^20 and on 2^20 - low (both positive for every element, 0 for
// none: the slots start zeroed); scale_finish_kernel turns the slots into shifts.
constexpr int kBias = 1 << 20;

__global__ void __launch_bounds__(kThreads)
    scale_across_kernel(const DeviceReal x, const bool rows, const std::int64_t chunk, int* slots) {
  const std::int64_t vectors = rows ? x.rows : x.cols, length = rows ? x.cols : x.rows;
  const std::int64_t v = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x;
  if (v >= vectors) return;
  const std::int64_t begin = blockIdx.y * chunk, end = min(length, begin + chunk);
  el::VectorBits mine;
  for (std::int64_t p = begin; p < end; ++p) mine.add(rows ? x.get(v, p) : x.get(p, v));
  if (mine.empty()) return;
  atomicMax(&slots[2 * v], mine.top + kBias);
  atomicMax(&slots[2 * v + 1], kBias - mine.low);
}

__global__ void __launch_bounds__(kThreads)
    scale_finish_kernel(const int* slots, const std::int64_t vectors, const int max_bits,
                        std::int32_t* shifts, int* bits) {
  for (std::int64_t v = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x; v < vectors;
       v += static_cast<std::int64_t>(gridDim.x) * kThreads) {
    el::VectorBits all;
    if (slots[2 * v] != 0) {
      all.top = slots[2 * v] - kBias;
      all.low = kBias - slots[2 * v + 1];
    }
    shifts[v] = all.shift(max_bits);
    atomicMax(bits, all.exact_bits());
  }
}

// The norm scaling's sums of squares into sums[v] (zeroed before), each thread's partial sum
// added atomically: integer additions, so the total does not depend on their order. Contiguous
// vectors: one block per vector (grid-stride); across x's layout: a thread per vector and chunk
// (neighbouring threads on neighbouring vectors, coalesced).
__global__ void __launch_bounds__(kThreads)
    norm_sums_kernel(const DeviceReal x, const bool rows, const std::int32_t* bound_shifts,
                     unsigned long long* sums) {
  const std::int64_t vectors = rows ? x.rows : x.cols, length = rows ? x.cols : x.rows;
  for (std::int64_t v = blockIdx.x; v < vectors; v += gridDim.x) {
    const int shift = bound_shifts[v];
    unsigned long long mine = 0;
    for (std::int64_t p = threadIdx.x; p < length; p += blockDim.x) {
      const std::uint64_t b = el::bound_magnitude(rows ? x.get(v, p) : x.get(p, v), shift);
      mine += b * b;
    }
    if (mine != 0) atomicAdd(&sums[v], mine);
  }
}

__global__ void __launch_bounds__(kThreads)
    norm_sums_across_kernel(const DeviceReal x, const bool rows, const std::int64_t chunk,
                            const std::int32_t* bound_shifts, unsigned long long* sums) {
  const std::int64_t vectors = rows ? x.rows : x.cols, length = rows ? x.cols : x.rows;
  const std::int64_t v = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x;
  if (v >= vectors) return;
  const int shift = bound_shifts[v];
  const std::int64_t begin = blockIdx.y * chunk, end = min(length, begin + chunk);
  unsigned long long mine = 0;
  for (std::int64_t p = begin; p < end; ++p) {
    const std::uint64_t b = el::bound_magnitude(rows ? x.get(v, p) : x.get(p, v), shift);
    mine += b * b;
  }
  if (mine != 0) atomicAdd(&sums[v], mine);
}

__global__ void __launch_bounds__(kThreads)
    norm_finish_kernel(const unsigned long long* sums, const std::int64_t vectors, const int gamma,
                       std::int32_t* shifts) {
  for (std::int64_t v = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x; v < vectors;
       v += static_cast<std::int64_t>(gridDim.x) * kThreads) {
    shifts[v] = el::norm_shift(sums[v], shifts[v], gamma);
  }
}

// elementwise_grid with at most 512 block rows: each block stages a table of kilobytes into
// shared memory first, so each thread takes several elements to spread that cost.
dim3 staged_grid(std::int64_t rows, std::int64_t cols, bool row_order) {
  dim3 grid = elementwise_grid(rows, cols, row_order, kThreads);
  grid.y = std::min(grid.y, 512u);
  return grid;
}

struct ResidueTargets {
  std::int8_t* data[el::kMaxModuli];
  std::int64_t ld[el::kMaxModuli];
  el::Modulus moduli[el::kMaxModuli];
  int row_major[el::kMaxModuli];
  int count;
  int padding;
};

// Copies a kernel parameter into shared memory (indexing a parameter with a thread-dependent
// index would copy it into every thread's local memory).
template <class T>
__device__ void stage(const T& from, T& to) {
  static_assert(sizeof(T) % 4 == 0);
  const auto* src = reinterpret_cast<const std::uint32_t*>(&from);
  auto* dst = reinterpret_cast<std::uint32_t*>(&to);
  for (unsigned w = threadIdx.x; w < sizeof(T) / 4; w += blockDim.x) dst[w] = src[w];
  __syncthreads();
}

__global__ void __launch_bounds__(kThreads)
    residues_kernel(const DeviceReal x, const bool rows, const std::int32_t* shifts,
                    const ResidueTargets out) {
  __shared__ ResidueTargets targets;
  stage(out, targets);
  // In the residues' order: each element is read once but written once per modulus, so the
  // byte writes are the ones to coalesce (A's residues are row major, A itself often not).
  for_each_element(x.rows, x.cols, targets.row_major[0] != 0, [&](std::int64_t i, std::int64_t j) {
    const el::ScaledInteger value = el::scaled_integer(x.get(i, j), shifts[rows ? i : j]);
    for (int l = 0; l < targets.count; ++l) {
      const std::int64_t at = targets.row_major[l] ? i * targets.ld[l] + j : j * targets.ld[l] + i;
      targets.data[l][at] = static_cast<std::int8_t>(el::residue(value, targets.moduli[l]));
    }
  });
}

// The same when x's layout differs from the residues' (A column major, its residues row major;
// every out[l] in one layout):
// each 32 x 32 tile of x is read in x's order into shared memory, then its elements' residues
// are written in the residues' order, so that both the reads and the writes are coalesced.
constexpr int kTile = 32;

__global__ void __launch_bounds__(kThreads)
    residues_transposing_kernel(const DeviceReal x, const bool rows, const std::int32_t* shifts,
                                const ResidueTargets out) {
  __shared__ ResidueTargets targets;
  __shared__ double tile[kTile][kTile + 1];  // [local row][local column]
  stage(out, targets);
  const int lane = static_cast<int>(threadIdx.x) % kTile, step = kThreads / kTile;
  const bool out_rows = targets.row_major[0] != 0;
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
      const el::ScaledInteger value = el::scaled_integer(tile[ii][jj], shifts[rows ? i : j]);
      for (int l = 0; l < targets.count; ++l) {
        const std::int64_t at = out_rows ? i * targets.ld[l] + j : j * targets.ld[l] + i;
        targets.data[l][at] = static_cast<std::int8_t>(el::residue(value, targets.moduli[l]));
      }
    }
    __syncthreads();  // the tile is read before the next one is written
  }
}

// dst (s8, column major) = the int32 sums reduced modulo m.
__global__ void __launch_bounds__(kThreads)
    sum_residues_kernel(const std::int32_t* sums, const std::int64_t sums_ld, const el::Modulus m,
                        std::int8_t* dst, const std::int64_t ld, const std::int64_t rows,
                        const std::int64_t cols) {
  for_each_element(rows, cols, false, [&](std::int64_t i, std::int64_t j) {
    dst[j * ld + i] = static_cast<std::int8_t>(el::sum_residue(sums[j * sums_ld + i], m));
  });
}

// The same for sums and destination both contiguous (ld = rows) and 4-byte aligned destination:
// four elements per thread (int4 in, char4 out), a grid-stride loop over count / 4 groups.
__global__ void __launch_bounds__(kThreads)
    sum_residues_flat_kernel(const int4* sums, const el::Modulus m, char4* dst,
                             const std::int64_t groups) {
  for (std::int64_t g = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x; g < groups;
       g += static_cast<std::int64_t>(gridDim.x) * kThreads) {
    const int4 in = sums[g];
    dst[g] = make_char4(static_cast<signed char>(el::sum_residue(in.x, m)),
                        static_cast<signed char>(el::sum_residue(in.y, m)),
                        static_cast<signed char>(el::sum_residue(in.z, m)),
                        static_cast<signed char>(el::sum_residue(in.w, m)));
  }
}

template <int L>
__global__ void __launch_bounds__(kThreads)
    reconstruct_kernel(const std::int8_t* first, const std::size_t stride, const std::int64_t ld,
                       const el::Table table, const std::int32_t* row_shifts,
                       const std::int32_t* col_shifts, const DeviceReal dst) {
  __shared__ el::Table staged;
  stage(table, staged);
  for_each_element(dst.rows, dst.cols, dst.row_major, [&](std::int64_t i, std::int64_t j) {
    const std::int8_t* at = first + j * ld + i;
    const auto residue = [&](int l) { return static_cast<int>(at[l * stride]); };
    *dst.fp64_at(i, j) =
        el::reconstruct_in<L>(staged, residue, std::int64_t{row_shifts[i]} + col_shifts[j]);
  });
}

template <int L>
void launch_reconstruct(const IntegerMatrixStack& residues, const el::Table& table,
                        const OuterExponents& shifts, const DeviceReal& out) {
  const auto* first = static_cast<const std::int8_t*>(residues.first.buffer->address()) +
                      residues.first.offset_bytes;
  reconstruct_kernel<L><<<staged_grid(out.rows, out.cols, out.row_major), kThreads>>>(
      first, residues.stride_bytes, residues.first.ld, table, device_exponents(shifts.rows),
      device_exponents(shifts.columns), out);
}

}  // namespace

std::size_t crt_scale_scratch_bytes(const RealMatrix& x, SplitAxis axis) {
  return 16 + static_cast<std::size_t>(axis == SplitAxis::rows ? x.rows : x.cols) * 8;
}

int crt_scale(const RealMatrix& x, SplitAxis axis, int max_bits, const ExponentVector& shifts,
              void* scratch) {
  const bool rows = axis == SplitAxis::rows;
  const std::int64_t vectors = rows ? x.rows : x.cols, length = rows ? x.cols : x.rows;
  auto* bits = static_cast<int*>(scratch);
  TCEMU_CUDA_CHECK(cudaMemsetAsync(bits, 0, crt_scale_scratch_bytes(x, axis)));
  const bool across = rows != (x.layout == Layout::row_major);
  if (vectors > 0 && length > 0 && across) {
    int* slots = bits + 4;
    // About 64 chunks per vector: enough threads to cover the device's memory latency.
    const std::int64_t chunk = std::max<std::int64_t>(64, (length + 63) / 64);
    const dim3 grid(static_cast<unsigned>((vectors + kThreads - 1) / kThreads),
                    static_cast<unsigned>((length + chunk - 1) / chunk));
    scale_across_kernel<<<grid, kThreads>>>(device_real(x), rows, chunk, slots);
    const auto blocks =
        static_cast<unsigned>(std::min<std::int64_t>((vectors + kThreads - 1) / kThreads, 4096));
    scale_finish_kernel<<<blocks, kThreads>>>(slots, vectors, max_bits, device_exponents(shifts),
                                              bits);
    TCEMU_CUDA_CHECK(cudaGetLastError());
  } else if (vectors > 0) {
    const auto grid = static_cast<unsigned>(std::min<std::int64_t>(vectors, 1 << 16));
    scale_kernel<<<grid, kThreads>>>(device_real(x), rows, max_bits, device_exponents(shifts),
                                     bits);
    TCEMU_CUDA_CHECK(cudaGetLastError());
  }
  int result = 0;
  TCEMU_CUDA_CHECK(cudaMemcpy(&result, bits, sizeof(int), cudaMemcpyDeviceToHost));
  return result;
}

void crt_norm_shifts(const RealMatrix& x, SplitAxis axis, int gamma, const ExponentVector& shifts,
                     void* scratch) {
  const bool rows = axis == SplitAxis::rows;
  const std::int64_t vectors = rows ? x.rows : x.cols, length = rows ? x.cols : x.rows;
  if (vectors == 0) return;
  auto* sums = static_cast<unsigned long long*>(scratch);
  TCEMU_CUDA_CHECK(cudaMemsetAsync(sums, 0, static_cast<std::size_t>(vectors) * 8));
  std::int32_t* out = device_exponents(shifts);
  if (length > 0 && rows != (x.layout == Layout::row_major)) {
    const std::int64_t chunk = std::max<std::int64_t>(64, (length + 63) / 64);
    const dim3 grid(static_cast<unsigned>((vectors + kThreads - 1) / kThreads),
                    static_cast<unsigned>((length + chunk - 1) / chunk));
    norm_sums_across_kernel<<<grid, kThreads>>>(device_real(x), rows, chunk, out, sums);
  } else if (length > 0) {
    const auto grid = static_cast<unsigned>(std::min<std::int64_t>(vectors, 1 << 16));
    norm_sums_kernel<<<grid, kThreads>>>(device_real(x), rows, out, sums);
  }
  const auto blocks =
      static_cast<unsigned>(std::min<std::int64_t>((vectors + kThreads - 1) / kThreads, 4096));
  norm_finish_kernel<<<blocks, kThreads>>>(sums, vectors, gamma, out);
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

void crt_residues(const RealMatrix& x, SplitAxis axis, const ExponentVector& shifts,
                  std::span<const IntegerMatrix> out) {
  if (x.rows == 0 || x.cols == 0) return;
  ResidueTargets targets{};
  targets.count = static_cast<int>(out.size());
  for (std::size_t l = 0; l < out.size(); ++l) {
    targets.data[l] = static_cast<std::int8_t*>(out[l].buffer->address()) + out[l].offset_bytes;
    targets.ld[l] = out[l].ld;
    targets.row_major[l] = out[l].layout == Layout::row_major ? 1 : 0;
    targets.moduli[l] = el::modulus(el::kModuli[l]);
  }
  const DeviceReal in = device_real(x);
  const bool out_rows = targets.row_major[0] != 0;
  bool one_layout = true;
  for (std::size_t l = 1; l < out.size(); ++l)
    one_layout &= (targets.row_major[l] != 0) == out_rows;
  if (in.row_major == out_rows || !one_layout) {
    residues_kernel<<<staged_grid(x.rows, x.cols, out_rows), kThreads>>>(
        in, axis == SplitAxis::rows, device_exponents(shifts), targets);
  } else {
    const std::int64_t tiles = ((x.rows + kTile - 1) / kTile) * ((x.cols + kTile - 1) / kTile);
    residues_transposing_kernel<<<static_cast<unsigned>(std::min<std::int64_t>(tiles, 8192)),
                                  kThreads>>>(in, axis == SplitAxis::rows, device_exponents(shifts),
                                              targets);
  }
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

void crt_product_residues(cublasHandle_t handle, const IntegerMatrix& a, const IntegerMatrix& b,
                          int modulus, const IntegerMatrix& dst, void* scratch) {
  const std::int32_t* sums = integer_gemm_sums(handle, a, b, scratch);
  auto* out = static_cast<std::int8_t*>(dst.buffer->address()) + dst.offset_bytes;
  const el::Modulus m = el::modulus(el::kModuli[modulus]);
  const std::int64_t count = dst.rows * dst.cols;
  if (dst.ld == dst.rows && integer_sums_ld(dst.rows) == dst.rows && count % 4 == 0 &&
      reinterpret_cast<std::uintptr_t>(out) % 4 == 0) {
    const auto blocks =
        static_cast<unsigned>(std::min<std::int64_t>((count / 4 + kThreads - 1) / kThreads, 8192));
    sum_residues_flat_kernel<<<blocks, kThreads>>>(reinterpret_cast<const int4*>(sums), m,
                                                   reinterpret_cast<char4*>(out), count / 4);
  } else {
    sum_residues_kernel<<<elementwise_grid(dst.rows, dst.cols, false, kThreads), kThreads>>>(
        sums, integer_sums_ld(dst.rows), m, out, dst.ld, dst.rows, dst.cols);
  }
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

void crt_reconstruct(const IntegerMatrixStack& residues, const crt_elements::Table& table,
                     const OuterExponents& shifts, const RealMatrix& dst) {
  if (dst.rows == 0 || dst.cols == 0) return;
  const DeviceReal out = device_real(dst);
  switch (table.limbs) {
    case 1:
      launch_reconstruct<1>(residues, table, shifts, out);
      break;
    case 2:
      launch_reconstruct<2>(residues, table, shifts, out);
      break;
    case 3:
      launch_reconstruct<3>(residues, table, shifts, out);
      break;
    case 4:
      launch_reconstruct<4>(residues, table, shifts, out);
      break;
    case 5:
      launch_reconstruct<5>(residues, table, shifts, out);
      break;
    case 6:
      launch_reconstruct<6>(residues, table, shifts, out);
      break;
    case 7:
      launch_reconstruct<7>(residues, table, shifts, out);
      break;
    case 8:
      launch_reconstruct<8>(residues, table, shifts, out);
      break;
    case 9:
      launch_reconstruct<9>(residues, table, shifts, out);
      break;
    case 10:
      launch_reconstruct<10>(residues, table, shifts, out);
      break;
    case 11:
      launch_reconstruct<11>(residues, table, shifts, out);
      break;
    case 12:
      launch_reconstruct<12>(residues, table, shifts, out);
      break;
    default:
      launch_reconstruct<el::kLimbs>(residues, table, shifts, out);
      break;
  }
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tcemu::gpu::detail
