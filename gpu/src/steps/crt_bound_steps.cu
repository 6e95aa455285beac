// The GPU kernels of dp's bound steps (crt_steps.hpp: crt_magnitude_bound, crt_bound_need) on the
// default stream, running the element functions of crt_bounds.hpp, so the GPU backend gives
// the emulator's quanta, exponents and need.
#include "steps/crt_bound_steps.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include <tcemu/backend/crt_bounds.hpp>
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

// Each vector's BoundVector from its VectorNorm: the quantum shift into quantum_shift[v], the
// exponents into norm2 and norm1.
__global__ void __launch_bounds__(kThreads)
    bound_vector_kernel(const std::int64_t vectors, const int log2_length, const int depth,
                        const std::int32_t* rho, const std::int32_t* log2_norm1,
                        const std::int32_t* top, std::int32_t* quantum_shift, std::int32_t* norm2,
                        std::int32_t* norm1) {
  for (std::int64_t v = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x; v < vectors;
       v += static_cast<std::int64_t>(gridDim.x) * kThreads) {
    const el::BoundVector b =
        el::bound_vector(el::VectorNorm{rho[v], log2_norm1[v], top[v]}, log2_length, depth);
    quantum_shift[v] = b.quantum_shift;
    norm2[v] = b.norm2;
    norm1[v] = b.norm1;
  }
}

// The quanta of up to four consecutive elements (o, p .. p + valid - 1) of the quanta's outer
// and inner dimensions, packed into the bytes of a word, stored as one 4-byte store where the
// group is whole and aligned.
__device__ void store_quanta(const double (&value)[kTilePack], const int valid, const bool rows,
                             const bool out_rows, const std::int64_t o, const std::int64_t p,
                             const std::int32_t* quantum_shift, std::int8_t* out,
                             const std::int64_t ld) {
  std::int8_t* at = out + o * ld + p;
  std::uint32_t packed = 0;
  // Loops to the compile-time kTilePack with `valid` as a condition: value stays in registers.
#pragma unroll
  for (int w = 0; w < kTilePack; ++w) {
    if (w >= valid) break;
    // (o, p + w) is element (i, j) of x: its vector is i for rows, j for columns.
    const std::int64_t v = rows == out_rows ? o : p + w;
    const auto q = static_cast<std::uint8_t>(el::magnitude_quanta(value[w], quantum_shift[v]));
    packed |= std::uint32_t{q} << (8 * w);
  }
  if (valid == kTilePack && reinterpret_cast<std::uintptr_t>(at) % 4 == 0) {
    *reinterpret_cast<std::uint32_t*>(at) = packed;
  } else {
    for (int w = 0; w < valid; ++w) at[w] = static_cast<std::int8_t>(packed >> (8 * w));
  }
}

// In the quanta's order (x fp64, contiguous along the quanta's inner dimension): four elements a
// thread, read by two 16-byte loads where x allows them (vectors), so that a warp has 1 KB in
// flight (one element a thread read B at 1.9 TB/s on the H200 at n = 16384: eighth round).
__global__ void __launch_bounds__(kThreads)
    quanta_kernel(const DeviceReal x, const bool rows, const std::int32_t* quantum_shift,
                  std::int8_t* out, const std::int64_t ld, const bool out_rows,
                  const bool vectors) {
  const std::int64_t inner = out_rows ? x.cols : x.rows, outer = out_rows ? x.rows : x.cols;
  for_each_element(
      outer, (inner + kTilePack - 1) / kTilePack, true, [&](std::int64_t o, std::int64_t g) {
        const std::int64_t p = g * kTilePack;
        const int valid = static_cast<int>(std::min<std::int64_t>(kTilePack, inner - p));
        double value[kTilePack] = {};
        if (vectors && valid == kTilePack) {
          x.load_four<true>(o * x.ld + p, value);
        } else {
#pragma unroll
          for (int w = 0; w < kTilePack; ++w) {
            if (w >= valid) break;
            value[w] = out_rows ? x.get_as<true>(o, p + w) : x.get_as<true>(p + w, o);
          }
        }
        store_quanta(value, valid, rows, out_rows, o, p, quantum_shift, out, ld);
      });
}

// The same when x's layout differs from the quanta's (A column major, its quanta row major),
// through shared-memory tiles (transposing_tiles.cuh): a warp writes 128 contiguous bytes.
__global__ void __launch_bounds__(kThreads)
    quanta_transposing_kernel(const DeviceReal x, const bool rows,
                              const std::int32_t* quantum_shift, std::int8_t* out,
                              const std::int64_t ld, const bool out_rows) {
  __shared__ TransposingTile tile;
  const std::int64_t inner = out_rows ? x.cols : x.rows, outer = out_rows ? x.rows : x.cols;
  for_each_transposed_pack(
      outer, inner, tile,
      [&](std::int64_t o, std::int64_t p) {
        return out_rows ? x.get_as<true>(o, p) : x.get_as<true>(p, o);
      },
      [&](std::int64_t o, std::int64_t p, int valid, const auto& value) {
        double v[kTilePack] = {};
#pragma unroll
        for (int w = 0; w < kTilePack; ++w) {
          if (w < valid) v[w] = value(w);
        }
        store_quanta(v, valid, rows, out_rows, o, p, quantum_shift, out, ld);
      });
}

