#include "gemm/emulated_gemm.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>

#include <tcemu/emulator/binary64_block.hpp>
#include <tcemu/emulator/block_fma.hpp>
#include <tcemu/emulator/fp32_bits.hpp>
#include <tcemu/emulator/scaled_groups.hpp>

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
constexpr int kGroupStageSlots = 128;      // k staged at a time by the group kernel (whole blocks)
// Operands one thread stages per stage: a stage holds at most kMaxBlockTerms slots (a whole
// number of blocks, at least kStageSlots when blocks are small) of kTile rows or columns.
constexpr int kMaxLoads = kMaxBlockTerms * kTile / kThreads;

// What both kernels need besides the datapath.
struct Problem {
  DeviceMatrix a, b;
  DeviceScales scales;  // a block-scaled datapath's (the other kernels do not read them)
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

// The rare paths of the binary64 kernel, out of line so that its unrolled loops over a thread's
// sixteen elements carry only a call each: c added after the blocks, the take-out, and a block
// result round_block leaves to round_pack.
__noinline__ __device__ std::uint32_t added_after_blocks(const Datapath& dp, double chain,
                                                         std::uint32_t d) {
  return tcemu::detail::exact_accumulator_add(dp, tcemu::detail::accumulator_bits(dp, chain), d);
}
__noinline__ __device__ std::uint32_t taken_out(const Datapath& dp, std::uint32_t reg, bool aligned,
                                                double chain, std::uint32_t d) {
  return fp32_add_rn(reg, aligned ? tcemu::detail::accumulator_bits(dp, chain) : d);
}
__noinline__ __device__ double exceptional_result(const Datapath& dp, const Binary64Grid& g,
                                                  double c, double sum, int emax, double exact) {
  return tcemu::detail::exceptional_block_result(dp, g, c, static_cast<std::int64_t>(sum), emax,
                                                 exact);
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
      d = added_after_blocks(dp, chain, d);
      chain = 0.0;
    }
    if (p.takeout_instructions > 0 &&
        ((t + 1) % p.takeout_instructions == 0 || t + 1 == instructions)) {
      reg = taken_out(dp, reg, aligned, chain, d);
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

// The kTile x kTile outputs of a thread block, kPerThread x kPerThread a thread: rows ty + kSide r,
// columns tx + kSide c of the tile at (row0, col0). Shared by the binary64 and the group kernel.
struct TileElements {
  Element e[kPerThread][kPerThread];
  int row0, col0, tx, ty;

  __device__ TileElements(const Datapath& dp, const Problem& p)
      : row0(static_cast<int>(blockIdx.y) * kTile),
        col0(static_cast<int>(blockIdx.x) * kTile),
        tx(static_cast<int>(threadIdx.x) % kSide),
        ty(static_cast<int>(threadIdx.x) / kSide) {
#pragma unroll
    for (int r = 0; r < kPerThread; ++r) {
#pragma unroll
      for (int c = 0; c < kPerThread; ++c) {
        const int i = row0 + ty + kSide * r, j = col0 + tx + kSide * c;
        e[r][c].start(dp, p, i < p.m && j < p.n ? initial_bits(dp, p, i, j) : 0);
      }
    }
  }
  // After the block that ends at slot u of instruction t (of `instructions`): the instruction's
  // end where u reaches its K (which changes nothing when c is aligned in the first block and
  // nothing is taken out), then slot 0 of the next.
  __device__ void after_block(const Datapath& dp, const Problem& p, std::int64_t& t, int& u,
                              std::int64_t instructions) {
    if (u != dp.instruction_k) return;
    if (dp.c_entry != AccumulatorEntry::aligned_in_first_block || p.takeout_instructions > 0) {
#pragma unroll
      for (int r = 0; r < kPerThread; ++r) {
#pragma unroll
        for (int c = 0; c < kPerThread; ++c) e[r][c].end_instruction(dp, p, t, instructions);
      }
    }
    u = 0;
    ++t;
  }
  __device__ void store_results(const Datapath& dp, const Problem& p) const {
#pragma unroll
    for (int r = 0; r < kPerThread; ++r) {
#pragma unroll
      for (int c = 0; c < kPerThread; ++c) {
        const int i = row0 + ty + kSide * r, j = col0 + tx + kSide * c;
        if (i < p.m && j < p.n) store(dp, p, i, j, e[r][c].result(dp, p));
      }
    }
  }
};

// binary64_operand of every 16-bit pattern of the input format: values and exponents.
struct OperandTable {
  double* value;
  int* exponent;
};

__global__ void fill_operand_table(FloatFormat input, OperandTable table) {
  const int bits = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (bits >= static_cast<int>(kOperandTableEntries)) return;
  const Binary64Operand x =
      tcemu::detail::binary64_operand(input, static_cast<std::uint32_t>(bits));
  table.value[bits] = x.value;
  table.exponent[bits] = static_cast<int>(x.exponent);
}

// The operand of `bits` as the binary64 kernel stages it, before its scale.
template <bool Table>
__device__ Binary64Operand staged_operand(const FloatFormat& input, const OperandTable& table,
                                          std::uint32_t bits) {
  if constexpr (Table) {
    return {table.value[bits], table.exponent[bits]};
  } else {
    return tcemu::detail::binary64_operand(input, bits);
  }
}

// A staged operand (value, exponent) made to carry the scale of `bits` in `format` (group_terms 1).
__device__ void scale_staged(const FloatFormat& format, std::uint32_t bits, double& value,
                             int& exponent) {
  const Binary64Operand x =
      tcemu::detail::scaled_operand({value, exponent}, tcemu::detail::binary64_scale(format, bits));
  value = x.value;
  exponent = static_cast<int>(x.exponent);
}

// The position of operand x (0 <= x < kTile: row x of the tile's A, column x of its B) in a staged
// slot: the kPerThread operands a thread reads (rows ty + kSide * r, columns tx + kSide * c) lie
// next to each other, so that it reads them with vector loads.
__device__ int staged_position(int x) {
  return (x % kSide) * kPerThread + x / kSide;
}

// kPerThread consecutive staged values (doubles) and exponents (ints), by vector loads.
static_assert(kPerThread == 4, "the vector loads below read four operands");
__device__ void load_values(const double* at, double (&out)[kPerThread]) {
  const double2 lo = reinterpret_cast<const double2*>(at)[0];
  const double2 hi = reinterpret_cast<const double2*>(at)[1];
  out[0] = lo.x;
  out[1] = lo.y;
  out[2] = hi.x;
  out[3] = hi.y;
}
__device__ void load_exponents(const int* at, int (&out)[kPerThread]) {
  const int4 v = *reinterpret_cast<const int4*>(at);
  out[0] = v.x;
  out[1] = v.y;
  out[2] = v.z;
  out[3] = v.w;
}

constexpr std::uint32_t kSignWord = 0x80000000u;  // the sign bit of a binary64's high word

// The truncation of the block's terms by the fused multiply-add toward zero with the block's
// offset as addend: the GPU's form of binary64_block.hpp's truncated(product, scale), one binary64
// operation fewer per product (no separate product), in real units instead of grid units:
//  * The grid of a block with alignment exponent emax is 2^E, E = emax - nf. Its offset is
//    M = 2^(E + 52), whose ulp is 2^E. Its binary64 exponent field 1075 + E lies in [425, 1375]
//    for every finite c (emax in [kLowestGrid, 300]: the floor is at most 300, c's exponent at
//    most 127, a product's at most 256), so M is normal; for an Inf or NaN c (exponent 1024) the
//    field is out of range, computed in unsigned arithmetic, and that lane's result is c
//    (exceptional_block_result), whatever its sum holds.
//  * A term x (a product a * b, or c * 1) has |x| < 2^(emax + 2) <= 2^(E + 52) because nf <= 50
//    (binary64_applies). With Ms = M carrying x's sign, x + Ms has the sign of both and magnitude
//    in [2^(E + 52), 2^(E + 53)), where the ulp is 2^E: the fused multiply-add rounded toward zero
//    (one rounding of the exact a * b + Ms) is Ms + trunc_E(x), trunc_E dropping the bits of |x|
//    below 2^E: the model's truncation. Subtracting Ms is exact (both in one binade, same sign).
//    A zero product gives Ms - Ms = +0, which neither changes the sum nor decides a zero sum's
//    sign (the AND of the terms' sign bits does, as in binary64_block.hpp).
//  * The sign bit of a product is the XOR of its factors' sign bits, so Ms's high word is M's
//    XOR both; the kernel keeps Ms of the previous product and flips it by the XOR of the factors'
//    sign changes (flip_high_word).
//  * The sum of the truncated terms, multiples of 2^E below (block_terms + 1) 2^(E + nf + 2) <=
//    2^(E + 52), is exact in binary64 in any order; times the scale 2^-E it is the integer sum of
//    binary64_block.hpp (an exact power-of-two multiple), which round_block then reads.
__device__ std::uint32_t offset_high_word(int emax, const Binary64Grid& g) {
  return (static_cast<std::uint32_t>(1075 + emax) - static_cast<std::uint32_t>(g.fraction_bits))
         << 20;
}
__device__ std::uint32_t high_word(double x) {
  return static_cast<std::uint32_t>(__double2hiint(x));
}
__device__ double from_high_word(std::uint32_t high) {
  return __hiloint2double(static_cast<int>(high), 0);
}
// x with its high word XORed with `f` and `g` (the low word kept in place, so that the register
// pair is updated without a move): one three-input LOP3, which the compiler, left to itself,
// splits into two when f and g are masked words.
__device__ double flip_high_word(double x, std::uint32_t f, std::uint32_t g) {
  std::uint32_t high;
  asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(high) : "r"(high_word(x)), "r"(f), "r"(g));
  return __hiloint2double(static_cast<int>(high), __double2loint(x));
}
// binary64_block.hpp's state of a block from this kernel's: the integer sum is sum * 2^-E, exact
// (a power-of-two multiple), and only the sign bit of the AND of the terms' patterns is read.
__device__ tcemu::detail::BlockSum<Lanes> block_sum(int emax, double sum, std::uint32_t offset,
                                                    std::uint32_t negative) {
  const double scale = from_high_word((2098u << 20) - offset);
  return {emax, sum * scale, static_cast<std::uint64_t>(negative & kSignWord) << 32};
}

// x = a * b truncated on the grid of the offset m (x's sign, high word from offset_high_word).
__device__ double truncated_on_grid(double a, double b, double m) {
  return __dsub_rn(__fma_rz(a, b, m), m);
}

// The binary64 kernel: a kTile x kTile tile of D per thread block; thread (tx, ty) owns rows
// ty + kSide * r and columns tx + kSide * c (r, c < kPerThread), staged next to each other
// (staged_position). k is walked in slot order (slot q * block_terms + position of an
// instruction holds term term_of_slot(q, position)); a stage holds `stage_slots` slots, a whole
// number of blocks. TrackZeroSign: the datapath's ZeroSign is ieee, so the AND of the terms' sign
// bits decides the sign of a zero sum; it is worked out from the staged operands only for the
// elements whose block sum is zero (under ZeroSign::positive round_block never reads it).
//
// Table: the inputs have at most 16 bits, and binary64_operand of every pattern is looked up in
// `table_a` and `table_b` (fill_operand_table; B's of dp.b_format()) instead of being decoded for
// each staged operand. A block-scaled datapath (group_terms 1) has each operand staged times the
// scale that covers its k (scaled_operand, binary64_block.hpp).
// Scaled: block-scaled with group_terms 1 (each product carries its two scales); an instance of
// its own so that the scaling pass costs the unscaled datapaths no registers.
template <bool TrackZeroSign, bool Table, bool Scaled>
__global__ void __launch_bounds__(kThreads, 1)
    binary64_gemm_kernel(Datapath dp, Binary64Grid g, Problem p, int stage_slots,
                         OperandTable table_a, OperandTable table_b) {
  extern __shared__ double shared[];
  double* a_value = shared;                         // [slot][staged position]
  double* b_value = a_value + stage_slots * kTile;  // [slot][staged position]
  int* a_exponent = reinterpret_cast<int*>(b_value + stage_slots * kTile);
  int* b_exponent = a_exponent + stage_slots * kTile;

  const int instruction_k = dp.instruction_k, block_terms = dp.block_terms;
  const std::int64_t instructions = (p.k + instruction_k - 1) / instruction_k;
  const std::int64_t slots = instructions * instruction_k;

  TileElements tile(dp, p);
  auto& e = tile.e;
  const int tx = tile.tx, ty = tile.ty, row0 = tile.row0, col0 = tile.col0;

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
      const Binary64Operand av = a_term[l] ? staged_operand<Table>(dp.input, table_a, a_bits[l])
                                           : Binary64Operand{-0.0, tcemu::detail::kZeroExponent};
      const Binary64Operand bv = b_term[l]
                                     ? staged_operand<Table>(dp.b_format(), table_b, b_bits[l])
                                     : Binary64Operand{0.0, tcemu::detail::kZeroExponent};
      const int to = (at / kTile) * kTile + staged_position(at % kTile);
      a_value[to] = av.value;
      a_exponent[to] = static_cast<int>(av.exponent);
      b_value[to] = bv.value;
      b_exponent[to] = static_cast<int>(bv.exponent);
    }
    // Block scaling (group_terms 1): each thread scales the operands it staged (scaled_operand),
    // apart from the loads above.
    if constexpr (Scaled) {
      for (int at = static_cast<int>(threadIdx.x); at < stage_slots * kTile; at += kThreads) {
        const int x = at % kTile;
        const std::int64_t kk = stage_k[at / kTile];
        if (kk < 0) continue;
        const std::int64_t s = kk / dp.block_scaling.scale_block;
        const int to = (at / kTile) * kTile + staged_position(x);
        if (row0 + x < p.m) {
          scale_staged(dp.block_scaling.scale_a, p.scales.a.get(row0 + x, s), a_value[to],
                       a_exponent[to]);
        }
        if (col0 + x < p.n) {
          scale_staged(dp.block_scaling.scale_b, p.scales.b.get(s, col0 + x), b_value[to],
                       b_exponent[to]);
        }
      }
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
        int emax[kPerThread][kPerThread];
#pragma unroll
        for (int r = 0; r < kPerThread; ++r) {
#pragma unroll
          for (int c = 0; c < kPerThread; ++c) {
            emax[r][c] = static_cast<int>(tcemu::detail::c_alignment<Lanes>(g, e[r][c].chain));
          }
        }
#pragma unroll 4
        for (int q = 0; q < block_terms; ++q) {
          int ae[kPerThread], be[kPerThread];
          load_exponents(a_exponent + (b0 + q) * kTile + ty * kPerThread, ae);
          load_exponents(b_exponent + (b0 + q) * kTile + tx * kPerThread, be);
#pragma unroll
          for (int r = 0; r < kPerThread; ++r) {
#pragma unroll
            for (int c = 0; c < kPerThread; ++c) {
              emax[r][c] = tcemu::detail::raise_alignment(emax[r][c], ae[r] + be[c]);
            }
          }
        }
        // The block's offset (high word), its sum started with c truncated on the grid, and the
        // AND of the terms' sign bits started with c's.
        std::uint32_t offset[kPerThread][kPerThread];
        double sum[kPerThread][kPerThread];
        std::uint32_t negative[kPerThread][kPerThread];
        // The offset with the sign of the last product of (r, c): the sign of a product changes
        // with the XOR of its factors' sign changes, so one three-input XOR per product updates
        // it (flip_high_word), from the sign bits of the last factors read (+ at first).
        double signed_offset[kPerThread][kPerThread];
#pragma unroll
        for (int r = 0; r < kPerThread; ++r) {
#pragma unroll
          for (int c = 0; c < kPerThread; ++c) {
            emax[r][c] = max(emax[r][c], tcemu::detail::kLowestGrid);
            offset[r][c] = offset_high_word(emax[r][c], g);
            negative[r][c] = high_word(e[r][c].chain);
            signed_offset[r][c] = from_high_word(offset[r][c]);
            sum[r][c] = truncated_on_grid(
                e[r][c].chain, 1.0,
                flip_high_word(signed_offset[r][c], negative[r][c] & kSignWord, 0));
          }
        }
        std::uint32_t a_last[kPerThread] = {}, b_last[kPerThread] = {};
#pragma unroll 4
        for (int q = 0; q < block_terms; ++q) {
          double a[kPerThread], b[kPerThread];
          load_values(a_value + (b0 + q) * kTile + ty * kPerThread, a);
          load_values(b_value + (b0 + q) * kTile + tx * kPerThread, b);
          std::uint32_t a_flip[kPerThread], b_flip[kPerThread];
#pragma unroll
          for (int r = 0; r < kPerThread; ++r) {
            a_flip[r] = (high_word(a[r]) ^ a_last[r]) & kSignWord;
            a_last[r] = high_word(a[r]);
          }
#pragma unroll
          for (int c = 0; c < kPerThread; ++c) {
            b_flip[c] = (high_word(b[c]) ^ b_last[c]) & kSignWord;
            b_last[c] = high_word(b[c]);
          }
#pragma unroll
          for (int r = 0; r < kPerThread; ++r) {
#pragma unroll
            for (int c = 0; c < kPerThread; ++c) {
              signed_offset[r][c] = flip_high_word(signed_offset[r][c], a_flip[r], b_flip[c]);
              sum[r][c] += truncated_on_grid(a[r], b[c], signed_offset[r][c]);
            }
          }
        }
        // The AND of the terms' sign bits, worked out only where a sum is zero (rare): c's, then
        // every product's (the XOR of its factors', padding included).
        if constexpr (TrackZeroSign) {
          unsigned zero_sums = 0;
#pragma unroll
          for (int r = 0; r < kPerThread; ++r) {
#pragma unroll
            for (int c = 0; c < kPerThread; ++c) {
              zero_sums |= sum[r][c] == 0.0 ? 1u << (r * kPerThread + c) : 0u;
            }
          }
          if (zero_sums != 0) {
#pragma unroll
            for (int r = 0; r < kPerThread; ++r) {
#pragma unroll
              for (int c = 0; c < kPerThread; ++c) {
                if ((zero_sums >> (r * kPerThread + c) & 1) == 0) continue;
                for (int q = 0; q < block_terms; ++q) {
                  negative[r][c] &= high_word(a_value[(b0 + q) * kTile + ty * kPerThread + r]) ^
                                    high_word(b_value[(b0 + q) * kTile + tx * kPerThread + c]);
                }
              }
            }
          }
        }
        // The block results, without a branch (so that the sixteen elements' roundings
        // interleave); the few that round_block leaves to round_pack keep c in `chain` and go
        // through exceptional_result after.
        unsigned exceptional = 0;
#pragma unroll
        for (int r = 0; r < kPerThread; ++r) {
#pragma unroll
          for (int c = 0; c < kPerThread; ++c) {
            const tcemu::detail::RoundedBlock<Lanes> rounded = tcemu::detail::round_block(
                g, block_sum(emax[r][c], sum[r][c], offset[r][c], negative[r][c]), e[r][c].chain);
            exceptional |= rounded.fast ? 0u : 1u << (r * kPerThread + c);
            e[r][c].chain = rounded.fast ? rounded.result : e[r][c].chain;
          }
        }
        if (exceptional != 0) {
#pragma unroll
          for (int r = 0; r < kPerThread; ++r) {
#pragma unroll
            for (int c = 0; c < kPerThread; ++c) {
              if ((exceptional >> (r * kPerThread + c) & 1) == 0) continue;
              const tcemu::detail::BlockSum<Lanes> s =
                  block_sum(emax[r][c], sum[r][c], offset[r][c], negative[r][c]);
              e[r][c].chain =
                  exceptional_result(dp, g, e[r][c].chain, s.sum, emax[r][c],
                                     tcemu::detail::round_block(g, s, e[r][c].chain).exact);
            }
          }
        }
      }
      u += block_terms;
      tile.after_block(dp, p, t, u, instructions);
    }
  }

  tile.store_results(dp, p);
}

