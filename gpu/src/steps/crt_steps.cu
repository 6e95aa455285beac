#include "steps/crt_steps.hpp"

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include <tcemu/backend/crt_moduli.hpp>
#include <tcemu/backend/crt_reconstruction.hpp>
#include <tcemu/backend/crt_residues.hpp>
#include <tcemu/backend/crt_scaling.hpp>

#include "cuda_check.hpp"
#include "device_matrix.hpp"
#include "grid_loop.cuh"
#include "steps/integer_gemm_steps.hpp"
#include "transposing_tiles.cuh"

namespace tcemu::gpu::detail {
namespace {

namespace el = crt_elements;

constexpr int kThreads = 256;

// One block per vector (grid-stride): the block's VectorBits by a shared-memory reduction, the
// shift written by thread 0, the exact bits folded into bits[0] by atomicMax and an Inf or NaN
// into bits[1] (set to 1).
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
    if (mine.nonfinite) bits[1] = 1;
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
// none: the slots start zeroed); scale_finish_kernel turns the slots into shifts. An Inf or NaN
// sets bits[1] to 1.
constexpr int kBias = 1 << 20;

__global__ void __launch_bounds__(kThreads)
    scale_across_kernel(const DeviceReal x, const bool rows, const std::int64_t chunk, int* slots,
                        int* bits) {
  const std::int64_t vectors = rows ? x.rows : x.cols, length = rows ? x.cols : x.rows;
  const std::int64_t v = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x;
  if (v >= vectors) return;
  const std::int64_t begin = blockIdx.y * chunk, end = min(length, begin + chunk);
  el::VectorBits mine;
  for (std::int64_t p = begin; p < end; ++p) mine.add(rows ? x.get(v, p) : x.get(p, v));
  if (mine.nonfinite) bits[1] = 1;
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

// The norm scaling's MagnitudeSums of each vector v at its bound shift, each thread's partial
// sums added (and maxed) atomically into sum[v], squares[v], largest[v] (zeroed before): integer
// operations, so the totals do not depend on their order. Contiguous vectors: one block per
// vector (grid-stride); across x's layout: a thread per vector and chunk (neighbouring threads on
// neighbouring vectors, coalesced).
struct NormSums {
  unsigned long long* sum;
  unsigned long long* squares;
  unsigned long long* largest;
};

__device__ void fold_norm_sums(const el::MagnitudeSums& mine, std::int64_t v, const NormSums& to) {
  if (mine.squares == 0) return;
  atomicAdd(&to.sum[v], static_cast<unsigned long long>(mine.sum));
  atomicAdd(&to.squares[v], static_cast<unsigned long long>(mine.squares));
  atomicMax(&to.largest[v], static_cast<unsigned long long>(mine.largest));
}

__global__ void __launch_bounds__(kThreads)
    norm_sums_kernel(const DeviceReal x, const bool rows, const std::int32_t* bound_shifts,
                     const NormSums sums) {
  const std::int64_t vectors = rows ? x.rows : x.cols, length = rows ? x.cols : x.rows;
  for (std::int64_t v = blockIdx.x; v < vectors; v += gridDim.x) {
    const int shift = bound_shifts[v];
    el::MagnitudeSums mine;
    for (std::int64_t p = threadIdx.x; p < length; p += blockDim.x) {
      mine.add(rows ? x.get(v, p) : x.get(p, v), shift);
    }
    fold_norm_sums(mine, v, sums);
  }
}

__global__ void __launch_bounds__(kThreads)
    norm_sums_across_kernel(const DeviceReal x, const bool rows, const std::int64_t chunk,
                            const std::int32_t* bound_shifts, const NormSums sums) {
  const std::int64_t vectors = rows ? x.rows : x.cols, length = rows ? x.cols : x.rows;
  const std::int64_t v = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x;
  if (v >= vectors) return;
  const int shift = bound_shifts[v];
  const std::int64_t begin = blockIdx.y * chunk, end = min(length, begin + chunk);
  el::MagnitudeSums mine;
  for (std::int64_t p = begin; p < end; ++p) mine.add(rows ? x.get(v, p) : x.get(p, v), shift);
  fold_norm_sums(mine, v, sums);
}

// Where norm_finish_kernel writes the VectorNorm fields (null pointers: not asked for).
struct NormTargets {
  std::int32_t* rho;
  std::int32_t* log2_norm1;
  std::int32_t* top;
};

__global__ void __launch_bounds__(kThreads)
    norm_finish_kernel(const NormSums sums, const std::int64_t vectors, const int gamma,
                       std::int32_t* shifts, const NormTargets norms) {
  for (std::int64_t v = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x; v < vectors;
       v += static_cast<std::int64_t>(gridDim.x) * kThreads) {
    el::MagnitudeSums all;
    all.sum = sums.sum[v];
    all.squares = sums.squares[v];
    all.largest = sums.largest[v];
    const el::VectorNorm n = el::vector_norm(all, shifts[v]);
    shifts[v] = el::norm_shift(n, gamma);
    if (norms.rho != nullptr) {
      norms.rho[v] = n.rho;
      norms.log2_norm1[v] = n.log2_norm1;
      norms.top[v] = n.top;
    }
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

// Stores residues r of `valid` (<= W) elements into target l: elements o, p0 .. p0 + valid - 1
// in the order of the targets' layout (o the outer index, p along their contiguous dimension;
// row i = o, column j = p when out_rows). Packed (every target in that layout with the same
// leading dimension, a multiple of 4, and its data 4-byte aligned; W = 4): a full group as one
// 4-byte store at packed_at = o ld + p0, the same offset in every target.
template <int W, bool Packed>
__device__ void store_target(const ResidueTargets& targets, const int l, const int (&r)[W],
                             const bool out_rows, const std::int64_t o, const std::int64_t p0,
                             const int valid, const std::int64_t packed_at) {
  if constexpr (Packed && W == 4) {
    if (valid == W) {
      *reinterpret_cast<char4*>(targets.data[l] + packed_at) =
          make_char4(static_cast<signed char>(r[0]), static_cast<signed char>(r[1]),
                     static_cast<signed char>(r[2]), static_cast<signed char>(r[3]));
      return;
    }
  }
#pragma unroll
  for (int w = 0; w < W; ++w) {
    if (w >= valid) break;
    const std::int64_t i = out_rows ? o : p0 + w, j = out_rows ? p0 + w : o;
    const std::int64_t at = targets.row_major[l] ? i * targets.ld[l] + j : j * targets.ld[l] + i;
    targets.data[l][at] = static_cast<std::int8_t>(r[w]);
  }
}

// 2^e mod m for the l-th modulus of kModuli (crt_elements::power_residues).
__device__ const el::PowerResidues kPowerResidues = el::power_residues();

// How a group of elements takes its residues: none has a power (residue_256, residue_odd), the
// largest power is below kTablePowers (table_chunk_sum, the weights read through the read-only
// cache), or above (residue, 2^power mod m computed: only for shifts the scheme never takes).
enum class Powers { none, table, computed };

// crt_elements::residue for every target: target 0 is modulus 256 (crt_residues takes the moduli
// in crt_elements::kModuli's order), every later one odd, each computed once for the W elements.
template <int W, bool Packed, Powers P>
__device__ void store_all_targets(const ResidueTargets& targets,
                                  const el::ResidueChunks (&chunks)[W], const bool out_rows,
                                  const std::int64_t o, const std::int64_t p0, const int valid) {
  static_assert(el::kModuli[0] == 256);
  // In registers: the stores below may alias shared memory for all the compiler knows.
  const int count = targets.count;
  const std::int64_t packed_at = o * targets.ld[0] + p0;
  int first[W];
#pragma unroll
  for (int w = 0; w < W; ++w) {
    if constexpr (P == Powers::none) {
      first[w] = el::residue_256(chunks[w]);
    } else if constexpr (P == Powers::table) {
      first[w] = static_cast<std::int8_t>(el::table_chunk_sum(chunks[w], kPowerResidues.of[0]));
    } else {
      first[w] = el::residue(chunks[w], targets.moduli[0]);
    }
  }
  store_target<W, Packed>(targets, 0, first, out_rows, o, p0, valid, packed_at);
  for (int l = 1; l < count; ++l) {
    const el::Modulus d = targets.moduli[l];
    int r[W];
#pragma unroll
    for (int w = 0; w < W; ++w) {
      if constexpr (P == Powers::none) {
        r[w] = el::residue_odd(chunks[w], d);
      } else if constexpr (P == Powers::table) {
        r[w] = el::reduce_odd(el::table_chunk_sum(chunks[w], kPowerResidues.of[l]), d);
      } else {
        r[w] = el::residue(chunks[w], d);
      }
    }
    store_target<W, Packed>(targets, l, r, out_rows, o, p0, valid, packed_at);
  }
}

template <int W, bool Packed>
__device__ void store_residues(const ResidueTargets& targets, const el::ResidueChunks (&chunks)[W],
                               const bool out_rows, const std::int64_t o, const std::int64_t p0,
                               const int valid) {
  int top = 0;
#pragma unroll
  for (int w = 0; w < W; ++w) top = w < valid ? max(top, chunks[w].power) : top;
  if (top == 0) {
    store_all_targets<W, Packed, Powers::none>(targets, chunks, out_rows, o, p0, valid);
  } else if (top < el::kTablePowers) {
    store_all_targets<W, Packed, Powers::table>(targets, chunks, out_rows, o, p0, valid);
  } else {
    store_all_targets<W, Packed, Powers::computed>(targets, chunks, out_rows, o, p0, valid);
  }
}

// The chunks (crt_elements::residue_chunks) of `valid` (<= W) elements o, p0 .. p0 + valid - 1 in
// the residues' coordinates, element(w) the value of the w-th, scaled by its row's (rows) or
// column's shift.
template <int W, class Element>
__device__ void scaled_chunks(el::ResidueChunks (&chunks)[W], const int valid, const bool out_rows,
                              const bool rows, const std::int64_t o, const std::int64_t p0,
                              const std::int32_t* shifts, const Element& element) {
#pragma unroll
  for (int w = 0; w < W; ++w) {
    if (w < valid) {
      const std::int64_t i = out_rows ? o : p0 + w, j = out_rows ? p0 + w : o;
      chunks[w] = el::residue_chunks(el::scaled_integer(element(w), shifts[rows ? i : j]));
    }
  }
}

// Fp64: x holds fp64 (fp32 otherwise). vectors (W = 4): x is contiguous along the residues'
// inner dimension with its data and leading dimension aligned for load_four. Measured on the H100
// at n = 16384 (docs/results/int8-ozaki.md, seventh round): one element's load at a time left
// B's residues at 1.4 TB/s.
template <int W, bool Packed, bool Fp64>
__global__ void __launch_bounds__(kThreads)
    residues_kernel(const DeviceReal x, const bool rows, const std::int32_t* shifts,
                    const ResidueTargets out, const bool vectors) {
  __shared__ ResidueTargets targets;
  stage(out, targets);
  // In the residues' order (of the first target): each element is read once but written once
  // per modulus, so the byte writes are the ones to coalesce (A's residues are row major, A
  // itself often not); W elements per thread along the contiguous dimension.
  const bool out_rows = targets.row_major[0] != 0;
  const std::int64_t inner = out_rows ? x.cols : x.rows, outer = out_rows ? x.rows : x.cols;
  for_each_element(outer, (inner + W - 1) / W, true, [&](std::int64_t o, std::int64_t g) {
    const std::int64_t p0 = g * W;
    const int valid = static_cast<int>(std::min<std::int64_t>(W, inner - p0));
    el::ResidueChunks chunks[W];
    if constexpr (W == 4) {
      if (vectors && valid == W) {
        double v[4];
        x.load_four<Fp64>(o * x.ld + p0, v);
        scaled_chunks<W>(chunks, W, out_rows, rows, o, p0, shifts, [&](int w) { return v[w]; });
        store_residues<W, Packed>(targets, chunks, out_rows, o, p0, W);
        return;
      }
    }
    scaled_chunks<W>(chunks, valid, out_rows, rows, o, p0, shifts, [&](int w) {
      return out_rows ? x.get_as<Fp64>(o, p0 + w) : x.get_as<Fp64>(p0 + w, o);
    });
    store_residues<W, Packed>(targets, chunks, out_rows, o, p0, valid);
  });
}

// The same when x's layout differs from the residues' (A column major, its residues row major;
// every out[l] in one layout), through shared-memory tiles (transposing_tiles.cuh): a warp
// writes 128 contiguous bytes of every modulus's residues.
template <bool Packed, bool Fp64>
__global__ void __launch_bounds__(kThreads)
    residues_transposing_kernel(const DeviceReal x, const bool rows, const std::int32_t* shifts,
                                const ResidueTargets out) {
  __shared__ ResidueTargets targets;
  __shared__ TransposingTile tile;
  stage(out, targets);
  const bool out_rows = targets.row_major[0] != 0;
  const std::int64_t inner = out_rows ? x.cols : x.rows, outer = out_rows ? x.rows : x.cols;
  for_each_transposed_pack(
      outer, inner, tile,
      [&](std::int64_t o, std::int64_t p) {
        return out_rows ? x.get_as<Fp64>(o, p) : x.get_as<Fp64>(p, o);
      },
      [&](std::int64_t o, std::int64_t p, int valid, const auto& value) {
        el::ResidueChunks chunks[kTilePack];
        scaled_chunks<kTilePack>(chunks, valid, out_rows, rows, o, p, shifts, value);
        store_residues<kTilePack, Packed>(targets, chunks, out_rows, o, p, valid);
      });
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

// The reconstruction's layers: int8 residues, or int32 sums that it takes as they are congruent
// (sum_congruent: no reduction) as it reads them (crt_steps.hpp). Word: four consecutive
// elements of a layer, one load.
template <class Layer>
using LayerWord = std::conditional_t<sizeof(Layer) == 1, char4, int4>;

template <class Layer>
__device__ int layer_value(int v, const el::Modulus& m) {
  if constexpr (sizeof(Layer) == 1) {
    return v;
  } else {
    return el::sum_congruent(v, m);
  }
}

// The binary64 results of `valid` (<= W) elements i0 .. i0 + valid - 1 of column j.
template <int W, int L>
__device__ void store_rounded(const el::Table& table, const el::CrtSum<L> (&sums)[W],
                              const std::int64_t i0, const std::int64_t j, const int valid,
                              const std::int32_t* row_shifts, const std::int32_t* col_shifts,
                              const DeviceReal& dst) {
#pragma unroll
  for (int w = 0; w < W; ++w) {
    if (w < valid) {
      *dst.fp64_at(i0 + w, j) =
          el::round_crt_sum<L>(table, sums[w], std::int64_t{row_shifts[i0 + w]} + col_shifts[j]);
    }
  }
}

// How many layer words a thread of reconstruct_streaming_kernel keeps in flight (32 KiB of
// shared memory a block for int32 sums). On the H200 at n = 16384 (tenth round in
// docs/results/int8-ozaki.md) the streaming took the 4-limb int32-sum kernel from 9.7-10.0 ms to
// 9.1-9.7; it is issue-bound (Nsight: issue slots 67% busy, DRAM 55%), and the sums taken
// without a reduction (sum_congruent) took it to 8.3-9.1.
constexpr int kRing = 8;

// The packed reconstruction (the layers' start aligned to a word, their leading dimension a
// multiple of 4 and stride a multiple of a word): a thread sums four elements down a column of
// dst (column major for the fast order), layer by layer, its next kRing layers' words on their
// way (asynchronous copies into the thread's own slots of a shared-memory ring: the copy of the
// (k + kRing)-th word of the thread's sequence of groups and layers is issued after the k-th is
// summed, so the slot is free and kRing - 1 copies stay in flight, across groups). A group cut
// by the last row loads only its rows (the copy fills the rest with zeros). The table's entries
// for a modulus are read once for the four elements (CrtSum::add).
template <int L, class Layer>
__global__ void __launch_bounds__(kThreads)
    reconstruct_streaming_kernel(const Layer* first, const std::size_t stride,
                                 const std::int64_t ld, const el::Table table,
                                 const std::int32_t* row_shifts, const std::int32_t* col_shifts,
                                 const DeviceReal dst) {
  using Word = LayerWord<Layer>;
  __shared__ el::Table staged;
  __shared__ Word ring[kRing][kThreads];
  stage(table, staged);
  const int count = staged.count;
  const std::int64_t groups = (dst.rows + 3) / 4;
  // The next word to load: layer load_layer of the group at `load` (its layer 0 at load_at).
  ElementCursor load(groups, dst.cols, false), sum = load;
  int load_layer = 0, load_rows = 0;
  const unsigned char* load_at = nullptr;
  const auto aim = [&] {
    if (!load.valid()) return;
    const std::int64_t i0 = load.i() * 4;
    load_rows = static_cast<int>(std::min<std::int64_t>(4, dst.rows - i0));
    load_at = reinterpret_cast<const unsigned char*>(first + load.j() * ld + i0);
  };
  // One commit a call, empty past the thread's last group: wait_prior counts commits.
  const auto issue = [&](int slot) {
    if (load.valid()) {
      if (load_rows == 4) {
        __pipeline_memcpy_async(&ring[slot][threadIdx.x], load_at, sizeof(Word));
      } else {
        __pipeline_memcpy_async(&ring[slot][threadIdx.x], load_at, sizeof(Word),
                                (4 - load_rows) * sizeof(Layer));
      }
      load_at += stride;
      if (++load_layer == count) {
        load_layer = 0;
        load.advance();
        aim();
      }
    }
    __pipeline_commit();
  };
  aim();
  for (int slot = 0; slot < kRing; ++slot) issue(slot);
  int slot = 0;
  for (; sum.valid(); sum.advance()) {
    el::CrtSum<L> sums[4];
    for (int l = 0; l < count; ++l) {
      __pipeline_wait_prior(kRing - 1);
      const Word word = ring[slot][threadIdx.x];
      const el::Modulus& m = staged.moduli[l];
      sums[0].add(staged, l, layer_value<Layer>(word.x, m));
      sums[1].add(staged, l, layer_value<Layer>(word.y, m));
      sums[2].add(staged, l, layer_value<Layer>(word.z, m));
      sums[3].add(staged, l, layer_value<Layer>(word.w, m));
      issue(slot);  // after the sums: the slot is read
      slot = slot + 1 == kRing ? 0 : slot + 1;
    }
    const std::int64_t i0 = sum.i() * 4;
    store_rounded<4>(staged, sums, i0, sum.j(),
                     static_cast<int>(std::min<std::int64_t>(4, dst.rows - i0)), row_shifts,
                     col_shifts, dst);
  }
}

// Layers that allow no packed word (an unaligned start, leading dimension or stride) or more
// limbs than four elements' sums fit in registers: W elements per thread down a column of dst,
// kLoadBatch layers' loads in flight before they are summed. Int8 residues in batches of 8,
// int32 sums in batches of 4 (76 registers: H100, seventh round).
template <class Layer>
constexpr int kLoadBatch = sizeof(Layer) == 1 ? 8 : 4;

template <int B, int W, int L, class Layer>
__device__ void add_layer_elements(const el::Table& table, const Layer* at,
                                   const std::size_t stride, const int first, const int valid,
                                   el::CrtSum<L> (&sums)[W]) {
  int values[B][W];
#pragma unroll
  for (int b = 0; b < B; ++b) {
    const auto* layer = reinterpret_cast<const Layer*>(reinterpret_cast<const unsigned char*>(at) +
                                                       (first + b) * stride);
#pragma unroll
    for (int w = 0; w < W; ++w) values[b][w] = w < valid ? layer[w] : 0;
  }
#pragma unroll
  for (int b = 0; b < B; ++b) {
#pragma unroll
    for (int w = 0; w < W; ++w) {
      if (w < valid) {
        sums[w].add(table, first + b, layer_value<Layer>(values[b][w], table.moduli[first + b]));
      }
    }
  }
}

template <int L, int W, class Layer>
__global__ void __launch_bounds__(kThreads)
    reconstruct_kernel(const Layer* first, const std::size_t stride, const std::int64_t ld,
                       const el::Table table, const std::int32_t* row_shifts,
                       const std::int32_t* col_shifts, const DeviceReal dst) {
  __shared__ el::Table staged;
  stage(table, staged);
  for_each_element((dst.rows + W - 1) / W, dst.cols, false, [&](std::int64_t g, std::int64_t j) {
    const std::int64_t i0 = g * W;
    const int valid = static_cast<int>(std::min<std::int64_t>(W, dst.rows - i0));
    const Layer* at = first + j * ld + i0;
    el::CrtSum<L> sums[W];
    constexpr int kBatch = kLoadBatch<Layer>;
    int l = 0;
    for (; l + kBatch <= staged.count; l += kBatch) {
      add_layer_elements<kBatch, W>(staged, at, stride, l, valid, sums);
    }
    for (; l < staged.count; ++l) add_layer_elements<1, W>(staged, at, stride, l, valid, sums);
    store_rounded<W>(staged, sums, i0, j, valid, row_shifts, col_shifts, dst);
  });
}

// Packed layers up to 8 limbs (the scheme's int32 sums, crt_scheme.cpp): streamed, four
// elements a thread; otherwise four elements a thread up to 6 limbs, one beyond (registers). For
// 7 int8 limbs the one-element kernel is no faster than the streamed one (H200, n = 16384,
// eleventh round in docs/results/int8-ozaki.md: cr's summation phase 24.2-26.1 ms at 3 or 4
// blocks a multiprocessor against 23.4 streamed).
template <int L, class Layer>
void launch_reconstruct(const IntegerMatrixStack& layers, const el::Table& table,
                        const OuterExponents& shifts, const DeviceReal& out) {
  const auto* first = reinterpret_cast<const Layer*>(
      static_cast<const unsigned char*>(layers.first.buffer->address()) +
      layers.first.offset_bytes);
  const std::int32_t* rows = device_exponents(shifts.rows);
  const std::int32_t* cols = device_exponents(shifts.columns);
  constexpr std::size_t kWord = sizeof(LayerWord<Layer>);
  if constexpr (L <= 8) {
    if (reinterpret_cast<std::uintptr_t>(first) % kWord == 0 && layers.first.ld % 4 == 0 &&
        layers.stride_bytes % kWord == 0) {
      reconstruct_streaming_kernel<L, Layer>
          <<<staged_grid((out.rows + 3) / 4, out.cols, false), kThreads>>>(
              first, layers.stride_bytes, layers.first.ld, table, rows, cols, out);
      return;
    }
  }
  constexpr int W = L <= 6 ? 4 : 1;
  reconstruct_kernel<L, W, Layer>
      <<<staged_grid((out.rows + W - 1) / W, out.cols, false), kThreads>>>(
          first, layers.stride_bytes, layers.first.ld, table, rows, cols, out);
}

template <int L>
void launch_reconstruct(const IntegerMatrixStack& layers, const el::Table& table,
                        const OuterExponents& shifts, const DeviceReal& out) {
  if (layers.first.format == Integer::s32) {
    launch_reconstruct<L, std::int32_t>(layers, table, shifts, out);
  } else {
    launch_reconstruct<L, std::int8_t>(layers, table, shifts, out);
  }
}

// Whether crt_product_residues's GEMM writes int32 sums straight into dst (cuBLAS's alignment).
bool sums_in_place(const IntegerMatrix& dst) {
  const std::uintptr_t at =
      reinterpret_cast<std::uintptr_t>(dst.buffer->address()) + dst.offset_bytes;
  return dst.format == Integer::s32 && dst.ld % 4 == 0 && at % 4 == 0;
}

}  // namespace

std::size_t crt_scale_scratch_bytes(const RealMatrix& x, SplitAxis axis) {
  return 16 + static_cast<std::size_t>(axis == SplitAxis::rows ? x.rows : x.cols) * 8;
}

ScaleSummary crt_scale(const RealMatrix& x, SplitAxis axis, int max_bits,
                       const ExponentVector& shifts, void* scratch) {
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
    scale_across_kernel<<<grid, kThreads>>>(device_real(x), rows, chunk, slots, bits);
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
  int result[2] = {};
  TCEMU_CUDA_CHECK(cudaMemcpy(result, bits, sizeof(result), cudaMemcpyDeviceToHost));
  return {result[0], result[1] != 0};
}

std::size_t crt_norm_shifts_scratch_bytes(const RealMatrix& x, SplitAxis axis) {
  return static_cast<std::size_t>(axis == SplitAxis::rows ? x.rows : x.cols) * 24;
}

void crt_norm_shifts(const RealMatrix& x, SplitAxis axis, int gamma, const ExponentVector& shifts,
                     const VectorNorms* norms, void* scratch) {
  const bool rows = axis == SplitAxis::rows;
  const std::int64_t vectors = rows ? x.rows : x.cols, length = rows ? x.cols : x.rows;
  if (vectors == 0) return;
  auto* base = static_cast<unsigned long long*>(scratch);
  const NormSums sums{base, base + vectors, base + 2 * vectors};
  TCEMU_CUDA_CHECK(cudaMemsetAsync(base, 0, crt_norm_shifts_scratch_bytes(x, axis)));
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
  const NormTargets targets = norms == nullptr ? NormTargets{}
                                               : NormTargets{device_exponents(norms->rho),
                                                             device_exponents(norms->log2_norm1),
                                                             device_exponents(norms->top)};
  const auto blocks =
      static_cast<unsigned>(std::min<std::int64_t>((vectors + kThreads - 1) / kThreads, 4096));
  norm_finish_kernel<<<blocks, kThreads>>>(sums, vectors, gamma, out, targets);
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
  // packed: store_target's condition.
  bool one_layout = true, packed = targets.ld[0] % 4 == 0;
  for (std::size_t l = 0; l < out.size(); ++l) {
    one_layout &= (targets.row_major[l] != 0) == out_rows;
    packed &= targets.ld[l] == targets.ld[0] &&
              reinterpret_cast<std::uintptr_t>(targets.data[l]) % 4 == 0;
  }
  const bool rows = axis == SplitAxis::rows;
  const std::int32_t* s = device_exponents(shifts);
  const auto launch = [&]<bool Fp64>() {
    const std::int64_t inner = out_rows ? x.cols : x.rows, outer = out_rows ? x.rows : x.cols;
    if (in.row_major == out_rows || !one_layout) {
      if (one_layout && packed) {
        const bool vectors = in.row_major == out_rows && in.four_aligned();
        residues_kernel<4, true, Fp64><<<staged_grid(outer, (inner + 3) / 4, true), kThreads>>>(
            in, rows, s, targets, vectors);
      } else {
        residues_kernel<1, false, Fp64>
            <<<staged_grid(outer, inner, true), kThreads>>>(in, rows, s, targets, false);
      }
    } else {
      const unsigned grid = transposed_tiles_grid(outer, inner);
      if (packed) {
        residues_transposing_kernel<true, Fp64><<<grid, kThreads>>>(in, rows, s, targets);
      } else {
        residues_transposing_kernel<false, Fp64><<<grid, kThreads>>>(in, rows, s, targets);
      }
    }
  };
  if (in.fp64) {
    launch.template operator()<true>();
  } else {
    launch.template operator()<false>();
  }
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

std::size_t crt_product_residues_scratch_bytes(const IntegerMatrix& a, const IntegerMatrix& b,
                                               const IntegerMatrix& dst) {
  return sums_in_place(dst) ? integer_gemm_padding_bytes(a, b)
                            : integer_gemm_scratch_bytes(dst.rows, dst.cols, a.cols);
}

void crt_product_residues(cublasHandle_t handle, const IntegerMatrix& a, const IntegerMatrix& b,
                          int modulus, const IntegerMatrix& dst, void* scratch) {
  auto* out = static_cast<unsigned char*>(dst.buffer->address()) + dst.offset_bytes;
  if (sums_in_place(dst)) {
    integer_gemm_into(handle, a, b, reinterpret_cast<std::int32_t*>(out), dst.ld, scratch);
    return;
  }
  const std::int32_t* sums = integer_gemm_sums(handle, a, b, scratch);
  const std::int64_t sums_ld = integer_sums_ld(dst.rows);
  if (dst.format == Integer::s32) {
    TCEMU_CUDA_CHECK(cudaMemcpy2DAsync(
        out, static_cast<std::size_t>(dst.ld) * 4, sums, static_cast<std::size_t>(sums_ld) * 4,
        static_cast<std::size_t>(dst.rows) * 4, static_cast<std::size_t>(dst.cols),
        cudaMemcpyDeviceToDevice));
    return;
  }
  auto* residues = reinterpret_cast<std::int8_t*>(out);
  const el::Modulus m = el::modulus(el::kModuli[modulus]);
  const std::int64_t count = dst.rows * dst.cols;
  if (dst.ld == dst.rows && sums_ld == dst.rows && count % 4 == 0 &&
      reinterpret_cast<std::uintptr_t>(residues) % 4 == 0) {
    const auto blocks =
        static_cast<unsigned>(std::min<std::int64_t>((count / 4 + kThreads - 1) / kThreads, 8192));
    sum_residues_flat_kernel<<<blocks, kThreads>>>(reinterpret_cast<const int4*>(sums), m,
                                                   reinterpret_cast<char4*>(residues), count / 4);
  } else {
    sum_residues_kernel<<<elementwise_grid(dst.rows, dst.cols, false, kThreads), kThreads>>>(
        sums, sums_ld, m, residues, dst.ld, dst.rows, dst.cols);
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
