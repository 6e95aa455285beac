// The tiled mma.sync GEMM of tiled_mma_gemm.hpp. One kernel for every input format: operands are
// handled as bytes, because every mma.sync shape reads 32 bytes of k per row (16 fp16/bf16,
// 8 tf32, 32 fp8) and ldmatrix hands each lane the 32-bit word that the PTX fragment layouts
// give it for all three element sizes (see load_fragments).
//
// Thread block: a bm x bn tile of D, warps_m x warps_n warps, each warp a (16 m_tiles) x
// (8 n_tiles) tile. k goes through shared memory in 128-byte pieces per row (kTileBytes), in a
// `stages`-deep cp.async pipeline.
#include <cuda_runtime.h>

#include <tcemu/emulator/convert.hpp>

#include "cuda_check.hpp"
#include "gemm/gemm_epilogue.cuh"
#include "gemm/tiled_mma_gemm.hpp"

namespace tcemu::gpu::detail {

namespace {

template <int BlockM, int BlockN, int WarpsM, int WarpsN, int Stages>
struct TileConfig {
  static constexpr int bm = BlockM, bn = BlockN, warps_m = WarpsM, warps_n = WarpsN;
  static constexpr int stages = Stages;
  static constexpr int threads = 32 * warps_m * warps_n;
  static constexpr int wm = bm / warps_m, wn = bn / warps_n;
  static constexpr int m_tiles = wm / 16, n_tiles = wn / 8;
  static constexpr int stage_bytes = (bm + bn) * kTileBytes;
  static constexpr int smem_bytes = stages * stage_bytes;
  static_assert(wm % 16 == 0 && wn % 16 == 0, "ldmatrix.x4 loads B for two n8 tiles at a time");
  static_assert((bm * kTileBytes / 16) % threads == 0 && (bn * kTileBytes / 16) % threads == 0);
};
// Warp tile 64 x 64: 128 accumulator registers per thread; 192 KiB of shared memory (sm_90).
using WideTiles = TileConfig<128, 256, 2, 4, 4>;
// Warp tile 64 x 32: leaves room for the take-out registers; 96 KiB (fits sm_89's 99 KiB).
using NarrowTiles = TileConfig<128, 128, 2, 4, 3>;

constexpr int kStepsPerTile = kTileBytes / 32;  // instructions per k tile (32 bytes of k each)

__device__ inline unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// A stage holds rows of kTileBytes bytes. 16-byte chunk c of row r is stored at chunk c ^ (r & 7):
// a row spans all 32 banks, and the 8 rows that one ldmatrix phase reads (one logical chunk of 8
// consecutive rows) then sit in 8 distinct chunk positions, so the phase has no bank conflict.
__device__ inline int swizzled(int row, int chunk) {
  return row * kTileBytes + ((chunk ^ (row & 7)) << 4);
}

__device__ inline void cp_async_16(unsigned destination, const void* source, bool valid) {
  // src-size 0 fills the 16 bytes with zeros without reading: rows past m or n.
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(destination), "l"(source),
               "r"(valid ? 16 : 0));
}
__device__ inline void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int Pending>
__device__ inline void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
}