// The group kernel (group_terms > 1: kind::mxf4, mxf4nvf4; scaled_groups.hpp, whose header proves
// it exact): kTile x kTile outputs per thread block, 4 x 4 per thread as in the binary64 kernel.
// Blocks hold k in order (validate: k_group == block_terms), so slot s of the chain is k = s. A
// stage of `stage_slots` k (whole blocks) is staged per group and operand (a row of A, a column
// of B): its elements' int8 codes four to a word, the masks of its nonzero elements and of its
// sign bits (bit i: element i of the group), and its scale (group_scale), at staged positions
// (staged_position) so that a thread reads its four rows or columns with one vector load.
// Padding (past k, outside the matrix): code 0, A's elements -0 and B's +0 (their product's sign
// is neutral for the zero sign's AND), no scale (kNoGroupScale).
struct GroupStage {
  int* a_codes;  // [stage_slots / 4][kTile]
  int* b_codes;
  // [stage groups][kTile] each: nonzero mask, sign mask, alignment, multiplier | nan << 8, lsb
  unsigned* a_nonzero;
  unsigned* b_nonzero;
  unsigned* a_negative;
  unsigned* b_negative;
  int* a_alignment;
  int* b_alignment;
  int* a_info;
  int* b_info;
  int* a_lsb;
  int* b_lsb;
};

