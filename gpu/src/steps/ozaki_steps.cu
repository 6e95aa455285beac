#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <tcemu/backend/ozaki_elements.hpp>

#include "cuda_check.hpp"
#include "grid_loop.cuh"
#include "hardware_formats.cuh"
#include "steps/ozaki_steps.hpp"

namespace tcemu::gpu::detail {
namespace {

namespace el = ozaki_elements;

constexpr int kThreads = 256;

// N elements loaded or stored by one vector access.
template <class T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

template <class T, int N>
__device__ Pack<T, N> load_pack(const void* at) {
  return *static_cast<const Pack<T, N>*>(at);
}

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
enum class SliceStore { binary64, int8, fp16, bf16, tf32, other };

SliceStore slice_store(const SliceTarget& t) {
  if (t.fp64) return SliceStore::binary64;
  if (t.int8) return SliceStore::int8;
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

// Writes the Width slice elements q (integer slice values, each exactly representable in the
// slice's format: |q| <= 2^bits, split_rule.hpp) at indices at, at + 1, ... of target t, one
// vector store where the format allows. A hardware format takes the exact conversion of q (an
// fp32 value exactly, bits <= 24), which gives slice_bits's encoding.
template <SliceStore Store, int Width>
__device__ void write_slice(const SliceTarget& t, std::int64_t at, const double (&q)[Width]) {
  if constexpr (Store == SliceStore::binary64) {
    Pack<double, Width> out;
#pragma unroll
    for (int w = 0; w < Width; ++w) out.v[w] = q[w];
    *reinterpret_cast<Pack<double, Width>*>(t.data + at * sizeof(double)) = out;
  } else if constexpr (Store == SliceStore::int8) {
    Pack<std::int8_t, Width> out;
#pragma unroll
    for (int w = 0; w < Width; ++w) out.v[w] = static_cast<std::int8_t>(q[w]);  // |q| <= 64
    *reinterpret_cast<Pack<std::int8_t, Width>*>(t.data + at) = out;
  } else if constexpr (Store == SliceStore::fp16 || Store == SliceStore::bf16 ||
                       Store == SliceStore::tf32) {
    constexpr HardwareFormat format = Store == SliceStore::fp16   ? HardwareFormat::fp16
                                      : Store == SliceStore::bf16 ? HardwareFormat::bf16
                                                                  : HardwareFormat::tf32;
    using Container =
        std::conditional_t<format == HardwareFormat::tf32, std::uint32_t, std::uint16_t>;
    Pack<Container, Width> out;
#pragma unroll
    for (int w = 0; w < Width; ++w) {
      out.v[w] = static_cast<Container>(encode_exact(static_cast<float>(q[w]), format));
    }
    *reinterpret_cast<Pack<Container, Width>*>(t.data + at * sizeof(Container)) = out;
  } else {
#pragma unroll
    for (int w = 0; w < Width; ++w) {
      const std::uint32_t bits_out = el::slice_bits(q[w], t.format);
      if (t.element_bytes == 1) {
        t.data[at + w] = static_cast<unsigned char>(bits_out);
      } else if (t.element_bytes == 2) {
        reinterpret_cast<std::uint16_t*>(t.data)[at + w] = static_cast<std::uint16_t>(bits_out);
      } else {
        reinterpret_cast<std::uint32_t*>(t.data)[at + w] = bits_out;
      }
    }
  }
}

// One block per vector (grid-stride over the vectors). The vector's remainder lives in shared
// memory (InShared) or in place in x; each thread owns the packs of Width consecutive elements
// starting at p = Width (threadIdx.x + t blockDim.x) (it alone reads and writes them, for every
// vector), so only the reductions synchronise. Width 2 needs InShared, contiguous slice vectors
// (step 1) and an even length, so that every pack is one vector access. In shared memory an Inf
// or NaN element is held as +0, which a level splits into a +0 slice element and leaves +0 (the
// slice and the largest magnitude of a non-finite element's), and x keeps its own. One pass over
// the vector per level: it splits every element and takes the largest magnitude of the new
// remainder, the next level's mu (as LeadingMagnitude, all that split_level_of reads).
// zero_after receives the largest count of levels after which a vector is zero (Backend::split's
// result).
template <SliceStore Store, bool InShared, int Width>
__global__ void __launch_bounds__(kSplitThreads)
    split_kernel(const DeviceReal x, const bool rows, const int bits, const int levels,
                 const SliceTarget* targets, const int stored, int* zero_after) {
  static_assert(Width == 1 || InShared);
  extern __shared__ double work[];
  __shared__ std::uint64_t slots[33];
  const std::int64_t vectors = rows ? x.rows : x.cols, length = rows ? x.cols : x.rows;
  const auto finite_or_zero = [](double v) { return fp64::is_finite(fp64::bits(v)) ? v : 0.0; };
  for (std::int64_t v = blockIdx.x; v < vectors; v += gridDim.x) {
    const auto x_at = [&](std::int64_t p) -> double& {
      return *x.fp64_at(rows ? v : p, rows ? p : v);
    };
    // The remainder of the pack at p, read and written back.
    const auto load = [&](std::int64_t p, double(&r)[Width]) {
      if constexpr (InShared) {
        const auto in = load_pack<double, Width>(work + p);
#pragma unroll
        for (int w = 0; w < Width; ++w) r[w] = in.v[w];
      } else {
        r[0] = x_at(p);
      }
    };
    const auto store = [&](std::int64_t p, const double(&r)[Width]) {
      if constexpr (InShared) {
        Pack<double, Width> out;
#pragma unroll
        for (int w = 0; w < Width; ++w) out.v[w] = r[w];
        *reinterpret_cast<Pack<double, Width>*>(work + p) = out;
      } else {
        x_at(p) = r[0];
      }
    };
    const std::int64_t first = Width * threadIdx.x, step = Width * blockDim.x;
    el::LeadingMagnitude largest;
    bool special = false;  // an Inf or NaN in the vector
    for (std::int64_t p = threadIdx.x; p < length; p += blockDim.x) {
      const double x_p = x_at(p), finite = finite_or_zero(x_p);
      special = special || !fp64::is_finite(fp64::bits(x_p));
      if constexpr (InShared) work[p] = finite;
      largest.add(finite);
    }
    std::uint64_t mu = block_max(largest.value(), slots);
    int after = levels + 1;
    for (int s = 0; s < levels; ++s) {
      if (mu == 0) {  // zero before level s + 1: this and every later level stores zeros
        after = s > 1 ? s : 1;
        const double zeros[Width] = {};
        for (int z = s; z < stored; ++z) {
          const SliceTarget t = targets[z];
          const SliceVector to = slice_vector(t, rows, v);
          if (threadIdx.x == 0) t.exponents[v] = 0;
          for (std::int64_t p = first; p < length; p += step) {
            write_slice<Store, Width>(t, to.base + p * to.step, zeros);
          }
        }
        break;
      }
      const el::SplitLevel level = el::split_level_of(mu, bits);
      // A copy in registers: the slice stores (through unsigned char) could alias targets[s].
      const SliceTarget t = s < stored ? targets[s] : SliceTarget{};
      const SliceVector to = slice_vector(t, rows, v);
      if (s < stored && threadIdx.x == 0) t.exponents[v] = level.unit;
      // Splits every element of the vector by `split` and returns this thread's share of the
      // new remainder's LeadingMagnitude.
      const auto pass = [&](const auto& split) {
        el::LeadingMagnitude next;
        for (std::int64_t p = first; p < length; p += step) {
          double r[Width], q[Width];
          load(p, r);
#pragma unroll
          for (int w = 0; w < Width; ++w) {
            q[w] = split(r[w]);
            next.add(InShared ? r[w] : finite_or_zero(r[w]));
          }
          store(p, r);
          if (s < stored) write_slice<Store, Width>(t, to.base + p * to.step, q);
        }
        return next.value();
      };
      std::uint64_t next;
      if (el::is_normal(level)) {
        const el::NormalSplitLevel normal = el::normal_level(level);
        next = InShared
                   ? pass([&](double& r) { return el::split_finite_normal_element(r, normal); })
                   : pass([&](double& r) { return el::split_normal_element(r, normal); });
      } else {
        next = pass([&](double& r) { return el::split_element(r, level); });
      }
      mu = block_max(next, slots);
    }
    if (after == levels + 1 && mu == 0) after = levels;
    if constexpr (InShared) {
      // Inf and NaN elements stay as they were in x.
      special = __syncthreads_or(special);
      for (std::int64_t p = threadIdx.x; p < length; p += blockDim.x) {
        if (!special || fp64::is_finite(fp64::bits(x_at(p)))) x_at(p) = work[p];
      }
    }
    if (threadIdx.x == 0) atomicMax(zero_after, after);
  }
}

template <SliceStore Store>
void launch_split(const DeviceReal& x, bool rows, int bits, int levels, const SliceTarget* targets,
                  bool contiguous_pairs, int stored, int* zero_after) {
  const std::int64_t vectors = rows ? x.rows : x.cols, length = rows ? x.cols : x.rows;
  int device = 0, shared_limit = 0;
  TCEMU_CUDA_CHECK(cudaGetDevice(&device));
  TCEMU_CUDA_CHECK(
      cudaDeviceGetAttribute(&shared_limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const auto vector_bytes = static_cast<std::size_t>(length) * sizeof(double);
  const auto grid = static_cast<unsigned>(std::min<std::int64_t>(vectors, 1 << 16));
  const auto in_shared = [&](auto kernel) {
    TCEMU_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(vector_bytes)));
    kernel<<<grid, kSplitThreads, vector_bytes>>>(x, rows, bits, levels, targets, stored,
                                                  zero_after);
  };
  // Room for the static reduction slots besides the vector.
  if (vector_bytes + 1024 > static_cast<std::size_t>(shared_limit)) {
    split_kernel<Store, false, 1>
        <<<grid, kSplitThreads>>>(x, rows, bits, levels, targets, stored, zero_after);
  } else if (contiguous_pairs && length % 2 == 0) {
    in_shared(split_kernel<Store, true, 2>);
  } else {
    in_shared(split_kernel<Store, true, 1>);
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

constexpr unsigned kOuterBlocks = 512;  // block rows of an accumulate launch

// A product's element as stored: float for fp32 products, double otherwise.
template <bool Fp32Products>
using ProductElement = std::conditional_t<Fp32Products, float, double>;

// Each thread adds into a pack of Width consecutive elements of dst along its contiguous
// dimension ("along"; the other is "across"), one vector load or store for all of them. The
// exponents along that dimension come as one pack per layer too, and one exponent across. A batch
// of Batch layers is loaded (independent loads in flight at once) before it is added in layer
// order, so a thread waits for memory once per batch. Every layer has first's shape, layout and
// leading dimension, so the pack's address moves by `stride` from layer to layer. An overwriting
// sum starts from -0, to which adding t gives t (accumulate_element's overwrite). Shifts are sums
// of four int32 exponents of magnitude below 2^12, so int32 holds them. fp32 products: when every
// shift of a batch keeps the scaling exact (always, but for rows or columns spanning most of
// binary64's range) each term is one fused multiply-add; the finished sum is canonicalised once.
template <bool Fp32Products, int Width, int Batch>
__global__ void __launch_bounds__(kThreads)
    accumulate_kernel(const DeviceReal first, const std::size_t stride, const int count,
                      const Layers layers, const LayerExponents base, const DeviceReal dst,
                      const bool overwrite) {
  using Element = ProductElement<Fp32Products>;
  const bool row_major = dst.row_major;
  const std::int64_t packs_rows = row_major ? dst.rows : dst.rows / Width;
  const std::int64_t packs_cols = row_major ? dst.cols / Width : dst.cols;
  const auto along_of = [&](const LayerExponents& e) { return row_major ? e.columns : e.rows; };
  const auto across_of = [&](const LayerExponents& e) { return row_major ? e.rows : e.columns; };
  for_each_element(packs_rows, packs_cols, row_major, [&](std::int64_t pi, std::int64_t pj) {
    const std::int64_t i = row_major ? pi : pi * Width, j = row_major ? pj * Width : pj;
    const std::int64_t along = row_major ? j : i, across = row_major ? i : j;
    Pack<double, Width>* d = reinterpret_cast<Pack<double, Width>*>(dst.fp64_at(i, j));
    const unsigned char* element =
        first.data + static_cast<std::size_t>(first.index(i, j)) * sizeof(Element);
    const auto base_along = load_pack<std::int32_t, Width>(along_of(base) + along);
    const std::int32_t base_across = across_of(base)[across];
    Pack<double, Width> sum;
    if (overwrite) {
#pragma unroll
      for (int w = 0; w < Width; ++w) sum.v[w] = -0.0;
    } else {
      sum = *d;
    }
    int l = 0;
    const auto add_batch = [&](auto size) {
      constexpr int kBatch = decltype(size)::value;
      Pack<Element, Width> p[kBatch];
      std::int32_t shift[kBatch][Width];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        p[b] = load_pack<Element, Width>(element);
        element += stride;
        const LayerExponents& e = layers.scale[l + b];
        const auto e_along = load_pack<std::int32_t, Width>(along_of(e) + along);
        const std::int32_t e_across = across_of(e)[across] - base_across;
#pragma unroll
        for (int w = 0; w < Width; ++w) shift[b][w] = e_along.v[w] - base_along.v[w] + e_across;
      }
      if constexpr (Fp32Products) {
        bool exact = true;
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
#pragma unroll
          for (int w = 0; w < Width; ++w) {
            exact = exact && el::binary32_scaling_is_exact(shift[b][w]);
          }
        }
        if (exact) {
#pragma unroll
          for (int b = 0; b < kBatch; ++b) {
#pragma unroll
            for (int w = 0; w < Width; ++w) {
              sum.v[w] = el::accumulate_exact_binary32_term(
                  sum.v[w], static_cast<double>(p[b].v[w]), fp64::power_of_two(shift[b][w]));
            }
          }
        } else {
#pragma unroll
          for (int b = 0; b < kBatch; ++b) {
#pragma unroll
            for (int w = 0; w < Width; ++w) {
              // The hardware widening is exact for every finite value and Inf (a NaN's payload
              // may differ from fp64::widen's; the canonical NaN replaces it).
              sum.v[w] = el::accumulate_binary32_term(sum.v[w], static_cast<double>(p[b].v[w]),
                                                      shift[b][w]);
            }
          }
        }
      } else {
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
#pragma unroll
          for (int w = 0; w < Width; ++w) {
            sum.v[w] = el::accumulate_element(sum.v[w], p[b].v[w], shift[b][w], false);
          }
        }
      }
      l += kBatch;
    };
    while (l + Batch <= count) add_batch(std::integral_constant<int, Batch>{});
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
                     const LayerExponents scale, const DeviceReal dst, const fp64::Direction d) {
  // Limb l of thread t at [l * kSumThreads + t]: a thread's limbs share one bank, no conflicts.
  __shared__ std::uint64_t limbs[Binary64Accumulator<>::kLimbs * kSumThreads];
  const StridedLimbs mine{limbs + threadIdx.x, kSumThreads};
  for_each_element(dst.rows, dst.cols, dst.row_major, [&](std::int64_t i, std::int64_t j) {
    el::ExactSum<StridedLimbs> sum(mine);
    for (std::int64_t l = 0; l < count; ++l) sum.add(*first.layer(l, stride).fp64_at(i, j));
    *dst.fp64_at(i, j) = sum.round(std::int64_t{scale.rows[i]} + scale.columns[j], d);
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
                                const DeviceReal out, const fp64::Direction d) {
  for_each_element(out.rows, out.cols, out.row_major, [&](std::int64_t i, std::int64_t j) {
    const double c_ij = beta == 0.0 ? 0.0 : c.get(i, j);
    if (!has_v) {
      out.set_bits(i, j, el::output_bits(el::epilogue_without_value(beta, c_ij), out.fp64, d));
      return;
    }
    double s = v.get(i, j);
    if (scale.rows != nullptr) s = fp64::scale(s, std::int64_t{scale.rows[i]} + scale.columns[j]);
    if (flags != nullptr && (flags[i] != 0 || flags[a.rows + j] != 0)) {
      NonfiniteProducts special;
      for (std::int64_t p = 0; p < a.cols; ++p) special.add(a.get(i, p), b.get(p, j));
      s = special.value();
    }
    out.set_bits(i, j, el::output_bits(blas_epilogue(alpha, s, beta, c_ij), out.fp64, d));
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
  // Packs of two slice elements: every target's vectors contiguous (step 1), their starts
  // (multiples of ld) even and the data aligned for a two-element store.
  bool contiguous_pairs = true;
  for (const SliceTarget& t : targets) {
    contiguous_pairs = contiguous_pairs && rows == t.row_major && t.ld % 2 == 0 &&
                       reinterpret_cast<std::uintptr_t>(t.data) % (2 * t.element_bytes) == 0;
  }
  const auto launch = [&](auto kind) {
    launch_split<decltype(kind)::value>(x, rows, bits, levels, device_targets, contiguous_pairs,
                                        static_cast<int>(targets.size()), zero_after);
  };
  using enum SliceStore;
  switch (store) {
    case binary64:
      launch(std::integral_constant<SliceStore, binary64>{});
      break;
    case int8:
      launch(std::integral_constant<SliceStore, int8>{});
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
  const auto aligned_to = [](const void* p, std::size_t to) {
    return reinterpret_cast<std::uintptr_t>(p) % to == 0;
  };
  // Packs of `width` elements where both matrices are laid out alike, the contiguous extent and
  // the leading dimensions are multiples of it, and every pack's address (products, sums and
  // the exponents along the packs) is aligned for its vector access; the scheme's blocks with
  // extents divisible by 4 take packs of 4.
  const std::size_t element_bytes = first.fp64 ? 8 : 4;
  const auto packs_fit = [&](std::int64_t width) {
    const auto w = static_cast<std::size_t>(width);
    bool fit = first.row_major == dst.row_major &&
               (dst.row_major ? dst.cols : dst.rows) % width == 0 && first.ld % width == 0 &&
               dst.ld % width == 0 && stride_bytes % (w * element_bytes) == 0 &&
               aligned_to(first.data, w * element_bytes) && aligned_to(dst.data, w * 8);
    const auto along_fits = [&](const LayerExponents& e) {
      return aligned_to(dst.row_major ? e.columns : e.rows, w * 4);
    };
    fit = fit && along_fits(base);
    for (std::int64_t l = 0; l < count && fit; ++l) {
      fit = along_fits(scales[static_cast<std::size_t>(l)]);
    }
    return fit;
  };
  const int width = !first.fp64 && packs_fit(4) ? 4 : packs_fit(2) ? 2 : 1;
  // Launches of up to kMaxLayers products, in order: after the first, each adds to dst.
  for (std::int64_t l0 = 0; l0 < count; l0 += kMaxLayers) {
    const auto n = static_cast<int>(std::min<std::int64_t>(kMaxLayers, count - l0));
    Layers layers{};
    for (int l = 0; l < n; ++l) layers.scale[l] = scales[static_cast<std::size_t>(l0 + l)];
    DeviceReal from = first;
    from.data += static_cast<std::size_t>(l0) * stride_bytes;
    const auto kernel =
        first.fp64 ? (width == 2 ? accumulate_kernel<false, 2, 8> : accumulate_kernel<false, 1, 8>)
        : width == 4 ? accumulate_kernel<true, 4, 4>
        : width == 2 ? accumulate_kernel<true, 2, 8>
                     : accumulate_kernel<true, 1, 8>;
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
               LayerExponents scale, const DeviceReal& dst, fp64::Direction d) {
  if (dst.rows == 0 || dst.cols == 0) return;
  exact_sum_kernel<<<elementwise_grid(dst.rows, dst.cols, dst.row_major, kSumThreads),
                     kSumThreads>>>(first, stride_bytes, count, scale, dst, d);
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

void epilogue(const DeviceReal* v, LayerExponents scale, double alpha, double beta,
              const DeviceReal* c, const DeviceReal* a, const DeviceReal* b, const DeviceReal& out,
              void* scratch, fp64::Direction d) {
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
      flags, out, d);
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tcemu::gpu::detail
