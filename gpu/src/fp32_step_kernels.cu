#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>

#include <tcemu/emulator/residual_split.hpp>

#include "cuda_check.hpp"
#include "device_words.hpp"
#include "fp32_step_kernels.hpp"
#include "grid_loop.cuh"

namespace tcemu::gpu::detail {
namespace {

constexpr int kThreads = 256;

constexpr bool nonfinite(std::uint32_t bits) {
  return (bits & 0x7F800000u) == 0x7F800000u;
}

// counters: [0] max |x| bits, [1] NaN count, [2] Inf count (atomics: the order of visits does
// not matter, as the step promises).
__global__ void summarize_kernel(const DeviceMatrix x, unsigned long long* counters) {
  unsigned long long max_bits = 0, nans = 0, infs = 0;
  for_each_element(x.rows, x.cols, x.row_major, [&](std::int64_t i, std::int64_t j) {
    const std::uint32_t magnitude = x.get(i, j) & 0x7FFFFFFFu;
    if (magnitude > 0x7F800000u) {
      ++nans;
    } else if (magnitude == 0x7F800000u) {
      ++infs;
    } else if (magnitude > max_bits) {
      max_bits = magnitude;
    }
  });
  // One atomic per warp and counter, from about a thousand blocks: atomics on one address
  // serialize (per-thread ones cost tens of ms at n = 8192). Every lane of the warp reaches this
  // point (no early exit above).
  const unsigned warp_max = __reduce_max_sync(0xFFFFFFFFu, static_cast<unsigned>(max_bits));
  const unsigned warp_nans = __reduce_add_sync(0xFFFFFFFFu, static_cast<unsigned>(nans));
  const unsigned warp_infs = __reduce_add_sync(0xFFFFFFFFu, static_cast<unsigned>(infs));
  if (threadIdx.x % 32 == 0) {
    if (warp_max) atomicMax(&counters[0], static_cast<unsigned long long>(warp_max));
    if (warp_nans) atomicAdd(&counters[1], static_cast<unsigned long long>(warp_nans));
    if (warp_infs) atomicAdd(&counters[2], static_cast<unsigned long long>(warp_infs));
  }
}

// The part formats that split_element computes with hardware conversions.
enum class FastPart { none, fp16, bf16, tf32 };

FastPart fast_part(const FloatFormat& format) {
  return format == formats::fp16   ? FastPart::fp16
         : format == formats::bf16 ? FastPart::bf16
         : format == formats::tf32 ? FastPart::tf32
                                   : FastPart::none;
}

// split_fp32_element, in fp32 arithmetic where that is exact: a finite nonzero x, an fp16, bf16
// or tf32 part and 0 <= e <= 126 (2^e and 2^-e normal floats). Then (backend.hpp, split_fp32)
// y = x 2^e is exact unless it reaches 2^(max_exponent + 1), which is an overflow of the part and
// goes to split_fp32_element with every other case; the part is y rounded once (cvt.rn/.rz, or
// for tf32 the rounding of y's bits to 10 fraction bits); part 2^-e is a multiple of x's quantum
// with at most 11 significant bits, so the fp32 multiply is exact, and x - part 2^-e is exact by
// the proof there (+0 when zero, as RN subtraction gives). A part rounded up to Inf (RN) is an
// overflow: the IEEE part and residual +0, as split_fp32_element returns.
__device__ SplitElement split_element(std::uint32_t x, FastPart kind, const FloatFormat& format,
                                      Rounding rounding, int e) {
  const std::uint32_t magnitude = x & 0x7FFFFFFFu;
  const std::uint32_t limit = kind == FastPart::fp16 ? 0x47800000u : 0x7F800000u;  // 2^16, Inf
  if (kind == FastPart::none || e < 0 || e > 126 || magnitude == 0 || magnitude >= 0x7F800000u) {
    return split_fp32_element(x, format, rounding, e);
  }
  const float y =
      __fmul_rn(__uint_as_float(x), __uint_as_float(static_cast<unsigned>(127 + e) << 23));
  if ((__float_as_uint(y) & 0x7FFFFFFFu) >= limit)
    return split_fp32_element(x, format, rounding, e);
  const bool rn = rounding == Rounding::nearest_even;
  std::uint32_t part;
  float value;  // the part as an fp32 value
  if (kind == FastPart::fp16) {
    const __half h = rn ? __float2half_rn(y) : __float2half_rz(y);
    part = __half_as_ushort(h);
    value = __half2float(h);
  } else if (kind == FastPart::bf16) {
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

// split_fp32 in 32 x 32 tiles: read along x's layout into shared memory, written along the part's
// (and residual's) layout, so a change of layout costs no uncoalesced access.
constexpr int kTile = 32, kTileRows = 8;

__global__ void split_kernel(const DeviceMatrix x, const DeviceMatrix part, const FastPart kind,
                             const FloatFormat format, const DeviceMatrix residual,
                             const bool with_residual, const Rounding rounding,
                             const int scale_exponent, unsigned long long* overflows) {
  __shared__ std::uint32_t tile[kTile][kTile + 1];  // +1: a column of the tile hits 32 banks
  const std::int64_t tiles_i = (x.rows + kTile - 1) / kTile;
  const std::int64_t tiles = tiles_i * ((x.cols + kTile - 1) / kTile);
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  unsigned long long count = 0;
  for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const std::int64_t i0 = t % tiles_i * kTile, j0 = t / tiles_i * kTile;
    for (int r = ty; r < kTile; r += kTileRows) {
      const int li = x.row_major ? r : tx, lj = x.row_major ? tx : r;
      if (i0 + li < x.rows && j0 + lj < x.cols) tile[li][lj] = x.get(i0 + li, j0 + lj);
    }
    __syncthreads();
    for (int r = ty; r < kTile; r += kTileRows) {
      const int li = part.row_major ? r : tx, lj = part.row_major ? tx : r;
      if (i0 + li >= x.rows || j0 + lj >= x.cols) continue;
      const SplitElement e = split_element(tile[li][lj], kind, format, rounding, scale_exponent);
      part.set(i0 + li, j0 + lj, e.part);
      if (with_residual) residual.set(i0 + li, j0 + lj, e.residual);
      count += e.overflow ? 1 : 0;
    }
    __syncthreads();  // the tile is refilled next
  }
  if (count) atomicAdd(overflows, count);
}

__global__ void combine_kernel(const DeviceMatrix x, const DeviceMatrix y, const bool has_y,
                               const DeviceMatrix c, const DeviceMatrix d,
                               const CombineOptions options) {
  for_each_element(x.rows, x.cols, d.row_major, [&](std::int64_t i, std::int64_t j) {
    d.set(i, j,
          combine_fp32_element(x.get(i, j), has_y, has_y ? y.get(i, j) : 0u,
                               options.beta == 0.0f ? 0u : c.get(i, j), options.y_exponent,
                               options.scale_exponent, options.alpha, options.beta));
  });
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
      if (nonfinite(x) || nonfinite(y)) products.add(x, y);
    }
    d.set(i, j, products.result());
  });
}