// What need_kernel reads of one level: its int32 sums and its exponents.
struct LevelView {
  const std::int32_t* sums;
  const std::int32_t* norm2_i;
  const std::int32_t* norm1_i;
  const std::int32_t* norm2_j;
  const std::int32_t* norm1_j;
};

// Whether dp's criterion 2^(c1 - g) + 2^(c2 - g) + 2^(c3 - 2g) <= 3P holds (crt_bounds.hpp,
// bound_need; NeedTerms n of P > 0), decided only where a floating-point test settles it: it
// fails below n.t - 2 (need_terms), and otherwise each term is 2^e in binary64 (e below -1022
// taken as -1022, which only enlarges it; no e exceeds bw + 3 <= 34 there, since c1, c2 <= t +
// bw - 1 and c3 <= 2t + bw - 1), the two additions rounded upward give an upper bound of the sum,
// and where that is at most 3P (exact in binary64) it holds. false means "not shown": the
// criterion may still hold within the rounding of 3P.
__device__ bool criterion_shown(const el::NeedTerms& n, int g, std::int32_t p) {
  if (g < n.t - 2) return false;
  const auto term = [](int e) { return fp64::power_of_two(max(e, -1022)); };
  const double sum = __dadd_ru(__dadd_ru(term(n.c1 - g), term(n.c2 - g)), term(n.c3 - 2 * g));
  return sum <= 3.0 * static_cast<double>(p);
}

// The largest over the elements of the least bound_need over the levels into *need (atomicMax of
// each block's maximum). Each thread takes four consecutive rows i0 .. i0 + 3 of the columns
// blockIdx.y, blockIdx.y + gridDim.y, ...: one 16-byte load of each level's sums per column
// where all four rows exist (the sums' ld is a multiple of 4 and each level's sums start 16-byte
// aligned: crt_bound_need), so that four elements' bytes are in flight per load; the rows'
// exponents are read once, before the columns. Measured on the H100 at m = n = 16384
// (docs/results/int8-ozaki.md, sixth round): 2.3 ms with one element a thread and each thread's
// own largest as the skip, 0.8 ms with this and the block's.
//
// An element matters only where its need exceeds g, the largest so far of the thread and its
// block, that is where dp's criterion fails at g at every level (bound_need: the need is the
// least g that meets it, and it holds at every g above one that meets it). The kernel skips an
// element where some level's upper bound t (need_terms) is at most g, then where
// criterion_shown at g for some level, and computes the need only for the rest: the records of
// the maximum and the few sums within rounding of 3P. On the H200 at m = n = 16384, k / 16 =
// 1024 terms (docs/results/int8-ozaki.md, twelfth round): 2.58 ms at phi = 0.1 when every element
// whose t exceeded g took bound_need, 1.41-1.68 ms with criterion_shown (1.00-1.15 at phi = 2).
__global__ void __launch_bounds__(kThreads)
    need_kernel(const LevelView first, const LevelView second, const int levels,
                const std::int64_t sums_ld, const std::int64_t rows, const std::int64_t cols,
                const int log2_k, int* need) {
  __shared__ int most[kThreads];
  // The largest exact need any thread of the block has found so far: an element whose need is
  // no more than it cannot raise the maximum.
  __shared__ int block_most;
  if (threadIdx.x == 0) block_most = el::kNoNeed;
  __syncthreads();
  int mine = el::kNoNeed;
  const std::int64_t i0 = 4 * (blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x);
  const int here = i0 >= rows ? 0 : rows - i0 < 4 ? static_cast<int>(rows - i0) : 4;
  // The loops over the levels and the rows run to their compile-time bounds (2, 4) with the
  // run-time ones as conditions, so that the arrays stay in registers.
  int norm2_i[2][4] = {}, norm1_i[2][4] = {};
#pragma unroll
  for (int l = 0; l < 2; ++l) {
    if (l >= levels) break;
    const LevelView& v = l == 0 ? first : second;
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      if (q >= here) break;
      norm2_i[l][q] = v.norm2_i[i0 + q];
      norm1_i[l][q] = v.norm1_i[i0 + q];
    }
  }
  for (std::int64_t j = blockIdx.y; here > 0 && j < cols; j += gridDim.y) {
    std::int32_t sums[2][4] = {};
    int norm2_j[2] = {}, norm1_j[2] = {};
#pragma unroll
    for (int l = 0; l < 2; ++l) {
      if (l >= levels) break;
      const LevelView& v = l == 0 ? first : second;
      norm2_j[l] = v.norm2_j[j];
      norm1_j[l] = v.norm1_j[j];
      const std::int32_t* column = v.sums + j * sums_ld + i0;
      if (here == 4) {
        const int4 four = *reinterpret_cast<const int4*>(column);
        sums[l][0] = four.x;
        sums[l][1] = four.y;
        sums[l][2] = four.z;
        sums[l][3] = four.w;
      } else {
#pragma unroll
        for (int q = 0; q < 3; ++q) {
          if (q < here) sums[l][q] = column[q];
        }
      }
    }
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      if (q >= here) break;
      // Each level's terms; an empty vector (no need) settles the element at once.
      el::NeedTerms terms[2] = {};
      bool settled = false, positive[2] = {};
#pragma unroll
      for (int l = 0; l < 2; ++l) {
        if (l >= levels) break;
        if (norm2_i[l][q] == el::kEmptyVector || norm2_j[l] == el::kEmptyVector) {
          settled = true;
        } else if (sums[l][q] > 0) {
          positive[l] = true;
          terms[l] = el::need_terms(sums[l][q], norm2_i[l][q], norm1_i[l][q], norm2_j[l],
                                    norm1_j[l], log2_k);
          settled = settled || terms[l].t <= mine;
        }
      }
      if (settled) continue;
      mine = max(mine, *static_cast<volatile int*>(&block_most));
#pragma unroll
      for (int l = 0; l < 2; ++l) {
        if (l >= levels) break;
        settled = settled || (positive[l] &&
                              (terms[l].t <= mine || criterion_shown(terms[l], mine, sums[l][q])));
      }
      if (settled) continue;
      int least = el::kBoundUncertified;
#pragma unroll
      for (int l = 0; l < 2; ++l) {
        if (l >= levels) break;
        least = min(least, el::bound_need(sums[l][q], norm2_i[l][q], norm1_i[l][q], norm2_j[l],
                                          norm1_j[l], log2_k));
      }
      if (least > mine) {
        mine = least;
        atomicMax(&block_most, least);
      }
    }
  }
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
  return static_cast<std::size_t>(axis == SplitAxis::rows ? x.rows : x.cols) * 4;
}