constexpr int kNanInfo = 1 << 8;  // the NaN flag beside a multiplier (at most 15) in an info word

__device__ int group_info(const tcemu::detail::GroupScale& s) {
  return s.multiplier | (s.nan ? kNanInfo : 0);
}
__device__ tcemu::detail::GroupScale group_scale_of(int info, int alignment, int lsb) {
  return {info & (kNanInfo - 1), lsb, alignment, (info & kNanInfo) != 0};
}

// Bytes of a stage's shared memory (GroupStage's arrays).
std::size_t group_stage_bytes(int stage_slots, int group_terms) {
  const std::size_t groups = static_cast<std::size_t>(stage_slots / group_terms);
  return 2 * (static_cast<std::size_t>(stage_slots / 4) + 5 * groups) * kTile * sizeof(int);
}

__device__ int4 load4(const int* at) {
  return *reinterpret_cast<const int4*>(at);
}
__device__ void unpack4(int4 v, int (&out)[kPerThread]) {
  out[0] = v.x;
  out[1] = v.y;
  out[2] = v.z;
  out[3] = v.w;
}
__device__ void load_ints(const int* at, int (&out)[kPerThread]) {
  unpack4(load4(at), out);
}
__device__ void load_words(const unsigned* at, unsigned (&out)[kPerThread]) {
  int v[kPerThread];
  load_ints(reinterpret_cast<const int*>(at), v);
#pragma unroll
  for (int x = 0; x < kPerThread; ++x) out[x] = static_cast<unsigned>(v[x]);
}