__device__ inline void ldmatrix_x4(unsigned (&r)[4], unsigned address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

// Rows [first_row, first_row + Rows) of an operand, bytes [k_byte, k_byte + kTileBytes), into
// the stage at `stage`.
template <class Config, int Rows>
__device__ void load_rows(unsigned stage, const KRows& x, int first_row, int row_limit,
                          std::int64_t k_byte) {
  constexpr int chunks_per_row = kTileBytes / 16;
  constexpr int per_thread = Rows * chunks_per_row / Config::threads;
#pragma unroll
  for (int i = 0; i < per_thread; ++i) {
    const int index = static_cast<int>(threadIdx.x) + i * Config::threads;
    const int row = index / chunks_per_row, chunk = index % chunks_per_row;
    const bool valid = first_row + row < row_limit;
    const char* source = static_cast<const char*>(x.data);
    if (valid) source += (first_row + row) * x.ld_bytes + k_byte + chunk * 16;
    cp_async_16(stage + swizzled(row, chunk), source, valid);
  }
}

// The fragments of instruction `step` of a k tile. ldmatrix.x4 gives lane 4g+t word t of row g of
// each of its four 8-row matrices. For A (rows = m) the four matrices are (m 0-7, bytes 0-15),
// (m 8-15, bytes 0-15), (m 0-7, bytes 16-31), (m 8-15, bytes 16-31) of the instruction's 32 bytes:
// registers a0..a3 of the PTX layouts of m16n8k16 (fp16/bf16: elements 2t, 2t+1 and 2t+8, 2t+9),
// m16n8k8 (tf32: elements t and t+4) and m16n8k32 (fp8: elements 4t..4t+3 and 4t+16..4t+19).
template <class Config>
__device__ void load_a_fragments(unsigned a_stage, int step, int warp_m,
                                 unsigned (&fa)[Config::m_tiles][4]) {
  const int lane = static_cast<int>(threadIdx.x % 32);
#pragma unroll
  for (int mt = 0; mt < Config::m_tiles; ++mt) {
    const int row = warp_m * Config::wm + mt * 16 + (lane % 8) + 8 * ((lane / 8) % 2);
    ldmatrix_x4(fa[mt], a_stage + swizzled(row, 2 * step + lane / 16));
  }
}

// For B (rows = n) the four matrices are (n 0-7, bytes 0-15), (n 0-7, bytes 16-31),
// (n 8-15, bytes 0-15), (n 8-15, bytes 16-31): b0, b1 of n8 tiles 2 pair and 2 pair + 1.
template <class Config>
__device__ void load_b_pair(unsigned b_stage, int step, int warp_n, int pair, unsigned (&fb)[4]) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int row = warp_n * Config::wn + pair * 16 + (lane % 8) + 8 * (lane / 16);
  ldmatrix_x4(fb, b_stage + swizzled(row, 2 * step + (lane / 8) % 2));
}

// Slot e of a lane's accumulator registers for one 16 x 8 tile is element
// (group + 8 (e / 2), 2 tig + e % 2); an fp16 accumulator packs slots 2r and 2r + 1 into register
// r.
template <bool HalfAccumulator>
__device__ inline std::uint32_t slot(const unsigned (&tile)[4], int e) {
  if constexpr (HalfAccumulator) return (tile[e >> 1] >> (16 * (e & 1))) & 0xFFFFu;
  return tile[e];
}

// Where the accumulation leaves the tensor core (TiledGemmArguments::takeout_instructions = t).
enum class Takeout {
  never,              // t = 0: the whole of k is one chain in the accumulator registers
  every_instruction,  // t = 1: each instruction from a zero C, its result added to the fp32
                      // register; no accumulator registers live across instructions
  periodic,           // t > 1: chains of t instructions, each added to the fp32 register
};

