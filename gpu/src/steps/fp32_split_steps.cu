#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include <tcemu/backend/fp32_split_elements.hpp>
#include <tcemu/backend/nonfinite_products.hpp>

#include "cuda_check.hpp"
#include "grid_loop.cuh"
#include "hardware_formats.cuh"
#include "steps/fp32_split_steps.hpp"

namespace tcemu::gpu::detail {
namespace {

constexpr int kThreads = 256;

constexpr bool nonfinite(std::uint32_t bits) {
  return (bits & 0x7F800000u) == 0x7F800000u;
}

// ---- flat matrices ------------------------------------------------------------------------------
// A matrix is flat when its elements fill rows * cols consecutive slots in its layout's order
// (ld = the length of its vectors) from an address aligned to four elements: element (i, j) is
// then at index i * cols + j (row major) or j * rows + i, the same index in every flat matrix of
// the same shape and layout, so an elementwise step over such matrices is one loop over indices,
// four elements to a load or store, with no 2-D index arithmetic.

bool flat(const DeviceMatrix& m) {
  return m.ld == (m.row_major ? m.cols : m.rows) &&
         reinterpret_cast<std::uintptr_t>(m.data) % (4 * m.element_bytes) == 0;
}

// m is flat in the layout of `like`.
bool flat_like(const DeviceMatrix& m, const DeviceMatrix& like) {
  return flat(m) && m.row_major == like.row_major;
}

// The element type of `Bytes` bytes, and four of them in one access.
template <int Bytes>
using Word = std::conditional_t<Bytes == 1, std::uint8_t,
                                std::conditional_t<Bytes == 2, std::uint16_t, std::uint32_t>>;
template <int Bytes>
using Quad =
    std::conditional_t<Bytes == 1, std::uint32_t, std::conditional_t<Bytes == 2, uint2, uint4>>;

template <int Bytes>
__device__ std::uint32_t load_one(const unsigned char* data, std::int64_t i) {
  return reinterpret_cast<const Word<Bytes>*>(data)[i];
}

template <int Bytes>
__device__ void store_one(unsigned char* data, std::int64_t i, std::uint32_t w) {
  reinterpret_cast<Word<Bytes>*>(data)[i] = static_cast<Word<Bytes>>(w);
}

// Elements 4q, ..., 4q + 3 (little endian: the first element in the lowest bytes).
template <int Bytes>
__device__ void load_four(const unsigned char* data, std::int64_t q, std::uint32_t (&w)[4]) {
  const Quad<Bytes> v = reinterpret_cast<const Quad<Bytes>*>(data)[q];
  if constexpr (Bytes == 4) {
    w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
  } else if constexpr (Bytes == 2) {
    w[0] = v.x & 0xFFFFu, w[1] = v.x >> 16, w[2] = v.y & 0xFFFFu, w[3] = v.y >> 16;
  } else {
    for (int k = 0; k < 4; ++k) w[k] = (v >> (8 * k)) & 0xFFu;
  }
}

template <int Bytes>
__device__ void store_four(unsigned char* data, std::int64_t q, const std::uint32_t (&w)[4]) {
  Quad<Bytes> v;
  if constexpr (Bytes == 4) {
    v = {w[0], w[1], w[2], w[3]};
  } else if constexpr (Bytes == 2) {
    v = {(w[0] & 0xFFFFu) | w[1] << 16, (w[2] & 0xFFFFu) | w[3] << 16};
  } else {
    v = (w[0] & 0xFFu) | (w[1] & 0xFFu) << 8 | (w[2] & 0xFFu) << 16 | w[3] << 24;
  }
  reinterpret_cast<Quad<Bytes>*>(data)[q] = v;
}

// Every index below `count` once, for any 1-D grid: quad(q) for the quads q < count / 4 (grid
// stride), then one(i) for each of the last count % 4 indices.
template <class QuadBody, class OneBody>
__device__ void for_each_flat(std::int64_t count, const QuadBody& quad, const OneBody& one) {
  const std::int64_t first = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t quads = count / 4;
  for (std::int64_t q = first; q < quads; q += stride) quad(q);
  if (first < count - 4 * quads) one(4 * quads + first);
}

// A grid for for_each_flat: a thread per quad, at most max_blocks blocks (then threads stride).
unsigned flat_grid(std::int64_t count, std::int64_t max_blocks) {
  return static_cast<unsigned>(
      std::clamp<std::int64_t>((count / 4 + kThreads - 1) / kThreads, 1, max_blocks));
}

constexpr std::int64_t kMaxFlatBlocks = std::int64_t{1} << 20;

// ---- summarize_fp32 -----------------------------------------------------------------------------

// One thread's part of an Fp32Summary.
struct Tally {
  unsigned max_bits = 0, nans = 0, infs = 0;