// The block result of a lane that round_group_block leaves (or a poisoned block), out of line.
__noinline__ __device__ double group_result(const Datapath& dp, const Binary64Grid& g, int emax,
                                            std::int64_t sum, bool poisoned, bool all_negative,
                                            double c) {
  return tcemu::detail::group_block_result(dp, g, emax, sum, poisoned, all_negative, c);
}

// Stages the groups of k [first, first + stage_slots) of the tile's rows of A and columns of B.
// Each thread takes whole groups of one operand (its elements read one by one, all loads of a
// group issued together where Group is known; its scale once); `code_table[side][bits]` is
// element_code | sign << 8 of every byte pattern of A's (side 0) and B's (side 1) format.
template <int Group>
__device__ void stage_group_operands(const Datapath& dp, const Problem& p, const GroupStage& st,
                                     const int (*code_table)[256], std::int64_t first,
                                     int stage_slots, int row0, int col0) {
  const int group = Group > 0 ? Group : dp.block_scaling.group_terms;
  const int groups = stage_slots / group;
  const int scale_block = dp.block_scaling.scale_block;
  for (int item = static_cast<int>(threadIdx.x); item < 2 * groups * kTile; item += kThreads) {
    const int x = item % kTile, q = (item / kTile) % groups;
    const bool is_a = item < groups * kTile;
    const std::int64_t k0 = first + static_cast<std::int64_t>(q) * group;
    const bool present = is_a ? row0 + x < p.m : col0 + x < p.n;
    const int position = staged_position(x);
    int* codes = is_a ? st.a_codes : st.b_codes;
    const int* table = code_table[is_a ? 0 : 1];
    unsigned nonzero = 0, negative = 0;
#pragma unroll
    for (int w = 0; w < group / 4; ++w) {
      unsigned word = 0;
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int i = 4 * w + e;
        const std::int64_t kk = k0 + i;
        int code = 0;
        bool sign = is_a;  // padding: A -0, B +0
        if (present && kk < p.k) {
          const int entry = table[(is_a ? p.a.get(row0 + x, kk) : p.b.get(kk, col0 + x)) & 0xFF];
          code = static_cast<signed char>(entry & 0xFF);
          sign = (entry >> 8) != 0;
        }
        word |= static_cast<unsigned>(code & 0xFF) << (8 * e);
        nonzero |= code != 0 ? 1u << i : 0u;
        negative |= sign ? 1u << i : 0u;
      }
      codes[((k0 - first) / 4 + w) * kTile + position] = static_cast<int>(word);
    }
    tcemu::detail::GroupScale scale = tcemu::detail::kNoGroupScale;
    if (present && k0 < p.k) {
      const std::int64_t s = k0 / scale_block;
      scale =
          is_a ? tcemu::detail::group_scale(dp.block_scaling.scale_a, p.scales.a.get(row0 + x, s),
                                            tcemu::detail::element_lsb(dp.input))
               : tcemu::detail::group_scale(dp.block_scaling.scale_b, p.scales.b.get(s, col0 + x),
                                            tcemu::detail::element_lsb(dp.b_format()));
    }
    const int at = q * kTile + position;
    (is_a ? st.a_nonzero : st.b_nonzero)[at] = nonzero;
    (is_a ? st.a_negative : st.b_negative)[at] = negative;
    (is_a ? st.a_alignment : st.b_alignment)[at] = scale.alignment;
    (is_a ? st.a_info : st.b_info)[at] = group_info(scale);
    (is_a ? st.a_lsb : st.b_lsb)[at] = scale.lsb;
  }
}

