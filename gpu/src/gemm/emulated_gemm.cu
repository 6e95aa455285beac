#include "gemm/emulated_gemm.hpp"

#include <cuda_runtime.h>

#include <algorithm>

#include <tcemu/emulator/binary64_block.hpp>
#include <tcemu/emulator/exact_block.hpp>
#include <tcemu/emulator/fp32_bits.hpp>

#include "cuda_check.hpp"
#include "gemm/gemm_epilogue.cuh"
#include "grid_loop.cuh"

namespace tcemu::gpu::detail {
namespace {

using Lanes = tcemu::detail::ScalarLanes;
using tcemu::detail::Binary64Grid;
using tcemu::detail::Binary64Operand;

constexpr int kSide = 16;                  // threads along each side of a thread block
constexpr int kPerThread = 4;              // outputs per thread along each side
constexpr int kTile = kSide * kPerThread;  // outputs along each side of a thread block
constexpr int kThreads = kSide * kSide;    // threads per block
constexpr int kStageSlots = 32;            // k slots staged at a time (rounded to blocks)
constexpr int kExactThreads = 128;         // threads per block of the exact kernel
// Operands one thread stages per stage: a stage holds at most kMaxBlockTerms slots (a whole
// number of blocks, at least kStageSlots when blocks are small) of kTile rows or columns.
constexpr int kMaxLoads = kMaxBlockTerms * kTile / kThreads;

// What both kernels need besides the datapath.
struct Problem {
  DeviceMatrix a, b;
  int m, n, k;
  int takeout_instructions;  // 0: no take-out
  // C and D and the epilogue, as the tiled kernels' store_result reads them (gemm_epilogue.cuh).
  TiledGemmArguments output;
};

// The bits an element's chain starts from: C as the initial accumulator, else +0.
__device__ std::uint32_t initial_bits(const Datapath& dp, const Problem& p, int i, int j) {
  return p.output.c_is_initial_accumulator
             ? (dp.accumulator.container_bits() == 16 ? load_accumulator<true>(p.output.c, i, j)
                                                      : load_accumulator<false>(p.output.c, i, j))
             : encode_zero(dp.accumulator, false);
}

__device__ void store(const Datapath& dp, const Problem& p, int i, int j, std::uint32_t bits) {
  if (dp.accumulator.container_bits() == 16) {
    store_result<true>(p.output, i, j, bits);
  } else {
    store_result<false>(p.output, i, j, bits);
  }
}

// One output element of the binary64 kernel between blocks, in emulated_gemm's steps: `chain`
// the running block result (exact in binary64), `d` the instruction chain's value where C enters
// after the blocks, `reg` the fp32 take-out register.
struct Element {
  double chain;
  std::uint32_t d;
  std::uint32_t reg;

