#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <tcemu/emulator/ozaki_elements.hpp>

#include "cuda_check.hpp"
#include "grid_loop.cuh"
#include "hardware_formats.cuh"
#include "ozaki_step_kernels.hpp"

namespace tcemu::gpu::detail {
namespace {

namespace el = ozaki_elements;

constexpr int kThreads = 256;

// ---- copy_real ---------------------------------------------------------------------------------

constexpr int kTile = 32;
constexpr int kTileRows = 8;  // blockDim = (kTile, kTileRows)

// Each 32 x 32 tile is read with threadIdx.x along src's contiguous index into shared memory and
// written with threadIdx.x along dst's (a transposing copy coalesces on both sides).
__global__ void copy_real_kernel(const DeviceReal src, const DeviceReal dst) {
  __shared__ std::uint64_t tile[kTile][kTile + 1];
  const std::int64_t tiles_i = (src.rows + kTile - 1) / kTile;
  const std::int64_t tiles_j = (src.cols + kTile - 1) / kTile;
  for (std::int64_t ti = blockIdx.y; ti < tiles_i; ti += gridDim.y) {
    for (std::int64_t tj = blockIdx.x; tj < tiles_j; tj += gridDim.x) {
      const std::int64_t i0 = ti * kTile, j0 = tj * kTile;
      for (int r = threadIdx.y; r < kTile; r += kTileRows) {
        const int di = src.row_major ? r : threadIdx.x, dj = src.row_major ? threadIdx.x : r;
        if (i0 + di < src.rows && j0 + dj < src.cols) {
          const std::uint64_t raw = src.raw(i0 + di, j0 + dj);
          tile[di][dj] =
              src.fp64 == dst.fp64 ? raw : fp64::bits(fp64::widen(static_cast<std::uint32_t>(raw)));
        }
      }
      __syncthreads();
      for (int r = threadIdx.y; r < kTile; r += kTileRows) {
        const int di = dst.row_major ? r : threadIdx.x, dj = dst.row_major ? threadIdx.x : r;
        if (i0 + di < dst.rows && j0 + dj < dst.cols) dst.set_bits(i0 + di, j0 + dj, tile[di][dj]);
      }
      __syncthreads();
    }
  }
}

// ---- split -------------------------------------------------------------------------------------

constexpr int kSplitThreads = 512;

// The largest of every thread's `mine` (a block-wide reduction; every thread must call it).
// `slots` holds 33 words of shared memory.
__device__ std::uint64_t block_max(std::uint64_t mine, std::uint64_t* slots) {
  for (int o = 16; o > 0; o >>= 1) {
    const std::uint64_t other = __shfl_xor_sync(0xFFFFFFFFu, mine, o);
    mine = other > mine ? other : mine;
  }
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) slots[warp] = mine;
  __syncthreads();
  if (warp == 0) {
    std::uint64_t v = lane < blockDim.x / 32 ? slots[lane] : 0;
    for (int o = 16; o > 0; o >>= 1) {
      const std::uint64_t other = __shfl_xor_sync(0xFFFFFFFFu, v, o);
      v = other > v ? other : v;
    }
    if (lane == 0) slots[32] = v;
  }
  __syncthreads();
  const std::uint64_t result = slots[32];
  __syncthreads();  // the slots are written again by the next call
  return result;
}

// Where vector v's slice elements go in target t: element p at index base + p * step.
struct SliceVector {
  std::int64_t base, step;
};

__device__ SliceVector slice_vector(const SliceTarget& t, bool rows, std::int64_t v) {
  // Row-major target and rows split (or column-major and columns): the vector is contiguous.
  return rows == t.row_major ? SliceVector{v * t.ld, 1} : SliceVector{v, t.ld};
}

// How a split writes its slice elements; one kind for all the targets of a call.
enum class SliceStore { binary64, fp16, bf16, tf32, other };

SliceStore slice_store(const SliceTarget& t) {
  if (t.fp64) return SliceStore::binary64;
  switch (t.hardware) {
    case HardwareFormat::fp16:
      return SliceStore::fp16;
    case HardwareFormat::bf16:
      return SliceStore::bf16;
    case HardwareFormat::tf32:
      return SliceStore::tf32;
    default:
      return SliceStore::other;
  }
}

// Writes q (an integer slice value, exactly representable in the slice's format: |q| <=
// 2^bits, split_rule.hpp) at index `at` of target t. A hardware format takes the exact
// conversion of q (an fp32 value exactly, bits <= 24), which gives slice_bits's encoding.
template <SliceStore Store>
__device__ void write_slice(const SliceTarget& t, std::int64_t at, double q) {
  if constexpr (Store == SliceStore::binary64) {
    reinterpret_cast<std::uint64_t*>(t.data)[at] = fp64::bits(q);
  } else if constexpr (Store == SliceStore::fp16 || Store == SliceStore::bf16) {
    reinterpret_cast<std::uint16_t*>(t.data)[at] = static_cast<std::uint16_t>(
        encode_exact(static_cast<float>(q),
                     Store == SliceStore::fp16 ? HardwareFormat::fp16 : HardwareFormat::bf16));
  } else if constexpr (Store == SliceStore::tf32) {
    reinterpret_cast<std::uint32_t*>(t.data)[at] = __float_as_uint(static_cast<float>(q));
  } else {
    const std::uint32_t bits_out = el::slice_bits(q, t.format);
    if (t.element_bytes == 1) {
      t.data[at] = static_cast<unsigned char>(bits_out);
    } else if (t.element_bytes == 2) {
      reinterpret_cast<std::uint16_t*>(t.data)[at] = static_cast<std::uint16_t>(bits_out);
    } else {
      reinterpret_cast<std::uint32_t*>(t.data)[at] = bits_out;
    }
  }
}

// One block per vector (grid-stride over the vectors). The vector's remainder lives in shared
// memory (InShared) or in place in x; each thread owns the elements p = threadIdx.x +
// t blockDim.x of it (it alone reads and writes them, for every vector), so only the reductions
// synchronise. One pass over the vector per level: it splits every element and takes the
// largest magnitude of the new remainder, the next level's mu. zero_after receives the largest
// count of levels after which a vector is zero (Backend::split's result).
template <SliceStore Store, bool InShared>
__global__ void __launch_bounds__(kSplitThreads)
    split_kernel(const DeviceReal x, const bool rows, const int bits, const int levels,
                 const SliceTarget* targets, const int stored, int* zero_after) {
  extern __shared__ double work[];
  __shared__ std::uint64_t slots[33];
  const std::int64_t vectors = rows ? x.rows : x.cols, length = rows ? x.cols : x.rows;
  for (std::int64_t v = blockIdx.x; v < vectors; v += gridDim.x) {
    const auto remainder = [&](std::int64_t p) -> double& {
      if constexpr (InShared) {
        return work[p];
      } else {
        return *x.fp64_at(rows ? v : p, rows ? p : v);
      }
    };
    std::uint64_t mu = 0;  // the largest finite magnitude of the remainder
    for (std::int64_t p = threadIdx.x; p < length; p += blockDim.x) {
      const double x_p = *x.fp64_at(rows ? v : p, rows ? p : v);
      if constexpr (InShared) work[p] = x_p;
      const std::uint64_t m = fp64::finite_magnitude(fp64::bits(x_p));
      mu = m > mu ? m : mu;
    }
    mu = block_max(mu, slots);
    int after = levels + 1;
    for (int s = 0; s < levels; ++s) {
      if (mu == 0) {  // zero before level s + 1: this and every later level stores zeros
        after = s > 1 ? s : 1;
        for (int z = s; z < stored; ++z) {
          const SliceTarget t = targets[z];
          const SliceVector to = slice_vector(t, rows, v);
          if (threadIdx.x == 0) t.exponents[v] = 0;
          for (std::int64_t p = threadIdx.x; p < length; p += blockDim.x) {
            write_slice<Store>(t, to.base + p * to.step, 0.0);
          }
        }
        break;
      }
      const el::SplitLevel level = el::split_level_of(mu, bits);
      // A copy in registers: the slice stores (through unsigned char) could alias targets[s].
      const SliceTarget t = s < stored ? targets[s] : SliceTarget{};
      const SliceVector to = slice_vector(t, rows, v);
      if (s < stored && threadIdx.x == 0) t.exponents[v] = level.unit;
      // Splits every element of the vector by `split` and returns the largest finite magnitude
      // of the new remainder (this thread's share).
      const auto pass = [&](const auto& split) {
        std::uint64_t next = 0;
        for (std::int64_t p = threadIdx.x; p < length; p += blockDim.x) {
          double& r = remainder(p);
          const double q = split(r);
          if (s < stored) write_slice<Store>(t, to.base + p * to.step, q);
          const std::uint64_t m = fp64::finite_magnitude(fp64::bits(r));
          next = m > next ? m : next;
        }
        return next;
      };
      std::uint64_t next;
      if (el::is_normal(level)) {
        const el::NormalSplitLevel normal = el::normal_level(level);
        next = pass([&](double& r) { return el::split_normal_element(r, normal); });
      } else {
        next = pass([&](double& r) { return el::split_element(r, level); });
      }
      mu = block_max(next, slots);
    }
    if (after == levels + 1 && mu == 0) after = levels;
    if constexpr (InShared) {
      for (std::int64_t p = threadIdx.x; p < length; p += blockDim.x) {
        *x.fp64_at(rows ? v : p, rows ? p : v) = work[p];
      }
    }
    if (threadIdx.x == 0) atomicMax(zero_after, after);
  }
}

template <SliceStore Store>
void launch_split(const DeviceReal& x, bool rows, int bits, int levels, const SliceTarget* targets,
                  int stored, int* zero_after) {
  const std::int64_t vectors = rows ? x.rows : x.cols, length = rows ? x.cols : x.rows;
  int device = 0, shared_limit = 0;
  TCEMU_CUDA_CHECK(cudaGetDevice(&device));
  TCEMU_CUDA_CHECK(
      cudaDeviceGetAttribute(&shared_limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const auto vector_bytes = static_cast<std::size_t>(length) * sizeof(double);
  const auto grid = static_cast<unsigned>(std::min<std::int64_t>(vectors, 1 << 16));
  // Room for the static reduction slots besides the vector.
  if (vector_bytes + 1024 <= static_cast<std::size_t>(shared_limit)) {
    TCEMU_CUDA_CHECK(cudaFuncSetAttribute(split_kernel<Store, true>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(vector_bytes)));
    split_kernel<Store, true>
        <<<grid, kSplitThreads, vector_bytes>>>(x, rows, bits, levels, targets, stored, zero_after);
  } else {
    split_kernel<Store, false>
        <<<grid, kSplitThreads>>>(x, rows, bits, levels, targets, stored, zero_after);
  }
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

// ---- all_zero ----------------------------------------------------------------------------------

__global__ void nonzero_kernel(const DeviceReal x, unsigned* found) {
  for_each_element(x.rows, x.cols, x.row_major, [&](std::int64_t i, std::int64_t j) {
    if (fp64::finite_magnitude(x.raw(i, j)) != 0) *found = 1;
  });
}

// ---- accumulate_scaled -------------------------------------------------------------------------

constexpr int kMaxLayers = 64;  // products per launch (1 KiB of the kernel parameter space)

struct Layers {
  LayerExponents scale[kMaxLayers];
};

constexpr int kLoadBatch = 8;           // products loaded before they are added
constexpr unsigned kOuterBlocks = 512;  // block rows of an accumulate launch

// A product's element as stored: float for fp32 products, double otherwise.
template <bool Fp32Products>
using ProductElement = std::conditional_t<Fp32Products, float, double>;

// One term of the sum: accumulate_element, or for fp32 products accumulate_binary32_term (the
// kernel canonicalises the finished sum once).
template <bool Fp32Products>
__device__ double add_term(double sum, ProductElement<Fp32Products> p, std::int32_t shift,
                           bool overwrite) {
  if constexpr (Fp32Products) {
    // The hardware widening is exact for every finite value and Inf (a NaN's payload may differ
    // from fp64::widen's; the canonical NaN replaces it).
    return el::accumulate_binary32_term(sum, static_cast<double>(p), shift, overwrite);
  } else {
    return el::accumulate_element(sum, p, shift, overwrite);
  }
}

// Each thread adds into Width consecutive elements of dst along its contiguous dimension (a
// pack: one vector load or store for all of them). A batch of layers' products is loaded
// (independent loads in flight at once) before they are added in layer order, so a thread waits
// for memory once per batch. Every layer has first's shape, layout and leading dimension, so the
// pack's address moves by `stride` from layer to layer. Shifts are sums of four int32 exponents
// of magnitude below 2^12, so int32 holds them.
template <bool Fp32Products, int Width>
__global__ void accumulate_kernel(const DeviceReal first, const std::size_t stride, const int count,
                                  const Layers layers, const LayerExponents base,
                                  const DeviceReal dst, const bool overwrite) {
  using Element = ProductElement<Fp32Products>;
  struct alignas(sizeof(Element) * Width) Products {
    Element v[Width];
  };
  struct alignas(sizeof(double) * Width) Sums {
    double v[Width];
  };
  const bool row_major = dst.row_major;
  const std::int64_t packs_rows = row_major ? dst.rows : dst.rows / Width;
  const std::int64_t packs_cols = row_major ? dst.cols / Width : dst.cols;
  for_each_element(packs_rows, packs_cols, row_major, [&](std::int64_t pi, std::int64_t pj) {
    const std::int64_t i = row_major ? pi : pi * Width, j = row_major ? pj * Width : pj;
    // Element w of the pack is (i + wi, j + wj).
    const auto row = [&](int w) { return i + (row_major ? 0 : w); };
    const auto column = [&](int w) { return j + (row_major ? w : 0); };
    Sums* d = reinterpret_cast<Sums*>(dst.fp64_at(i, j));
    const unsigned char* element =
        first.data + static_cast<std::size_t>(first.index(i, j)) * sizeof(Element);
    std::int32_t base_shift[Width];
#pragma unroll
    for (int w = 0; w < Width; ++w) base_shift[w] = base.rows[row(w)] + base.columns[column(w)];
    Sums sum = overwrite ? Sums{} : *d;
    int l = 0;
    const auto add_batch = [&](auto size) {
      constexpr int kBatch = decltype(size)::value;
      Products p[kBatch];
      std::int32_t shift[kBatch][Width];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        p[b] = *reinterpret_cast<const Products*>(element);
        element += stride;
        const LayerExponents& e = layers.scale[l + b];
#pragma unroll
        for (int w = 0; w < Width; ++w) {
          shift[b][w] = e.rows[row(w)] + e.columns[column(w)] - base_shift[w];
        }
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
#pragma unroll
        for (int w = 0; w < Width; ++w) {
          sum.v[w] =
              add_term<Fp32Products>(sum.v[w], p[b].v[w], shift[b][w], overwrite && l + b == 0);
        }
      }
      l += kBatch;
    };
    while (l + kLoadBatch <= count) add_batch(std::integral_constant<int, kLoadBatch>{});
    while (l < count) add_batch(std::integral_constant<int, 1>{});
    if constexpr (Fp32Products) {
#pragma unroll
      for (int w = 0; w < Width; ++w) sum.v[w] = fp64::canonical(sum.v[w]);
    }
    *d = sum;
  });
}

// ---- exact_sum ---------------------------------------------------------------------------------

constexpr int kSumThreads = 128;

__global__ void __launch_bounds__(kSumThreads)
    exact_sum_kernel(const DeviceReal first, const std::size_t stride, const std::int64_t count,
                     const LayerExponents scale, const DeviceReal dst) {
  // Limb l of thread t at [l * kSumThreads + t]: a thread's limbs share one bank, no conflicts.
  __shared__ std::uint64_t limbs[Binary64Accumulator<>::kLimbs * kSumThreads];
  const StridedLimbs mine{limbs + threadIdx.x, kSumThreads};
  for_each_element(dst.rows, dst.cols, dst.row_major, [&](std::int64_t i, std::int64_t j) {
    el::ExactSum<StridedLimbs> sum(mine);
    for (std::int64_t l = 0; l < count; ++l) sum.add(*first.layer(l, stride).fp64_at(i, j));
    *dst.fp64_at(i, j) = sum.round(std::int64_t{scale.rows[i]} + scale.columns[j]);
  });
}

// ---- epilogue ----------------------------------------------------------------------------------

// flags[offset + v] = 1 where vector v of x (its row when `rows`, else its column) holds a NaN or
// an Inf. The epilogue's flags: rows of a at 0, columns of b at a.rows.
__global__ void flag_kernel(const DeviceReal x, const bool rows, const std::int64_t offset,
                            unsigned* flags) {
  for_each_element(x.rows, x.cols, x.row_major, [&](std::int64_t i, std::int64_t j) {
    if (!fp64::is_finite(fp64::bits(x.get(i, j)))) flags[offset + (rows ? i : j)] = 1;
  });
}

__global__ void epilogue_kernel(const DeviceReal v, const bool has_v, const LayerExponents scale,
                                const double alpha, const double beta, const DeviceReal c,
                                const DeviceReal a, const DeviceReal b, const unsigned* flags,
                                const DeviceReal out) {
  for_each_element(out.rows, out.cols, out.row_major, [&](std::int64_t i, std::int64_t j) {
    const double c_ij = beta == 0.0 ? 0.0 : c.get(i, j);
    if (!has_v) {
      out.set_bits(i, j, el::output_bits(el::epilogue_without_value(beta, c_ij), out.fp64));
      return;
    }
    double s = v.get(i, j);
    if (scale.rows != nullptr) s = fp64::scale(s, std::int64_t{scale.rows[i]} + scale.columns[j]);
    if (flags != nullptr && (flags[i] != 0 || flags[a.rows + j] != 0)) {
      NonFiniteProducts special;
      for (std::int64_t p = 0; p < a.cols; ++p) special.add(a.get(i, p), b.get(p, j));
      s = special.value();
    }
    out.set_bits(i, j, el::output_bits(blas_epilogue(alpha, s, beta, c_ij), out.fp64));
  });
}

std::size_t round_up(std::size_t x, std::size_t to) {
  return (x + to - 1) / to * to;
}

}  // namespace

void copy_real(const DeviceReal& src, const DeviceReal& dst) {
  if (src.rows == 0 || src.cols == 0) return;
  const auto tiles = [](std::int64_t n) {
    return static_cast<unsigned>(std::min<std::int64_t>((n + kTile - 1) / kTile, 65535));
  };
  copy_real_kernel<<<dim3(tiles(src.cols), tiles(src.rows)), dim3(kTile, kTileRows)>>>(src, dst);
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

std::size_t split_scratch_bytes(std::size_t stored) {
  return round_up(stored * sizeof(SliceTarget), 16) + 16;
}

int split(const DeviceReal& x, bool rows, int bits, int levels,
          std::span<const SliceTarget> targets, void* scratch) {
  if ((rows ? x.rows : x.cols) == 0) return 1;
  auto* device_targets = static_cast<SliceTarget*>(scratch);
  auto* zero_after = reinterpret_cast<int*>(static_cast<unsigned char*>(scratch) +
                                            round_up(targets.size() * sizeof(SliceTarget), 16));
  if (!targets.empty()) {
    TCEMU_CUDA_CHECK(cudaMemcpyAsync(device_targets, targets.data(),
                                     targets.size() * sizeof(SliceTarget), cudaMemcpyHostToDevice));
  }
  TCEMU_CUDA_CHECK(cudaMemsetAsync(zero_after, 0, sizeof(int)));
  // Every target of a call has one format (the slices of one datapath); binary64 stores when
  // nothing is stored.
  SliceStore store = targets.empty() ? SliceStore::binary64 : slice_store(targets.front());
  for (const SliceTarget& t : targets) {
    if (slice_store(t) != store) store = SliceStore::other;
  }
  const auto launch = [&](auto kind) {
    launch_split<decltype(kind)::value>(x, rows, bits, levels, device_targets,
                                        static_cast<int>(targets.size()), zero_after);
  };
  using enum SliceStore;
  switch (store) {
    case binary64:
      launch(std::integral_constant<SliceStore, binary64>{});
      break;
    case fp16:
      launch(std::integral_constant<SliceStore, fp16>{});
      break;
    case bf16:
      launch(std::integral_constant<SliceStore, bf16>{});
      break;
    case tf32:
      launch(std::integral_constant<SliceStore, tf32>{});
      break;
    case other:
      launch(std::integral_constant<SliceStore, other>{});
      break;
  }
  int result = 0;
  TCEMU_CUDA_CHECK(cudaMemcpy(&result, zero_after, sizeof(int), cudaMemcpyDeviceToHost));
  return result;
}

bool all_zero(const DeviceReal& x, void* scratch) {
  auto* found = static_cast<unsigned*>(scratch);
  TCEMU_CUDA_CHECK(cudaMemsetAsync(found, 0, sizeof(unsigned)));
  if (x.rows > 0 && x.cols > 0) {
    nonzero_kernel<<<elementwise_grid(x.rows, x.cols, x.row_major, kThreads), kThreads>>>(x, found);
    TCEMU_CUDA_CHECK(cudaGetLastError());
  }
  unsigned result = 0;
  TCEMU_CUDA_CHECK(cudaMemcpy(&result, found, sizeof(unsigned), cudaMemcpyDeviceToHost));
  return result == 0;
}

void accumulate_scaled(const DeviceReal& first, std::size_t stride_bytes, std::int64_t count,
                       std::span<const LayerExponents> scales, LayerExponents base,
                       const DeviceReal& dst, bool overwrite) {
  if (dst.rows == 0 || dst.cols == 0) return;
  // Pairs of elements where both matrices are laid out alike with even extents and leading
  // dimensions and aligned for the pair loads (the scheme's blocks with an even dimension).
  const std::size_t pair_bytes = 2 * (first.fp64 ? 8 : 4);
  const auto aligned_to = [](const void* p, std::size_t to) {
    return reinterpret_cast<std::uintptr_t>(p) % to == 0;
  };
  const bool pairs = first.row_major == dst.row_major &&
                     (dst.row_major ? dst.cols : dst.rows) % 2 == 0 && first.ld % 2 == 0 &&
                     dst.ld % 2 == 0 && stride_bytes % pair_bytes == 0 &&
                     aligned_to(first.data, pair_bytes) && aligned_to(dst.data, 16);
  // Launches of up to kMaxLayers products, in order: after the first, each adds to dst.
  for (std::int64_t l0 = 0; l0 < count; l0 += kMaxLayers) {
    const auto n = static_cast<int>(std::min<std::int64_t>(kMaxLayers, count - l0));
    Layers layers{};
    for (int l = 0; l < n; ++l) layers.scale[l] = scales[static_cast<std::size_t>(l0 + l)];
    DeviceReal from = first;
    from.data += static_cast<std::size_t>(l0) * stride_bytes;
    const auto kernel = first.fp64
                            ? (pairs ? accumulate_kernel<false, 2> : accumulate_kernel<false, 1>)
                            : (pairs ? accumulate_kernel<true, 2> : accumulate_kernel<true, 1>);
    const int width = pairs ? 2 : 1;
    dim3 grid = dst.row_major ? elementwise_grid(dst.rows, dst.cols / width, true, kThreads)
                              : elementwise_grid(dst.rows / width, dst.cols, false, kThreads);
    // Each block visits several vectors of the outer dimension at one place along the inner
    // one, so the exponents along the inner dimension (a thread's row exponents of every layer,
    // in column-major order) come from L1 after the first vector instead of from L2.
    grid.y = std::min(grid.y, kOuterBlocks);
    kernel<<<grid, kThreads>>>(from, stride_bytes, n, layers, base, dst, overwrite && l0 == 0);
    TCEMU_CUDA_CHECK(cudaGetLastError());
  }
}

void exact_sum(const DeviceReal& first, std::size_t stride_bytes, std::int64_t count,
               LayerExponents scale, const DeviceReal& dst) {
  if (dst.rows == 0 || dst.cols == 0) return;
  exact_sum_kernel<<<elementwise_grid(dst.rows, dst.cols, dst.row_major, kSumThreads),
                     kSumThreads>>>(first, stride_bytes, count, scale, dst);
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

void epilogue(const DeviceReal* v, LayerExponents scale, double alpha, double beta,
              const DeviceReal* c, const DeviceReal* a, const DeviceReal* b, const DeviceReal& out,
              void* scratch) {
  if (out.rows == 0 || out.cols == 0) return;
  unsigned* flags = nullptr;
  if (v != nullptr && a != nullptr) {
    flags = static_cast<unsigned*>(scratch);
    TCEMU_CUDA_CHECK(
        cudaMemsetAsync(flags, 0, static_cast<std::size_t>(a->rows + b->cols) * sizeof(unsigned)));
    if (a->rows > 0 && a->cols > 0) {
      flag_kernel<<<elementwise_grid(a->rows, a->cols, a->row_major, kThreads), kThreads>>>(
          *a, true, 0, flags);
      TCEMU_CUDA_CHECK(cudaGetLastError());
    }
    if (b->rows > 0 && b->cols > 0) {
      flag_kernel<<<elementwise_grid(b->rows, b->cols, b->row_major, kThreads), kThreads>>>(
          *b, false, a->rows, flags);
      TCEMU_CUDA_CHECK(cudaGetLastError());
    }
  }
  const DeviceReal none{nullptr, 0, 0, 1, false, true};
  epilogue_kernel<<<elementwise_grid(out.rows, out.cols, out.row_major, kThreads), kThreads>>>(
      v ? *v : none, v != nullptr, scale, alpha, beta, c ? *c : none, a ? *a : none, b ? *b : none,
      flags, out);
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tcemu::gpu::detail