// TrackZeroSign: the datapath's ZeroSign is ieee (every Blackwell preset's is positive, whose
// results never read the AND of the terms' signs). Group: the group size when known at compile
// time (16: every preset), 0 for any other multiple of 4 up to kMaxScaledGroup.
template <bool TrackZeroSign, int Group>
__global__ void __launch_bounds__(kThreads, 1)
    group_gemm_kernel(Datapath dp, Binary64Grid g, Problem p, int stage_slots) {
  extern __shared__ int group_shared[];
  const int group = Group > 0 ? Group : dp.block_scaling.group_terms;
  const int words = group / 4;  // code words of a group
  const int stage_groups = stage_slots / group;
  GroupStage st;
  {
    int* at = group_shared;
    const auto take = [&](int count) {
      int* out = at;
      at += count * kTile;
      return out;
    };
    st.a_codes = take(stage_slots / 4);
    st.b_codes = take(stage_slots / 4);
    st.a_nonzero = reinterpret_cast<unsigned*>(take(stage_groups));
    st.b_nonzero = reinterpret_cast<unsigned*>(take(stage_groups));
    st.a_negative = reinterpret_cast<unsigned*>(take(stage_groups));
    st.b_negative = reinterpret_cast<unsigned*>(take(stage_groups));
    st.a_alignment = take(stage_groups);
    st.b_alignment = take(stage_groups);
    st.a_info = take(stage_groups);
    st.b_info = take(stage_groups);
    st.a_lsb = take(stage_groups);
    st.b_lsb = take(stage_groups);
  }
  __shared__ int code_table[2][256];
  for (int bits = static_cast<int>(threadIdx.x); bits < 2 * 256; bits += kThreads) {
    const FloatFormat& f = bits < 256 ? dp.input : dp.b_format();
    const std::uint32_t pattern = static_cast<std::uint32_t>(bits % 256);
    const bool sign = (pattern & (f.sign_mask() << f.padding_bits)) != 0;
    code_table[bits / 256][bits % 256] =
        (tcemu::detail::element_code(f, pattern) & 0xFF) | (sign ? 1 << 8 : 0);
  }

  const int instruction_k = dp.instruction_k, block_terms = dp.block_terms;
  const std::int64_t instructions = (p.k + instruction_k - 1) / instruction_k;
  const std::int64_t slots = instructions * instruction_k;
  const unsigned group_mask = group == 32 ? ~0u : (1u << group) - 1;

  TileElements tile(dp, p);
  auto& e = tile.e;
  const int tx = tile.tx, ty = tile.ty, row0 = tile.row0, col0 = tile.col0;

  for (std::int64_t first = 0; first < slots; first += stage_slots) {
    __syncthreads();  // the previous stage is read (and, at first, the code table written)
    stage_group_operands<Group>(dp, p, st, code_table, first, stage_slots, row0, col0);
    __syncthreads();

    std::int64_t t = first / instruction_k;
    int u = static_cast<int>(first % instruction_k);
    for (int b0 = 0; b0 < stage_slots && first + b0 < slots; b0 += block_terms) {
      const std::int64_t terms = std::min<std::int64_t>(instruction_k, p.k - t * instruction_k);
      // A partial instruction skips its empty blocks (k in order: block q starts at term u).
      if (u < terms) {
        const int q0 = b0 / group, q1 = (b0 + block_terms) / group;
        // The alignment exponents and the NaN scales (bit r * kPerThread + c: poisoned).
        int emax[kPerThread][kPerThread];
        unsigned poisoned = 0;
#pragma unroll
        for (int r = 0; r < kPerThread; ++r) {
#pragma unroll
          for (int c = 0; c < kPerThread; ++c) {
            emax[r][c] = static_cast<int>(tcemu::detail::c_alignment<Lanes>(g, e[r][c].chain));
          }
        }
        for (int q = q0; q < q1; ++q) {
          unsigned anz[kPerThread], bnz[kPerThread];
          int aal[kPerThread], bal[kPerThread], ainfo[kPerThread], binfo[kPerThread];
          load_words(st.a_nonzero + q * kTile + ty * kPerThread, anz);
          load_words(st.b_nonzero + q * kTile + tx * kPerThread, bnz);
          load_ints(st.a_alignment + q * kTile + ty * kPerThread, aal);
          load_ints(st.b_alignment + q * kTile + tx * kPerThread, bal);
          load_ints(st.a_info + q * kTile + ty * kPerThread, ainfo);
          load_ints(st.b_info + q * kTile + tx * kPerThread, binfo);
#pragma unroll
          for (int r = 0; r < kPerThread; ++r) {
#pragma unroll
            for (int c = 0; c < kPerThread; ++c) {
              const bool nonzero = (anz[r] & bnz[c]) != 0;
              const tcemu::detail::GroupScale sa = group_scale_of(ainfo[r], aal[r], 0);
              const tcemu::detail::GroupScale sb = group_scale_of(binfo[c], bal[c], 0);
              emax[r][c] = tcemu::detail::raise_alignment(
                  emax[r][c], tcemu::detail::group_alignment(nonzero, sa, sb));
              poisoned |= tcemu::detail::group_poisons(dp, nonzero, sa, sb)
                              ? 1u << (r * kPerThread + c)
                              : 0u;
            }
          }
        }
        // c truncated on each grid, then every group term; the AND of the terms' signs (c's first).
        std::int64_t sum[kPerThread][kPerThread];
        unsigned negative = 0;
#pragma unroll
        for (int r = 0; r < kPerThread; ++r) {
#pragma unroll
          for (int c = 0; c < kPerThread; ++c) {
            sum[r][c] = tcemu::detail::start_group_block(g, emax[r][c], e[r][c].chain).c_kept;
            if constexpr (TrackZeroSign) {
              negative |= fp64::bits(e[r][c].chain) >> 63 != 0 ? 1u << (r * kPerThread + c) : 0u;
            }
          }
        }
        for (int q = q0; q < q1; ++q) {
          int ainfo[kPerThread], binfo[kPerThread], alsb[kPerThread], blsb[kPerThread];
          load_ints(st.a_info + q * kTile + ty * kPerThread, ainfo);
          load_ints(st.b_info + q * kTile + tx * kPerThread, binfo);
          load_ints(st.a_lsb + q * kTile + ty * kPerThread, alsb);
          load_ints(st.b_lsb + q * kTile + tx * kPerThread, blsb);
          int group_sum[kPerThread][kPerThread] = {};
#pragma unroll 8
          for (int w = 0; w < words; ++w) {
            int a[kPerThread], b[kPerThread];
            load_ints(st.a_codes + (q * group / 4 + w) * kTile + ty * kPerThread, a);
            load_ints(st.b_codes + (q * group / 4 + w) * kTile + tx * kPerThread, b);
#pragma unroll
            for (int r = 0; r < kPerThread; ++r) {
#pragma unroll
              for (int c = 0; c < kPerThread; ++c) {
                group_sum[r][c] = __dp4a(a[r], b[c], group_sum[r][c]);
              }
            }
          }
          unsigned anz[kPerThread], bnz[kPerThread], aneg[kPerThread], bneg[kPerThread];
          if constexpr (TrackZeroSign) {
            load_words(st.a_nonzero + q * kTile + ty * kPerThread, anz);
            load_words(st.b_nonzero + q * kTile + tx * kPerThread, bnz);
            load_words(st.a_negative + q * kTile + ty * kPerThread, aneg);
            load_words(st.b_negative + q * kTile + tx * kPerThread, bneg);
          }
#pragma unroll
          for (int r = 0; r < kPerThread; ++r) {
#pragma unroll
            for (int c = 0; c < kPerThread; ++c) {
              const int multiplier = (ainfo[r] & (kNanInfo - 1)) * (binfo[c] & (kNanInfo - 1));
              sum[r][c] +=
                  tcemu::detail::truncated_group(group_sum[r][c], multiplier, alsb[r] + blsb[c],
                                                 emax[r][c] - static_cast<int>(g.fraction_bits));
              if constexpr (TrackZeroSign) {
                const unsigned bit = 1u << (r * kPerThread + c);
                const bool sign_and = ((aneg[r] ^ bneg[c]) & group_mask) == group_mask;
                if (!tcemu::detail::group_negative((anz[r] & bnz[c]) != 0, multiplier,
                                                   group_sum[r][c], sign_and)) {
                  negative &= ~bit;
                }
              }
            }
          }
        }
        // The block results, without a branch where round_group_block decides; the rest (and
        // poisoned blocks) through group_result after.
        unsigned exceptional = poisoned;
#pragma unroll
        for (int r = 0; r < kPerThread; ++r) {
#pragma unroll
          for (int c = 0; c < kPerThread; ++c) {
            const unsigned bit = 1u << (r * kPerThread + c);
            const tcemu::detail::RoundedBlock<Lanes> rounded = tcemu::detail::round_group_block(
                g, emax[r][c], sum[r][c], (negative & bit) != 0, e[r][c].chain);
            exceptional |= rounded.fast ? 0u : bit;
            e[r][c].chain = (exceptional & bit) == 0 ? rounded.result : e[r][c].chain;
          }
        }
        if (exceptional != 0) {
#pragma unroll
          for (int r = 0; r < kPerThread; ++r) {
#pragma unroll
            for (int c = 0; c < kPerThread; ++c) {
              const unsigned bit = 1u << (r * kPerThread + c);
              if ((exceptional & bit) == 0) continue;
              e[r][c].chain = group_result(dp, g, emax[r][c], sum[r][c], (poisoned & bit) != 0,
                                           (negative & bit) != 0, e[r][c].chain);
            }
          }
        }
      }
      u += block_terms;
      tile.after_block(dp, p, t, u, instructions);
    }
  }

  tile.store_results(dp, p);
}