  __device__ void start(const Datapath& dp, const Problem& p, std::uint32_t initial) {
    const std::uint32_t zero = encode_zero(dp.accumulator, false);
    const bool aligned = dp.c_entry == AccumulatorEntry::aligned_in_first_block;
    reg = initial;
    d = p.takeout_instructions > 0 ? zero : initial;
    chain = aligned && p.takeout_instructions == 0 ? to_double(dp.accumulator, initial) : 0.0;
  }
  // After instruction t of `instructions`.
  __device__ void end_instruction(const Datapath& dp, const Problem& p, std::int64_t t,
                                  std::int64_t instructions) {
    const bool aligned = dp.c_entry == AccumulatorEntry::aligned_in_first_block;
    if (!aligned) {
      d = tcemu::detail::exact_accumulator_add(dp, tcemu::detail::accumulator_bits(dp, chain), d);
      chain = 0.0;
    }
    if (p.takeout_instructions > 0 &&
        ((t + 1) % p.takeout_instructions == 0 || t + 1 == instructions)) {
      reg = fp32_add_rn(reg, aligned ? tcemu::detail::accumulator_bits(dp, chain) : d);
      chain = 0.0;
      d = encode_zero(dp.accumulator, false);
    }
  }
  __device__ std::uint32_t result(const Datapath& dp, const Problem& p) const {
    if (p.takeout_instructions > 0) return reg;
    return dp.c_entry == AccumulatorEntry::aligned_in_first_block
               ? tcemu::detail::accumulator_bits(dp, chain)
               : d;
  }
};

// The binary64 kernel: a kTile x kTile tile of D per thread block; thread (tx, ty) owns rows
// ty + kSide * r and columns tx + kSide * c (r, c < kPerThread), so that a warp's shared-memory
// reads of one operand are consecutive words. k is walked in slot order (slot q * block_terms +
// position of an instruction holds term term_of_slot(q, position)); a stage holds `stage_slots`
// slots, a whole number of blocks.
__global__ void __launch_bounds__(kThreads)
    binary64_gemm_kernel(Datapath dp, Binary64Grid g, Problem p, int stage_slots) {
  extern __shared__ double shared[];
  double* a_value = shared;                         // [slot][row]
  double* b_value = a_value + stage_slots * kTile;  // [slot][column]
  int* a_exponent = reinterpret_cast<int*>(b_value + stage_slots * kTile);
  int* b_exponent = a_exponent + stage_slots * kTile;

  const int tx = static_cast<int>(threadIdx.x) % kSide, ty = static_cast<int>(threadIdx.x) / kSide;
  const int row0 = static_cast<int>(blockIdx.y) * kTile,
            col0 = static_cast<int>(blockIdx.x) * kTile;
  const int instruction_k = dp.instruction_k, block_terms = dp.block_terms;
  const std::int64_t instructions = (p.k + instruction_k - 1) / instruction_k;
  const std::int64_t slots = instructions * instruction_k;

  Element e[kPerThread][kPerThread];
  for (int r = 0; r < kPerThread; ++r) {
    for (int c = 0; c < kPerThread; ++c) {
      const int i = row0 + ty + kSide * r, j = col0 + tx + kSide * c;
      e[r][c].start(dp, p, i < p.m && j < p.n ? initial_bits(dp, p, i, j) : 0);
    }
  }

  // The k of each slot of the stage (-1: no term), worked out once per stage.
  __shared__ std::int64_t stage_k[kMaxBlockTerms];
  for (std::int64_t first = 0; first < slots; first += stage_slots) {
    __syncthreads();  // the previous stage is read
    if (static_cast<int>(threadIdx.x) < stage_slots) {
      const std::int64_t global = first + static_cast<int>(threadIdx.x);
      const std::int64_t t = global / instruction_k;
      const int u = static_cast<int>(global % instruction_k);
      const std::int64_t kk =
          t * instruction_k + tcemu::detail::term_of_slot(dp, u / block_terms, u % block_terms);
      stage_k[threadIdx.x] = global < slots && kk < p.k ? kk : -1;
    }
    __syncthreads();
    // Every load of the stage is issued before any is decoded, so that their latencies overlap.
    std::uint32_t a_bits[kMaxLoads], b_bits[kMaxLoads];
    bool a_term[kMaxLoads], b_term[kMaxLoads];
#pragma unroll
    for (int l = 0; l < kMaxLoads; ++l) {
      const int at = static_cast<int>(threadIdx.x) + l * kThreads;
      a_term[l] = b_term[l] = false;
      if (at >= stage_slots * kTile) continue;
      const int x = at % kTile;
      const std::int64_t kk = stage_k[at / kTile];
      if (kk >= 0) {
        a_term[l] = row0 + x < p.m;
        b_term[l] = col0 + x < p.n;
        if (a_term[l]) a_bits[l] = p.a.get(row0 + x, kk);
        if (b_term[l]) b_bits[l] = p.b.get(kk, col0 + x);
      }
    }
#pragma unroll
    for (int l = 0; l < kMaxLoads; ++l) {
      const int at = static_cast<int>(threadIdx.x) + l * kThreads;
      if (at >= stage_slots * kTile) continue;
      // Padding (no term, or outside the matrix): a = -0, b = +0, whose product is -0, the
      // neutral term (binary64_block.hpp).
      const Binary64Operand av = a_term[l] ? tcemu::detail::binary64_operand(dp.input, a_bits[l])
                                           : Binary64Operand{-0.0, tcemu::detail::kZeroExponent};
      const Binary64Operand bv = b_term[l] ? tcemu::detail::binary64_operand(dp.input, b_bits[l])
                                           : Binary64Operand{0.0, tcemu::detail::kZeroExponent};
      a_value[at] = av.value;
      a_exponent[at] = static_cast<int>(av.exponent);
      b_value[at] = bv.value;
      b_exponent[at] = static_cast<int>(bv.exponent);
    }
    __syncthreads();

    // Instruction t, slot u in it, of the stage's first block; blocks never straddle instructions.
    std::int64_t t = first / instruction_k;
    int u = static_cast<int>(first % instruction_k);
    for (int b0 = 0; b0 < stage_slots && first + b0 < slots; b0 += block_terms) {
      const std::int64_t terms = std::min<std::int64_t>(instruction_k, p.k - t * instruction_k);
      // A partial instruction skips its empty blocks after the first (the smallest term of block
      // q is q * k_group).
      if ((u / block_terms) * dp.k_group < terms) {
        tcemu::detail::BlockSum<Lanes> s[kPerThread][kPerThread];
        for (int r = 0; r < kPerThread; ++r) {
          for (int c = 0; c < kPerThread; ++c) {
            s[r][c].emax = tcemu::detail::c_alignment<Lanes>(g, e[r][c].chain);
          }
        }
        int emax[kPerThread][kPerThread];
        for (int r = 0; r < kPerThread; ++r) {
          for (int c = 0; c < kPerThread; ++c) emax[r][c] = static_cast<int>(s[r][c].emax);
        }
#pragma unroll 4
        for (int q = 0; q < block_terms; ++q) {
          const int* ae = a_exponent + (b0 + q) * kTile + ty;
          const int* be = b_exponent + (b0 + q) * kTile + tx;
          for (int r = 0; r < kPerThread; ++r) {
            for (int c = 0; c < kPerThread; ++c) {
              emax[r][c] =
                  tcemu::detail::raise_alignment(emax[r][c], ae[kSide * r] + be[kSide * c]);
            }
          }
        }
        double scale[kPerThread][kPerThread];
        for (int r = 0; r < kPerThread; ++r) {
          for (int c = 0; c < kPerThread; ++c) {
            s[r][c].emax = emax[r][c];
            scale[r][c] = tcemu::detail::start_block(g, s[r][c], e[r][c].chain);
          }
        }
#pragma unroll 4
        for (int q = 0; q < block_terms; ++q) {
          const double* av = a_value + (b0 + q) * kTile + ty;
          const double* bv = b_value + (b0 + q) * kTile + tx;
          double a[kPerThread], b[kPerThread];
          for (int r = 0; r < kPerThread; ++r) a[r] = av[kSide * r];
          for (int c = 0; c < kPerThread; ++c) b[c] = bv[kSide * c];
          for (int r = 0; r < kPerThread; ++r) {
            for (int c = 0; c < kPerThread; ++c) {
              tcemu::detail::add_product(s[r][c], a[r] * b[c], scale[r][c]);
            }
          }
        }
        for (int r = 0; r < kPerThread; ++r) {
          for (int c = 0; c < kPerThread; ++c) {
            const tcemu::detail::RoundedBlock<Lanes> rounded =
                tcemu::detail::round_block(g, s[r][c], e[r][c].chain);
            e[r][c].chain = rounded.fast
                                ? rounded.result
                                : tcemu::detail::exceptional_block_result(
                                      dp, g, e[r][c].chain, static_cast<std::int64_t>(s[r][c].sum),
                                      s[r][c].emax, rounded.exact);
          }
        }
      }
      u += block_terms;
      if (u == instruction_k) {
        for (int r = 0; r < kPerThread; ++r) {
          for (int c = 0; c < kPerThread; ++c) e[r][c].end_instruction(dp, p, t, instructions);
        }
        u = 0;
        ++t;
      }
    }
  }

  for (int r = 0; r < kPerThread; ++r) {
    for (int c = 0; c < kPerThread; ++c) {
      const int i = row0 + ty + kSide * r, j = col0 + tx + kSide * c;
      if (i < p.m && j < p.n) store(dp, p, i, j, e[r][c].result(dp, p));
    }
  }
}

// The exact kernel: one output element per thread, exact_mma_chain over each take-out chunk.
__global__ void __launch_bounds__(kExactThreads) exact_gemm_kernel(Datapath dp, Problem p) {
  const std::int64_t element =
      static_cast<std::int64_t>(blockIdx.x) * kExactThreads + static_cast<int>(threadIdx.x);
  if (element >= static_cast<std::int64_t>(p.m) * p.n) return;
  const int i = static_cast<int>(element % p.m), j = static_cast<int>(element / p.m);
  struct Pair {
    Decoded a, b;
  };
  const std::uint32_t initial = initial_bits(dp, p, i, j);
  std::uint32_t out;
  if (p.takeout_instructions == 0) {
    out = tcemu::detail::exact_mma_chain(dp, p.k, initial, [&](std::int64_t kk) {
      return Pair{decode(dp.input, p.a.get(i, kk)), decode(dp.input, p.b.get(kk, j))};
    });
  } else {
    const std::int64_t chunk = static_cast<std::int64_t>(p.takeout_instructions) * dp.instruction_k;
    out = initial;
    for (std::int64_t first = 0; first < p.k; first += chunk) {
      const std::int64_t count = std::min<std::int64_t>(chunk, p.k - first);
      const std::uint32_t part = tcemu::detail::exact_mma_chain(
          dp, count, encode_zero(dp.accumulator, false), [&](std::int64_t kk) {
            return Pair{decode(dp.input, p.a.get(i, first + kk)),
                        decode(dp.input, p.b.get(first + kk, j))};
          });
      out = fp32_add_rn(out, part);
    }
  }
  store(dp, p, i, j, out);
}

// flag <- 1 when x holds an Inf or NaN of `format`.
__global__ void find_nonfinite_kernel(FloatFormat format, DeviceMatrix x, int* flag) {
  for_each_element(x.rows, x.cols, x.row_major, [&](std::int64_t i, std::int64_t j) {
    const ValueClass vc = decode(format, x.get(i, j)).value_class;
    if (vc == ValueClass::infinity || vc == ValueClass::nan) *flag = 1;
  });
}

bool has_nonfinite(const FloatFormat& format, const DeviceMatrix& a, const DeviceMatrix& b,
                   int* flag) {
  TCEMU_CUDA_CHECK(cudaMemset(flag, 0, sizeof(int)));
  for (const DeviceMatrix* x : {&a, &b}) {
    if (x->rows == 0 || x->cols == 0) continue;
    find_nonfinite_kernel<<<elementwise_grid(x->rows, x->cols, x->row_major, 256), 256>>>(format,
                                                                                          *x, flag);
    TCEMU_CUDA_CHECK(cudaGetLastError());
  }
  int found = 0;
  TCEMU_CUDA_CHECK(cudaMemcpy(&found, flag, sizeof found, cudaMemcpyDeviceToHost));
  return found != 0;
}

}  // namespace

bool launch_emulated_gemm(const Datapath& dp, const GemmOptions& options, const DeviceMatrix& a,
                          const DeviceMatrix& b, const std::optional<DeviceMatrix>& c,
                          const DeviceMatrix& d, void* scratch) {
  Problem p{};
  p.a = a;
  p.b = b;
  p.m = static_cast<int>(a.rows);
  p.n = static_cast<int>(b.cols);
  p.k = static_cast<int>(a.cols);
  p.takeout_instructions = static_cast<int>(options.takeout_every_k / dp.instruction_k);
  const bool reads_c = options.c_input == CInput::initial_accumulator || options.beta != 0.0f;
  p.output.c = reads_c ? AccumulatorMatrix{c->data, c->ld, c->row_major}
                       : AccumulatorMatrix{nullptr, 0, true};
  p.output.d = {d.data, d.ld, d.row_major};
  p.output.c_is_initial_accumulator = options.c_input == CInput::initial_accumulator;
  p.output.alpha = options.alpha;
  p.output.beta = options.beta;
  if (p.m == 0 || p.n == 0) return false;

  // k = 0 passes C through untouched (a NaN keeps its payload), which only the exact kernel does.
  const bool binary64 = p.k > 0 && tcemu::detail::binary64_applies(dp) &&
                        !has_nonfinite(dp.input, a, b, static_cast<int*>(scratch));
  if (binary64) {
    const int stage_slots = dp.block_terms * std::max(1, kStageSlots / dp.block_terms);
    const auto bytes = static_cast<std::size_t>(stage_slots) * kTile * 2 * (sizeof(double) + 4);
    TCEMU_CUDA_CHECK(cudaFuncSetAttribute(binary64_gemm_kernel,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(bytes)));
    const dim3 grid((p.n + kTile - 1) / kTile, (p.m + kTile - 1) / kTile);
    binary64_gemm_kernel<<<grid, kThreads, bytes>>>(dp, tcemu::detail::binary64_grid(dp), p,
                                                    stage_slots);
  } else {
    const std::int64_t elements = static_cast<std::int64_t>(p.m) * p.n;
    exact_gemm_kernel<<<static_cast<unsigned>((elements + kExactThreads - 1) / kExactThreads),
                        kExactThreads>>>(dp, p);
  }
  TCEMU_CUDA_CHECK(cudaGetLastError());
  return binary64;
}

}  // namespace tcemu::gpu::detail