  __device__ void add(std::uint32_t bits) {
    const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
    nans += magnitude > 0x7F800000u;
    infs += magnitude == 0x7F800000u;
    if (magnitude < 0x7F800000u) max_bits = max(max_bits, magnitude);
  }
};

// counters: [0] max |x| bits, [1] NaN count, [2] Inf count (atomics: the order of visits does
// not matter, as the step promises). Flat: x is flat (one loop over its indices, four elements to
// a load).
template <bool Flat>
__global__ void __launch_bounds__(kThreads)
    summarize_kernel(const DeviceMatrix x, unsigned long long* counters) {
  Tally t;
  if constexpr (Flat) {
    for_each_flat(
        x.rows * x.cols,
        [&](std::int64_t q) {
          std::uint32_t w[4];
          load_four<4>(x.data, q, w);
          for (const std::uint32_t bits : w) t.add(bits);
        },
        [&](std::int64_t i) { t.add(load_one<4>(x.data, i)); });
  } else {
    for_each_element(x.rows, x.cols, x.row_major,
                     [&](std::int64_t i, std::int64_t j) { t.add(x.get(i, j)); });
  }
  // One atomic per warp and counter, from about a thousand blocks: atomics on one address
  // serialize (per-thread ones cost tens of ms at n = 8192). Every lane of the warp reaches this
  // point (no early exit above).
  const unsigned warp_max = __reduce_max_sync(0xFFFFFFFFu, t.max_bits);
  const unsigned warp_nans = __reduce_add_sync(0xFFFFFFFFu, t.nans);
  const unsigned warp_infs = __reduce_add_sync(0xFFFFFFFFu, t.infs);
  if (threadIdx.x % 32 == 0) {
    if (warp_max) atomicMax(&counters[0], static_cast<unsigned long long>(warp_max));
    if (warp_nans) atomicAdd(&counters[1], static_cast<unsigned long long>(warp_nans));
    if (warp_infs) atomicAdd(&counters[2], static_cast<unsigned long long>(warp_infs));
  }
}

// ---- split_fp32 ---------------------------------------------------------------------------------

// split_fp32_element, in fp32 arithmetic where that is exact: a finite nonzero x, an fp16, bf16
// or tf32 part and 0 <= e <= 126 (2^e and 2^-e normal floats). Then (fp32_split_steps.hpp,
// split_fp32) y = x 2^e is exact unless it reaches 2^(max_exponent + 1), which is an overflow of
// the part and goes to split_fp32_element with every other case; the part is y rounded once
// (cvt.rn/.rz, or for tf32 the rounding of y's bits to 10 fraction bits); part 2^-e is a multiple
// of x's quantum with at most 11 significant bits, so the fp32 multiply is exact, and x - part 2^-e
// is exact by the proof there (+0 when zero, as RN subtraction gives). A part rounded up to Inf
// (RN) is an overflow: the IEEE part and residual +0, as split_fp32_element returns.
__device__ SplitElement split_element(std::uint32_t x, HardwareFormat kind,
                                      const FloatFormat& format, Rounding rounding, int e) {
  const std::uint32_t magnitude = x & 0x7FFFFFFFu;
  const std::uint32_t limit =
      kind == HardwareFormat::fp16 ? 0x47800000u : 0x7F800000u;  // 2^16, Inf
  if (kind == HardwareFormat::none || e < 0 || e > 126 || magnitude == 0 ||
      magnitude >= 0x7F800000u) {
    return split_fp32_element(x, format, rounding, e);
  }
  const float y =
      __fmul_rn(__uint_as_float(x), __uint_as_float(static_cast<unsigned>(127 + e) << 23));
  if ((__float_as_uint(y) & 0x7FFFFFFFu) >= limit)
    return split_fp32_element(x, format, rounding, e);
  const bool rn = rounding == Rounding::nearest_even;
  std::uint32_t part;
  float value;  // the part as an fp32 value
  if (kind == HardwareFormat::fp16) {
    const __half h = rn ? __float2half_rn(y) : __float2half_rz(y);
    part = __half_as_ushort(h);
    value = __half2float(h);
  } else if (kind == HardwareFormat::bf16) {
    const __nv_bfloat16 h = rn ? __float2bfloat16_rn(y) : __float2bfloat16_rz(y);
    part = __bfloat16_as_ushort(h);
    value = __uint_as_float(part << 16);
  } else {
    // Round the fp32 bits to 10 fraction bits: the low 13 bits go, ties to even; a carry moves
    // into the exponent (the next binade, or Inf past the largest), subnormals included.
    const std::uint32_t bits = __float_as_uint(y);
    part = (rn ? bits + 0xFFFu + ((bits >> 13) & 1u) : bits) & ~0x1FFFu;
    value = __uint_as_float(part);
  }
  if ((__float_as_uint(value) & 0x7FFFFFFFu) == 0x7F800000u) return {part, 0, true};
  const float taken = __fmul_rn(value, __uint_as_float(static_cast<unsigned>(127 - e) << 23));
  return {part, __float_as_uint(__fsub_rn(__uint_as_float(x), taken)), false};
}

// split_fp32 where x, part and residual are flat in one layout: four elements to a thread.
template <int PartBytes>
__global__ void __launch_bounds__(kThreads)
    split_flat_kernel(const DeviceMatrix x, const DeviceMatrix part, const HardwareFormat kind,
                      const FloatFormat format, const DeviceMatrix residual,
                      const bool with_residual, const Rounding rounding, const int scale_exponent,
                      unsigned long long* overflows) {
  unsigned count = 0;
  for_each_flat(
      x.rows * x.cols,
      [&](std::int64_t q) {
        std::uint32_t in[4], parts[4], residuals[4];
        load_four<4>(x.data, q, in);
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const SplitElement e = split_element(in[k], kind, format, rounding, scale_exponent);
          parts[k] = e.part;
          residuals[k] = e.residual;
          count += e.overflow;
        }
        store_four<PartBytes>(part.data, q, parts);
        if (with_residual) store_four<4>(residual.data, q, residuals);
      },
      [&](std::int64_t i) {
        const SplitElement e =
            split_element(load_one<4>(x.data, i), kind, format, rounding, scale_exponent);
        store_one<PartBytes>(part.data, i, e.part);
        if (with_residual) store_one<4>(residual.data, i, e.residual);
        count += e.overflow;
      });
  if (count) atomicAdd(overflows, static_cast<unsigned long long>(count));
}

// split_fp32 for any layouts, in 32 x 32 tiles: read along x's layout into shared memory, written
// along the part's (and residual's) layout, so a change of layout costs no uncoalesced access.
// Block (x, y) takes tile (x, y) of rows and columns, striding by the grid.
constexpr int kTile = 32, kTileRows = 8;

template <int PartBytes>
__global__ void __launch_bounds__(kTile* kTileRows)
    split_tiled_kernel(const DeviceMatrix x, const DeviceMatrix part, const HardwareFormat kind,
                       const FloatFormat format, const DeviceMatrix residual,
                       const bool with_residual, const Rounding rounding, const int scale_exponent,
                       unsigned long long* overflows) {
  __shared__ std::uint32_t tile[kTile][kTile + 1];  // +1: a column of the tile hits 32 banks
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  unsigned count = 0;
  for (std::int64_t j0 = blockIdx.y * std::int64_t{kTile}; j0 < x.cols;
       j0 += gridDim.y * std::int64_t{kTile}) {
    for (std::int64_t i0 = blockIdx.x * std::int64_t{kTile}; i0 < x.rows;
         i0 += gridDim.x * std::int64_t{kTile}) {
#pragma unroll
      for (int r = ty; r < kTile; r += kTileRows) {
        const int li = x.row_major ? r : tx, lj = x.row_major ? tx : r;
        if (i0 + li < x.rows && j0 + lj < x.cols) {
          tile[li][lj] = load_one<4>(x.data, x.index(i0 + li, j0 + lj));
        }
      }
      __syncthreads();
#pragma unroll
      for (int r = ty; r < kTile; r += kTileRows) {
        const int li = part.row_major ? r : tx, lj = part.row_major ? tx : r;
        if (i0 + li >= x.rows || j0 + lj >= x.cols) continue;
        const SplitElement e = split_element(tile[li][lj], kind, format, rounding, scale_exponent);
        store_one<PartBytes>(part.data, part.index(i0 + li, j0 + lj), e.part);
        if (with_residual)
          store_one<4>(residual.data, residual.index(i0 + li, j0 + lj), e.residual);
        count += e.overflow;
      }
      __syncthreads();  // the tile is refilled next
    }
  }
  if (count) atomicAdd(overflows, static_cast<unsigned long long>(count));
}

// Launches split_flat_kernel or split_tiled_kernel for parts of PartBytes bytes.
template <int PartBytes>
void launch_split(const DeviceMatrix& x, const DeviceMatrix& part, HardwareFormat kind,
                  const FloatFormat& format, const DeviceMatrix* residual, Rounding rounding,
                  int scale_exponent, unsigned long long* overflows) {
  const DeviceMatrix& r = residual ? *residual : part;
  if (flat(x) && flat_like(part, x) && (!residual || flat_like(r, x))) {
    split_flat_kernel<PartBytes><<<flat_grid(x.rows * x.cols, kMaxFlatBlocks), kThreads>>>(
        x, part, kind, format, r, residual != nullptr, rounding, scale_exponent, overflows);
  } else {
    const dim3 grid(
        static_cast<unsigned>(std::min<std::int64_t>((x.rows + kTile - 1) / kTile, 1 << 30)),
        static_cast<unsigned>(std::min<std::int64_t>((x.cols + kTile - 1) / kTile, 65535)));
    split_tiled_kernel<PartBytes><<<grid, dim3(kTile, kTileRows)>>>(
        x, part, kind, format, r, residual != nullptr, rounding, scale_exponent, overflows);
  }
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

// ---- combine_fp32 -------------------------------------------------------------------------------

// Flat: x, d and the y and c that are read are flat in one layout (four elements to a thread);
// otherwise any layouts, a thread per element along d's.
template <bool Flat>
__global__ void __launch_bounds__(kThreads)
    combine_kernel(const DeviceMatrix x, const DeviceMatrix y, const bool has_y,
                   const DeviceMatrix c, const DeviceMatrix d, const CombineOptions options) {
  const bool with_c = options.beta != 0.0f;
  const auto element = [&](std::uint32_t xe, std::uint32_t ye, std::uint32_t ce) {
    return combine_fp32_element(xe, has_y, ye, ce, options.y_exponent, options.scale_exponent,
                                options.alpha, options.beta);
  };
  if constexpr (Flat) {
    for_each_flat(
        x.rows * x.cols,
        [&](std::int64_t q) {
          std::uint32_t xs[4], ys[4] = {}, cs[4] = {}, ds[4];
          load_four<4>(x.data, q, xs);
          if (has_y) load_four<4>(y.data, q, ys);
          if (with_c) load_four<4>(c.data, q, cs);
#pragma unroll
          for (int k = 0; k < 4; ++k) ds[k] = element(xs[k], ys[k], cs[k]);
          store_four<4>(d.data, q, ds);
        },
        [&](std::int64_t i) {
          store_one<4>(d.data, i,
                       element(load_one<4>(x.data, i), has_y ? load_one<4>(y.data, i) : 0u,
                               with_c ? load_one<4>(c.data, i) : 0u));
        });
  } else {
    for_each_element(x.rows, x.cols, d.row_major, [&](std::int64_t i, std::int64_t j) {
      d.set(i, j, element(x.get(i, j), has_y ? y.get(i, j) : 0u, with_c ? c.get(i, j) : 0u));
    });
  }
}

// flags[i] (i < m): row i of A holds a NaN or Inf; flags[m + j]: column j of B does.
__global__ void flag_kernel(const DeviceMatrix x, unsigned* flags, bool rows_of_a,
                            std::int64_t offset) {
  for_each_element(x.rows, x.cols, x.row_major, [&](std::int64_t i, std::int64_t j) {
    if (nonfinite(x.get(i, j))) flags[offset + (rows_of_a ? i : j)] = 1;
  });
}

__global__ void propagate_kernel(const DeviceMatrix a, const DeviceMatrix b, const DeviceMatrix d,
                                 const unsigned* flags) {
  for_each_element(d.rows, d.cols, d.row_major, [&](std::int64_t i, std::int64_t j) {
    if (!flags[i] && !flags[a.rows + j]) return;
    NonfiniteProducts products;
    for (std::int64_t p = 0; p < a.cols; ++p) {
      const std::uint32_t x = a.get(i, p), y = b.get(p, j);
      if (nonfinite(x) || nonfinite(y)) products.add_fp32(x, y);
    }
    d.set(i, j, products.fp32_bits());
  });
}

}  // namespace

Fp32Summary summarize_fp32(const DeviceMatrix& x, void* scratch) {
  auto* counters = static_cast<unsigned long long*>(scratch);
  TCEMU_CUDA_CHECK(cudaMemsetAsync(counters, 0, 3 * sizeof(unsigned long long)));
  if (x.rows > 0 && x.cols > 0) {
    // About a thousand blocks, each thread striding over many elements: few atomics.
    if (flat(x)) {
      summarize_kernel<true><<<flat_grid(x.rows * x.cols, 1024), kThreads>>>(x, counters);
    } else {
      dim3 grid = elementwise_grid(x.rows, x.cols, x.row_major, kThreads);
      grid.y = std::min(grid.y, std::max(1u, 1024u / grid.x));
      summarize_kernel<false><<<grid, kThreads>>>(x, counters);
    }
    TCEMU_CUDA_CHECK(cudaGetLastError());
  }
  unsigned long long v[3];
  TCEMU_CUDA_CHECK(cudaMemcpy(v, counters, sizeof v, cudaMemcpyDeviceToHost));
  return {static_cast<std::uint32_t>(v[0]), static_cast<std::int64_t>(v[1]),
          static_cast<std::int64_t>(v[2])};
}

std::int64_t split_fp32(const DeviceMatrix& x, const DeviceMatrix& part, const FloatFormat& format,
                        const DeviceMatrix* residual, Rounding rounding, int scale_exponent,
                        void* scratch) {
  auto* overflows = static_cast<unsigned long long*>(scratch);
  TCEMU_CUDA_CHECK(cudaMemsetAsync(overflows, 0, sizeof(unsigned long long)));
  if (x.rows > 0 && x.cols > 0) {
    const HardwareFormat kind = hardware_format(format);
    switch (part.element_bytes) {
      case 1:
        launch_split<1>(x, part, kind, format, residual, rounding, scale_exponent, overflows);
        break;
      case 2:
        launch_split<2>(x, part, kind, format, residual, rounding, scale_exponent, overflows);
        break;
      default:
        launch_split<4>(x, part, kind, format, residual, rounding, scale_exponent, overflows);
        break;
    }
  }
  unsigned long long count = 0;
  TCEMU_CUDA_CHECK(cudaMemcpy(&count, overflows, sizeof count, cudaMemcpyDeviceToHost));
  return static_cast<std::int64_t>(count);
}

void combine_fp32(const DeviceMatrix& x, const DeviceMatrix* y, const DeviceMatrix* c,
                  const DeviceMatrix& d, const CombineOptions& options) {
  if (x.rows == 0 || x.cols == 0) return;
  const DeviceMatrix& ym = y ? *y : x;
  const DeviceMatrix& cm = c ? *c : x;
  if (flat(x) && flat_like(d, x) && (!y || flat_like(ym, x)) &&
      (options.beta == 0.0f || flat_like(cm, x))) {
    combine_kernel<true><<<flat_grid(x.rows * x.cols, kMaxFlatBlocks), kThreads>>>(
        x, ym, y != nullptr, cm, d, options);
  } else {
    combine_kernel<false><<<elementwise_grid(x.rows, x.cols, d.row_major, kThreads), kThreads>>>(
        x, ym, y != nullptr, cm, d, options);
  }
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

void propagate_nonfinite_fp32(const DeviceMatrix& a, const DeviceMatrix& b, const DeviceMatrix& d,
                              void* scratch) {
  if (d.rows == 0 || d.cols == 0 || a.cols == 0) return;
  auto* flags = static_cast<unsigned*>(scratch);
  TCEMU_CUDA_CHECK(
      cudaMemsetAsync(flags, 0, static_cast<std::size_t>(a.rows + b.cols) * sizeof(unsigned)));
  flag_kernel<<<elementwise_grid(a.rows, a.cols, a.row_major, kThreads), kThreads>>>(a, flags, true,
                                                                                     0);
  TCEMU_CUDA_CHECK(cudaGetLastError());
  flag_kernel<<<elementwise_grid(b.rows, b.cols, b.row_major, kThreads), kThreads>>>(b, flags,
                                                                                     false, a.rows);
  TCEMU_CUDA_CHECK(cudaGetLastError());
  propagate_kernel<<<elementwise_grid(d.rows, d.cols, d.row_major, kThreads), kThreads>>>(a, b, d,
                                                                                          flags);
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tcemu::gpu::detail