// The exact kernel: one output element per thread, exact_mma_chain over each take-out chunk;
// Scaled: with the scales that cover each k (block-scaled datapaths).
template <bool Scaled>
__global__ void __launch_bounds__(kExactThreads) exact_gemm_kernel(Datapath dp, Problem p) {
  const std::int64_t element =
      static_cast<std::int64_t>(blockIdx.x) * kExactThreads + static_cast<int>(threadIdx.x);
  if (element >= static_cast<std::int64_t>(p.m) * p.n) return;
  const int i = static_cast<int>(element % p.m), j = static_cast<int>(element / p.m);
  const auto operands = [&](std::int64_t kk) {
    const Decoded a = decode(dp.input, p.a.get(i, kk));
    const Decoded b = decode(dp.b_format(), p.b.get(kk, j));
    if constexpr (Scaled) {
      const std::int64_t s = kk / dp.block_scaling.scale_block;
      return tcemu::detail::ScaledOperands{a, b,
                                           decode(dp.block_scaling.scale_a, p.scales.a.get(i, s)),
                                           decode(dp.block_scaling.scale_b, p.scales.b.get(s, j))};
    } else {
      return tcemu::detail::Operands{a, b};
    }
  };
  const std::uint32_t initial = initial_bits(dp, p, i, j);
  std::uint32_t out;
  if (p.takeout_instructions == 0) {
    out = tcemu::detail::exact_mma_chain(dp, p.k, initial, operands);
  } else {
    const std::int64_t chunk = static_cast<std::int64_t>(p.takeout_instructions) * dp.instruction_k;
    out = initial;
    for (std::int64_t first = 0; first < p.k; first += chunk) {
      const std::int64_t count = std::min<std::int64_t>(chunk, p.k - first);
      const std::uint32_t part =
          tcemu::detail::exact_mma_chain(dp, count, encode_zero(dp.accumulator, false),
                                         [&](std::int64_t kk) { return operands(first + kk); });
      out = fp32_add_rn(out, part);
    }
  }
  store(dp, p, i, j, out);
}