template <Instruction I, class Config, Takeout T>
__global__ void __launch_bounds__(Config::threads, 1)
    tiled_mma_gemm(const TiledGemmArguments args) {
  extern __shared__ __align__(128) unsigned char shared[];
  constexpr bool half = fp16_accumulator(I);
  constexpr bool takes_out = T != Takeout::never;
  static_assert(!(takes_out && half), "the take-out add is an fp32 add");
  constexpr int in_bytes = input_bytes(I);
  constexpr int k_per_instruction = instruction_k(I);

  // Thread blocks walk D in groups of 8 block rows, so that blocks running together share
  // their A and B tiles in L2.
  const int blocks_m = (args.m + Config::bm - 1) / Config::bm;
  const int blocks_n = (args.n + Config::bn - 1) / Config::bn;
  constexpr int group_rows = 8;
  const int id = static_cast<int>(blockIdx.x);
  const int per_group = group_rows * blocks_n;
  const int first_m = id / per_group * group_rows;
  const int group_size = min(blocks_m - first_m, group_rows);
  const int block_m = first_m + id % per_group % group_size;
  const int block_n = id % per_group / group_size;
  const int row0 = block_m * Config::bm, col0 = block_n * Config::bn;

  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  const int warp_m = warp / Config::warps_n, warp_n = warp % Config::warps_n;
  const int group = lane / 4, tig = lane % 4;
  const auto row_of = [&](int mt, int e) {
    return row0 + warp_m * Config::wm + mt * 16 + group + 8 * (e >> 1);
  };
  const auto col_of = [&](int nt, int e) {
    return col0 + warp_n * Config::wn + nt * 8 + 2 * tig + (e & 1);
  };

  constexpr bool chains = T != Takeout::every_instruction;  // accumulator registers across k
  unsigned acc[chains ? Config::m_tiles : 1][chains ? Config::n_tiles : 1][4];
  float outside[takes_out ? Config::m_tiles : 1][takes_out ? Config::n_tiles : 1][4];
#pragma unroll
  for (int mt = 0; mt < Config::m_tiles; ++mt) {
#pragma unroll
    for (int nt = 0; nt < Config::n_tiles; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        if constexpr (chains) acc[mt][nt][e] = 0;
        if constexpr (takes_out) outside[mt][nt][e] = 0.0f;
      }
      if (!args.c_is_initial_accumulator) continue;
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = row_of(mt, e), col = col_of(nt, e);
        if (row >= args.m || col >= args.n) continue;
        const std::uint32_t c = load_accumulator<half>(args.c, row, col);
        if constexpr (takes_out) {
          outside[mt][nt][e] = __uint_as_float(c);
        } else if constexpr (half) {
          acc[mt][nt][e >> 1] |= c << (16 * (e & 1));
        } else {
          acc[mt][nt][e] = c;
        }
      }
    }
  }

  const unsigned base = shared_address(shared);
  const std::int64_t k_bytes = static_cast<std::int64_t>(args.k) * in_bytes;
  const int k_tiles = static_cast<int>((k_bytes + kTileBytes - 1) / kTileBytes);
  const int instructions = (args.k + k_per_instruction - 1) / k_per_instruction;
  const auto load_tile = [&](int stage, int tile) {
    const unsigned a_stage = base + stage * Config::stage_bytes;
    const std::int64_t k_byte = static_cast<std::int64_t>(tile) * kTileBytes;
    load_rows<Config, Config::bm>(a_stage, args.a, row0, args.m, k_byte);
    load_rows<Config, Config::bn>(a_stage + Config::bm * kTileBytes, args.b, col0, args.n, k_byte);
  };

#pragma unroll
  for (int s = 0; s < Config::stages - 1; ++s) {
    if (s < k_tiles) load_tile(s, s);
    cp_async_commit();
  }
  for (int tile = 0; tile < k_tiles; ++tile) {
    cp_async_wait<Config::stages - 2>();
    __syncthreads();  // tile's stage is complete, and every warp is done with the stage refilled
    const int next = tile + Config::stages - 1;
    if (next < k_tiles) load_tile(next % Config::stages, next);
    cp_async_commit();

    const unsigned a_stage = base + (tile % Config::stages) * Config::stage_bytes;
    const unsigned b_stage = a_stage + Config::bm * kTileBytes;
    const bool whole_tile = (tile + 1) * kStepsPerTile <= instructions;
#pragma unroll
    for (int step = 0; step < kStepsPerTile; ++step) {
      const int instruction = tile * kStepsPerTile + step;
      if (!whole_tile && instruction >= instructions) continue;  // past k: nothing is issued
      // B's fragments are loaded one pair of n8 tiles at a time: fewer live registers.
      unsigned fa[Config::m_tiles][4];
      load_a_fragments<Config>(a_stage, step, warp_m, fa);
#pragma unroll
      for (int pair = 0; pair < Config::n_tiles / 2; ++pair) {
        unsigned fb[4];
        load_b_pair<Config>(b_stage, step, warp_n, pair, fb);
        const unsigned b_low[2] = {fb[0], fb[1]}, b_high[2] = {fb[2], fb[3]};
        if constexpr (T == Takeout::every_instruction) {
          // All products of the pair first, then their adds: the adds wait for the mma results,
          // the independent mma hide that latency.
          const unsigned zero[4] = {0, 0, 0, 0};
          unsigned product[Config::m_tiles][2][4];
#pragma unroll
          for (int mt = 0; mt < Config::m_tiles; ++mt) {
            mma<I>(fa[mt], b_low, zero, product[mt][0]);
            mma<I>(fa[mt], b_high, zero, product[mt][1]);
          }
#pragma unroll
          for (int mt = 0; mt < Config::m_tiles; ++mt) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
#pragma unroll
              for (int e = 0; e < 4; ++e) {
                float& out = outside[mt][2 * pair + h][e];
                out = __fadd_rn(out, __uint_as_float(product[mt][h][e]));
              }
            }
          }
        } else {
#pragma unroll
          for (int mt = 0; mt < Config::m_tiles; ++mt) {
            mma<I>(fa[mt], b_low, acc[mt][2 * pair], acc[mt][2 * pair]);
            mma<I>(fa[mt], b_high, acc[mt][2 * pair + 1], acc[mt][2 * pair + 1]);
          }
        }
      }
      if constexpr (T == Takeout::periodic) {
        if ((instruction + 1) % args.takeout_instructions == 0 || instruction + 1 == instructions) {
#pragma unroll
          for (int mt = 0; mt < Config::m_tiles; ++mt) {
#pragma unroll
            for (int nt = 0; nt < Config::n_tiles; ++nt) {
#pragma unroll
              for (int e = 0; e < 4; ++e) {
                outside[mt][nt][e] = __fadd_rn(outside[mt][nt][e], __uint_as_float(acc[mt][nt][e]));
                acc[mt][nt][e] = 0;
              }
            }
          }
        }
      }
    }
  }
  cp_async_wait<0>();