std::vector<std::uint64_t> read_counters(const DeviceWords& words, std::size_t count) {
  std::vector<std::uint32_t> raw = words.to_host();
  std::vector<std::uint64_t> out(count);
  std::memcpy(out.data(), raw.data(), count * sizeof(std::uint64_t));
  return out;
}

}  // namespace

Fp32Summary summarize_fp32(const DeviceMatrix& x) {
  DeviceWords counters(std::vector<std::uint32_t>(6, 0));
  auto* c = reinterpret_cast<unsigned long long*>(counters.get());
  if (x.rows > 0 && x.cols > 0) {
    // About a thousand blocks, each thread striding over many elements: few atomics.
    dim3 grid = elementwise_grid(x.rows, x.cols, x.row_major, kThreads);
    grid.y = std::min(grid.y, std::max(1u, 1024u / grid.x));
    summarize_kernel<<<grid, kThreads>>>(x, c);
    TCEMU_CUDA_CHECK(cudaGetLastError());
  }
  const auto v = read_counters(counters, 3);
  return {static_cast<std::uint32_t>(v[0]), static_cast<std::int64_t>(v[1]),
          static_cast<std::int64_t>(v[2])};
}

std::int64_t split_fp32(const DeviceMatrix& x, const DeviceMatrix& part, const FloatFormat& format,
                        const DeviceMatrix* residual, Rounding rounding, int scale_exponent) {
  DeviceWords counter(std::vector<std::uint32_t>(2, 0));
  if (x.rows > 0 && x.cols > 0) {
    const std::int64_t tiles = ((x.rows + kTile - 1) / kTile) * ((x.cols + kTile - 1) / kTile);
    split_kernel<<<static_cast<unsigned>(std::min<std::int64_t>(tiles, 1 << 20)),
                   dim3(kTile, kTileRows)>>>(
        x, part, fast_part(format), format, residual ? *residual : part, residual != nullptr,
        rounding, scale_exponent, reinterpret_cast<unsigned long long*>(counter.get()));
    TCEMU_CUDA_CHECK(cudaGetLastError());
  }
  return static_cast<std::int64_t>(read_counters(counter, 1)[0]);
}

void combine_fp32(const DeviceMatrix& x, const DeviceMatrix* y, const DeviceMatrix* c,
                  const DeviceMatrix& d, const CombineOptions& options) {
  if (x.rows == 0 || x.cols == 0) return;
  combine_kernel<<<elementwise_grid(x.rows, x.cols, d.row_major, kThreads), kThreads>>>(
      x, y ? *y : x, y != nullptr, c ? *c : x, d, options);
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

void propagate_nonfinite_fp32(const DeviceMatrix& a, const DeviceMatrix& b, const DeviceMatrix& d) {
  if (d.rows == 0 || d.cols == 0 || a.cols == 0) return;
  DeviceWords flags(std::vector<std::uint32_t>(static_cast<std::size_t>(a.rows + b.cols), 0));
  flag_kernel<<<elementwise_grid(a.rows, a.cols, a.row_major, kThreads), kThreads>>>(a, flags.get(),
                                                                                     true, 0);
  TCEMU_CUDA_CHECK(cudaGetLastError());
  flag_kernel<<<elementwise_grid(b.rows, b.cols, b.row_major, kThreads), kThreads>>>(b, flags.get(),
                                                                                     false, a.rows);
  TCEMU_CUDA_CHECK(cudaGetLastError());
  propagate_kernel<<<elementwise_grid(d.rows, d.cols, d.row_major, kThreads), kThreads>>>(
      a, b, d, flags.get());
  TCEMU_CUDA_CHECK(cudaGetLastError());
  TCEMU_CUDA_CHECK(cudaDeviceSynchronize());  // flags are freed on return
}

}  // namespace tcemu::gpu::detail