// flag <- 1 when x holds an Inf or NaN of `format` (a NaN scale, for a scale format).
__global__ void find_nonfinite_kernel(FloatFormat format, DeviceMatrix x, int* flag) {
  for_each_element(x.rows, x.cols, x.row_major, [&](std::int64_t i, std::int64_t j) {
    const ValueClass vc = decode(format, x.get(i, j)).value_class;
    if (vc == ValueClass::infinity || vc == ValueClass::nan) *flag = 1;
  });
}

// True when A, B or a scale is Inf or NaN: the binary64 kernel does not apply.
bool has_nonfinite(const Datapath& dp, const Problem& p, int* flag) {
  TCEMU_CUDA_CHECK(cudaMemset(flag, 0, sizeof(int)));
  const std::pair<const DeviceMatrix*, FloatFormat> matrices[] = {
      {&p.a, dp.input},
      {&p.b, dp.b_format()},
      {&p.scales.a, dp.block_scaling.scale_a},
      {&p.scales.b, dp.block_scaling.scale_b}};
  for (const auto& [x, format] : matrices) {
    if ((x == &p.scales.a || x == &p.scales.b) && !dp.block_scaled()) continue;
    if (x->rows == 0 || x->cols == 0) continue;
    find_nonfinite_kernel<<<elementwise_grid(x->rows, x->cols, x->row_major, 256), 256>>>(format,
                                                                                          *x, flag);
    TCEMU_CUDA_CHECK(cudaGetLastError());
  }
  int found = 0;
  TCEMU_CUDA_CHECK(cudaMemcpy(&found, flag, sizeof found, cudaMemcpyDeviceToHost));
  return found != 0;
}