#pragma unroll
  for (int mt = 0; mt < Config::m_tiles; ++mt) {
#pragma unroll
    for (int nt = 0; nt < Config::n_tiles; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = row_of(mt, e), col = col_of(nt, e);
        if (row >= args.m || col >= args.n) continue;
        std::uint32_t bits;
        if constexpr (takes_out) {
          bits = __float_as_uint(outside[mt][nt][e]);
        } else {
          bits = slot<half>(acc[mt][nt], e);
        }
        store_result<half>(args, row, col, bits);
      }
    }
  }
}

template <Instruction I, class Config, Takeout T>
void launch(const TiledGemmArguments& args, cudaStream_t stream) {
  const auto kernel = tiled_mma_gemm<I, Config, T>;
  TCEMU_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        Config::smem_bytes));
  const long long blocks = static_cast<long long>((args.m + Config::bm - 1) / Config::bm) *
                           ((args.n + Config::bn - 1) / Config::bn);
  kernel<<<static_cast<unsigned>(blocks), Config::threads, Config::smem_bytes, stream>>>(args);
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

template <Instruction I>
void launch_for(const TiledGemmArguments& args, cudaStream_t stream) {
  int device = 0, shared_limit = 0;
  TCEMU_CUDA_CHECK(cudaGetDevice(&device));
  TCEMU_CUDA_CHECK(
      cudaDeviceGetAttribute(&shared_limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const bool wide = shared_limit >= WideTiles::smem_bytes;
  if constexpr (fp16_accumulator(I)) {
    if (args.takeout_instructions > 0) {
      throw std::invalid_argument("the take-out add needs an fp32 accumulator");
    }
  } else {
    // Take-out every instruction holds one register set (the fp32 sums): the wide tiles fit.
    if (args.takeout_instructions == 1 && wide) {
      return launch<I, WideTiles, Takeout::every_instruction>(args, stream);
    }
    if (args.takeout_instructions == 1) {
      return launch<I, NarrowTiles, Takeout::every_instruction>(args, stream);
    }
    if (args.takeout_instructions > 1)
      return launch<I, NarrowTiles, Takeout::periodic>(args, stream);
  }
  if (wide) return launch<I, WideTiles, Takeout::never>(args, stream);
  launch<I, NarrowTiles, Takeout::never>(args, stream);
}

}  // namespace

void launch_tiled_mma_gemm(Instruction instruction, const TiledGemmArguments& args,
                           cudaStream_t stream) {
  if (args.m == 0 || args.n == 0) return;
  detail::with_instruction(instruction,
                           [&](auto constant) { launch_for<constant()>(args, stream); });
}

}  // namespace tcemu::gpu::detail