void crt_magnitude_bound(const RealMatrix& x, SplitAxis axis, int depth, const VectorNorms& norms,
                         const IntegerMatrix& out, const BoundExponents& exponents, void* scratch) {
  const bool rows = axis == SplitAxis::rows;
  const std::int64_t vectors = rows ? x.rows : x.cols, length = rows ? x.cols : x.rows;
  if (vectors == 0) return;
  auto* quantum_shift = static_cast<std::int32_t*>(scratch);
  const DeviceReal in = device_real(x);
  const int log2_length =
      length == 0 ? 0 : tcemu::detail::bit_width(static_cast<std::uint64_t>(length)) - 1;
  const auto blocks =
      static_cast<unsigned>(std::min<std::int64_t>((vectors + kThreads - 1) / kThreads, 4096));
  bound_vector_kernel<<<blocks, kThreads>>>(
      vectors, log2_length, depth, device_exponents(norms.rho), device_exponents(norms.log2_norm1),
      device_exponents(norms.top), quantum_shift, device_exponents(exponents.norm2),
      device_exponents(exponents.norm1));
  if (length > 0) {
    const bool out_rows = out.layout == Layout::row_major;
    auto* quanta = static_cast<std::int8_t*>(out.buffer->address()) + out.offset_bytes;
    if (in.row_major == out_rows) {
      const std::int64_t inner = out_rows ? x.cols : x.rows, outer = out_rows ? x.rows : x.cols;
      quanta_kernel<<<elementwise_grid(outer, (inner + kTilePack - 1) / kTilePack, true, kThreads),
                      kThreads>>>(in, rows, quantum_shift, quanta, out.ld, out_rows,
                                  in.four_aligned());
    } else {
      quanta_transposing_kernel<<<transposed_tiles_grid(out_rows ? x.rows : x.cols,
                                                        out_rows ? x.cols : x.rows),
                                  kThreads>>>(in, rows, quantum_shift, quanta, out.ld, out_rows);
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
  // Checked before any launch: `kept` and `need` below are 16-byte aligned only then.
  if (reinterpret_cast<std::uintptr_t>(scratch) % 16 != 0) {
    throw std::logic_error("gpu: crt_bound_need: the scratch is not 16-byte aligned");
  }
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
  // Four rows a thread, at most 256 block rows, so that each thread takes many elements and its
  // skip (need_kernel) spares the exact criterion for most of them. integer_gemm_sums writes
  // the sums at the start of the scratch (a device allocation, checked above) and `kept` is
  // 16-byte aligned.
  const dim3 grid(static_cast<unsigned>((m + 4 * kThreads - 1) / (4 * kThreads)),
                  static_cast<unsigned>(std::min<std::int64_t>(n, 256)));
  need_kernel<<<grid, kThreads>>>(views[0], views[1], static_cast<int>(levels.size()),
                                  integer_sums_ld(m), m, n, log2_k, need);
  TCEMU_CUDA_CHECK(cudaGetLastError());
  int result = none;
  TCEMU_CUDA_CHECK(cudaMemcpy(&result, need, sizeof(int), cudaMemcpyDeviceToHost));
  return result;
}

}  // namespace tcemu::gpu::detail