// The binary64 kernel's launch (its operand tables first, where the inputs have at most 16 bits).
void launch_binary64(const Datapath& dp, const Problem& p, void* scratch) {
  const int stage_slots = dp.block_terms * std::max(1, kStageSlots / dp.block_terms);
  const auto bytes = static_cast<std::size_t>(stage_slots) * kTile * 2 * (sizeof(double) + 4);
  const auto table_at = [&](int which) {
    auto* base = static_cast<unsigned char*>(scratch) + kOperandTableOffset +
                 static_cast<std::size_t>(which) * kOperandTableBytes;
    return OperandTable{reinterpret_cast<double*>(base),
                        reinterpret_cast<int*>(base + kOperandTableEntries * sizeof(double))};
  };
  const OperandTable table_a = table_at(0);
  const OperandTable table_b = dp.has_input_b ? table_at(1) : table_a;
  const bool use_table = dp.input.container_bits() <= 16 && dp.b_format().container_bits() <= 16;
  if (use_table) {
    fill_operand_table<<<static_cast<unsigned>(kOperandTableEntries / 256), 256>>>(dp.input,
                                                                                   table_a);
    TCEMU_CUDA_CHECK(cudaGetLastError());
    if (dp.has_input_b) {
      fill_operand_table<<<static_cast<unsigned>(kOperandTableEntries / 256), 256>>>(dp.b_format(),
                                                                                     table_b);
      TCEMU_CUDA_CHECK(cudaGetLastError());
    }
  }
  // The instance for ZeroSign, the operand table and the scales (the scaled formats, at most 8
  // bits, always take the table).
  using Kernel = void (*)(Datapath, Binary64Grid, Problem, int, OperandTable, OperandTable);
  const bool ieee = dp.zero_sign == ZeroSign::ieee;
  Kernel kernel = nullptr;
  if (dp.block_scaled()) {
    if (!use_table) throw std::logic_error("launch_binary64: scaled operands wider than 16 bits");
    kernel =
        ieee ? binary64_gemm_kernel<true, true, true> : binary64_gemm_kernel<false, true, true>;
  } else if (use_table) {
    kernel =
        ieee ? binary64_gemm_kernel<true, true, false> : binary64_gemm_kernel<false, true, false>;
  } else {
    kernel =
        ieee ? binary64_gemm_kernel<true, false, false> : binary64_gemm_kernel<false, false, false>;
  }
  TCEMU_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(bytes)));
  const dim3 grid((p.n + kTile - 1) / kTile, (p.m + kTile - 1) / kTile);
  kernel<<<grid, kThreads, bytes>>>(dp, tcemu::detail::binary64_grid(dp), p, stage_slots, table_a,
                                    table_b);
}

// The group kernel's launch, specialised for groups of 16 (every preset's) and ZeroSign.
void launch_groups(const Datapath& dp, const Problem& p) {
  const int stage_slots = dp.block_terms * std::max(1, kGroupStageSlots / dp.block_terms);
  const std::size_t bytes = group_stage_bytes(stage_slots, dp.block_scaling.group_terms);
  const bool ieee = dp.zero_sign == ZeroSign::ieee;
  const bool sixteen = dp.block_scaling.group_terms == 16;
  const auto kernel = ieee ? (sixteen ? group_gemm_kernel<true, 16> : group_gemm_kernel<true, 0>)
                           : (sixteen ? group_gemm_kernel<false, 16> : group_gemm_kernel<false, 0>);
  TCEMU_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(bytes)));
  const dim3 grid((p.n + kTile - 1) / kTile, (p.m + kTile - 1) / kTile);
  kernel<<<grid, kThreads, bytes>>>(dp, tcemu::detail::binary64_grid(dp), p, stage_slots);
}

}  // namespace

EmulatedKernel launch_emulated_gemm(const Datapath& dp, const GemmOptions& options,
                                    const DeviceMatrix& a, const DeviceMatrix& b,
                                    const std::optional<DeviceMatrix>& c, const DeviceMatrix& d,
                                    const std::optional<DeviceScales>& scales, void* scratch) {
  Problem p{};
  p.a = a;
  p.b = b;
  if (scales) p.scales = *scales;
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
  if (p.m == 0 || p.n == 0) return EmulatedKernel::none;

  // k = 0 passes C through untouched (a NaN keeps its payload), which only the exact kernel does.
  // The group kernel takes every input (its elements have no Inf or NaN; it follows NaN scales and
  // an Inf or NaN c itself); the binary64 kernel finite operands and scales.
  EmulatedKernel kernel = EmulatedKernel::exact;
  if (p.k > 0 && tcemu::detail::scaled_groups_apply(dp)) {
    kernel = EmulatedKernel::groups;
    launch_groups(dp, p);
  } else if (p.k > 0 && tcemu::detail::binary64_applies(dp) &&
             !has_nonfinite(dp, p, static_cast<int*>(scratch))) {
    kernel = EmulatedKernel::binary64;
    launch_binary64(dp, p, scratch);
  } else {
    const std::int64_t elements = static_cast<std::int64_t>(p.m) * p.n;
    const unsigned blocks = static_cast<unsigned>((elements + kExactThreads - 1) / kExactThreads);
    if (scales) {
      exact_gemm_kernel<true><<<blocks, kExactThreads>>>(dp, p);
    } else {
      exact_gemm_kernel<false><<<blocks, kExactThreads>>>(dp, p);
    }
  }
  TCEMU_CUDA_CHECK(cudaGetLastError());
  return kernel;
}

}  // namespace tcemu::gpu::detail
