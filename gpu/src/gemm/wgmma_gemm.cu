// A wgmma GEMM for sm_90a (GemmEngine::wgmma of the GPU backend): fp16, bf16 or tf32 inputs, fp32
// accumulator, D = A B (+ C), the hardware counterpart of emulated_gemm with the sm90 wgmma preset,
// with or without take-out.
//
// Instruction shape (gpu::kernel_instruction, presets.hpp names): wgmma.m64n256k16 for fp16 and
// bf16 and wgmma.m64n256k8 for tf32 without take-out, N = 128 with take-out; the sm90 wgmma
// preset is the same datapath for every N.
//
// k order, fixed as in tiled_mma_gemm.hpp: every output element is the chain of wgmma
// instructions (m64nNk16 for fp16/bf16, m64nNk8 for tf32) over k = 0, K, 2K, ... in increasing
// order, each taking the previous result as its accumulator; no split-k. (On the H200 wgmma's
// datapath for these formats is mma.sync's: docs/gpu.md.) With take-out every t instructions
// (TiledGemmArguments::takeout_instructions), the chain restarts after every t instructions
// (scale-d = 0: the instruction ignores its accumulator) and its result is added to an outside
// fp32 register with one add.rn.f32, as the tiled kernel and the emulator do.
//
// The chain runs on to the end of the last 128-byte k tile: instructions past k see only zero
// operands (the copy engine fills reads past the tensor with zeros). On the sm90 datapath an
// instruction whose products are all zero returns its C unchanged except for -0 (made +0) and a
// NaN (made the canonical 0x7FFFFFFF); no instruction ever returns -0 (zero sums are +0) or
// another NaN, so after the first instruction these trailing ones change no bit. With take-out
// they form chunks of value +0 or extend the last chunk, and adding +0 to an outside sum that has
// taken one chunk changes nothing either (RN sums are -0 only from two -0). (k = 0 issues none.)
//
// Thread block: three warpgroups. Warpgroup 0 is the producer: one thread issues the bulk tensor
// copies (TMA) of 128 x 128 bytes of A and N x 128 bytes of B per k tile into a ring of shared
// memory stages, each guarded by a "full" mbarrier (the copies' bytes arrived) and an "empty" one
// (every consumer warp is done reading it). Warpgroups 1 and 2 are the consumers: 64 rows x N
// columns of D each, four instructions per k tile. Without take-out N = 256 and one tile of
// instructions stays in flight; with take-out N = 128 (outside sums and chain fit the registers
// together) and every chunk is waited for before its add. Tiles are stored K-major with the
// 128-byte swizzle (each 128-byte row's 16-byte chunks permuted by row % 8, as the copy engine
// writes them and wgmma reads them), so 8 rows form a 1024-byte atom.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "cuda_check.hpp"
#include "gemm/gemm_epilogue.cuh"
#include "gemm/wgmma_gemm.hpp"
#include "wgmma_accumulators.cuh"

namespace tcemu::gpu::detail {
namespace {

constexpr int kBlockM = 128, kConsumers = 2, kThreads = 128 * (1 + kConsumers);
constexpr int kAtomBytes = 1024;  // 8 rows of 128 bytes: the stride between core-matrix rows

// Where the chain leaves the tensor core: never, or after every t instructions.
enum class Takeout { none, every_chunk };

template <Instruction I, Takeout T>
struct Config {
  static constexpr int element_bytes = input_bytes(I);
  static constexpr int tile_k = kTileBytes / element_bytes;  // k elements per stage
  static constexpr int block_n = T == Takeout::none ? 256 : 128;
  static constexpr int stages = T == Takeout::none ? 4 : 6;
  static constexpr int a_bytes = kBlockM * kTileBytes;
  static constexpr int stage_bytes = a_bytes + block_n * kTileBytes;
  // Stages, then 2 mbarriers per stage; + kAtomBytes to align the stages to the swizzle atom.
  static constexpr int shared_bytes = stages * stage_bytes + 2 * stages * 8 + kAtomBytes;
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

constexpr int kStepsPerTile = kTileBytes / 32;  // every instruction reads 32 bytes of each row

// Shared-memory matrix descriptor of a K-major tile with the 128-byte swizzle: start address,
// leading byte offset 1 (unused by swizzled K-major layouts), stride byte offset 1024 (8 rows),
// layout type 1 in bits 62-63. Advancing k by one instruction adds 32 bytes to the start address
// (the swizzle is applied by the hardware to the final addresses, as the copy engine applied it).
__device__ inline std::uint64_t descriptor(unsigned shared_address) {
  return ((static_cast<std::uint64_t>(shared_address) & 0x3FFFF) >> 4) | (std::uint64_t{1} << 16) |
         (static_cast<std::uint64_t>(kAtomBytes >> 4) << 32) | (std::uint64_t{1} << 62);
}

__device__ inline void barrier_init(unsigned barrier, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(barrier), "r"(count));
}

__device__ inline void barrier_wait(unsigned barrier, int parity) {
  asm volatile(
      "{\n.reg .pred done;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n}\n" ::"r"(barrier),
      "r"(parity)
      : "memory");
}

__device__ inline void barrier_arrive(unsigned barrier) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(barrier) : "memory");
}

__device__ inline void barrier_expect_bytes(unsigned barrier, int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(barrier), "r"(bytes)
               : "memory");
}

// Copies the box at (k element, row) of `map` to `destination`, completing on `barrier`.
__device__ inline void tensor_copy(unsigned destination, const CUtensorMap& map, int k, int row,
                                   unsigned barrier) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(destination),
      "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(k), "r"(row), "r"(barrier)
      : "memory");
}

template <int Registers>
__device__ inline void set_max_registers() {
  if constexpr (Registers > 128) {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Registers));
  } else {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Registers));
  }
}

__device__ inline void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ inline void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int Pending>
__device__ inline void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}

// d = A B + (scale_d ? d : 0) through one wgmma.m64nN (N = 2 x the accumulators) of instruction
// I, both operands K-major from shared memory (transpose flags 0 where the format has them).
#define TCEMU_WGMMA(SHAPE, REGS, A, B, SCALE_D, TAIL, ...)                                        \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " SCALE_D                                        \
               ", 0;\n"                                                                           \
               "wgmma.mma_async.sync.aligned.m64" SHAPE " {" REGS "}, " A ", " B ", p, 1, 1" TAIL \
               ";\n}\n"                                                                           \
               : __VA_ARGS__                                                                      \
               : "l"(a), "l"(b), "r"(scale_d))
#define TCEMU_F32_ACC64(i) TCEMU_WGMMA_ACC64("+f", i)
template <Instruction I, int Accumulators>
__device__ inline void wgmma(std::uint64_t a, std::uint64_t b, float (&d)[Accumulators],
                             int scale_d) {
  static_assert(Accumulators == 64 || Accumulators == 128);
  if constexpr (Accumulators == 128) {
    if constexpr (I == Instruction::f16_f32) {
      TCEMU_WGMMA("n256k16.f32.f16.f16", TCEMU_WGMMA_REGS128, "%128", "%129", "%130", ", 0, 0",
                  TCEMU_F32_ACC64(0), TCEMU_F32_ACC64(64));
    } else if constexpr (I == Instruction::bf16_f32) {
      TCEMU_WGMMA("n256k16.f32.bf16.bf16", TCEMU_WGMMA_REGS128, "%128", "%129", "%130", ", 0, 0",
                  TCEMU_F32_ACC64(0), TCEMU_F32_ACC64(64));
    } else {
      TCEMU_WGMMA("n256k8.f32.tf32.tf32", TCEMU_WGMMA_REGS128, "%128", "%129", "%130", "",
                  TCEMU_F32_ACC64(0), TCEMU_F32_ACC64(64));
    }
  } else {
    if constexpr (I == Instruction::f16_f32) {
      TCEMU_WGMMA("n128k16.f32.f16.f16", TCEMU_WGMMA_REGS64, "%64", "%65", "%66", ", 0, 0",
                  TCEMU_F32_ACC64(0));
    } else if constexpr (I == Instruction::bf16_f32) {
      TCEMU_WGMMA("n128k16.f32.bf16.bf16", TCEMU_WGMMA_REGS64, "%64", "%65", "%66", ", 0, 0",
                  TCEMU_F32_ACC64(0));
    } else {
      TCEMU_WGMMA("n128k8.f32.tf32.tf32", TCEMU_WGMMA_REGS64, "%64", "%65", "%66", "",
                  TCEMU_F32_ACC64(0));
    }
  }
}
#undef TCEMU_WGMMA
#undef TCEMU_F32_ACC64

// Pins the accumulators to float registers at this point (emits nothing). Without it the compiler
// carried them through the k loop in integer registers and moved them in front of every wgmma,
// and ptxas then serialized the instructions (its warnings C7515/C7511).
template <int Accumulators>
__device__ inline void fence_accumulators(float (&d)[Accumulators]) {
#pragma unroll
  for (int j = 0; j < Accumulators; ++j) asm volatile("" : "+f"(d[j])::"memory");
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

// InitialC: C is the first instruction's accumulator (else D goes through the epilogue). A
// template parameter, so that the accumulators' set-up is straight-line code.
template <Instruction I, bool InitialC, Takeout T>
__global__ void __launch_bounds__(kThreads, 1)
    wgmma_gemm(const TiledGemmArguments args, const __grid_constant__ CUtensorMap a_map,
               const __grid_constant__ CUtensorMap b_map) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using C = Config<I, T>;
  constexpr int kAccumulators = C::block_n / 2;  // 64 x block_n per 128 threads
  extern __shared__ unsigned char shared_raw[];
  const unsigned raw = static_cast<unsigned>(__cvta_generic_to_shared(shared_raw));
  const unsigned base = (raw + kAtomBytes - 1) / kAtomBytes * kAtomBytes;
  const unsigned full = base + C::stages * C::stage_bytes, empty = full + C::stages * 8;
  const auto stage_a = [&](int stage) { return base + stage * C::stage_bytes; };
  const auto stage_b = [&](int stage) { return base + stage * C::stage_bytes + C::a_bytes; };

  const int blocks_m = (args.m + kBlockM - 1) / kBlockM;
  const int blocks_n = (args.n + C::block_n - 1) / C::block_n;
  constexpr int group_rows = 8;  // blocks walk D in groups of 8 block rows (L2 reuse)
  const int id = static_cast<int>(blockIdx.x);
  const int per_group = group_rows * blocks_n;
  const int first_m = id / per_group * group_rows;
  const int group_size = min(blocks_m - first_m, group_rows);
  const int row0 = (first_m + id % per_group % group_size) * kBlockM;
  const int col0 = (id % per_group / group_size) * C::block_n;
  const int k_tiles = (args.k + C::tile_k - 1) / C::tile_k;
  const int warpgroup = static_cast<int>(threadIdx.x / 128);

  if (threadIdx.x == 0) {
    for (int s = 0; s < C::stages; ++s) {
      barrier_init(full + 8 * s, 1);
      barrier_init(empty + 8 * s, kConsumers * 4);  // lane 0 of every consumer warp
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  if (warpgroup == 0) {
    set_max_registers<40>();
    if (threadIdx.x == 0) {
      for (int tile = 0; tile < k_tiles; ++tile) {
        const int stage = tile % C::stages;
        if (tile >= C::stages) barrier_wait(empty + 8 * stage, (tile / C::stages - 1) & 1);
        barrier_expect_bytes(full + 8 * stage, C::stage_bytes);
        tensor_copy(stage_a(stage), a_map, tile * C::tile_k, row0, full + 8 * stage);
        tensor_copy(stage_b(stage), b_map, tile * C::tile_k, col0, full + 8 * stage);
      }
    }
  } else {
    set_max_registers<232>();
    const int consumer = warpgroup - 1;
    const int warp = static_cast<int>(threadIdx.x / 32) % 4,
              lane = static_cast<int>(threadIdx.x % 32);
    // Accumulator j of a thread: n8 tile j / 4, slot j % 4 as in mma.sync's C layout.
    const auto row_of = [&](int j) {
      return row0 + consumer * 64 + warp * 16 + lane / 4 + 8 * ((j % 4) >> 1);
    };
    const auto col_of = [&](int j) { return col0 + (j / 4) * 8 + 2 * (lane % 4) + (j % 2); };
    const auto release = [&](int tile) {
      if (lane == 0) barrier_arrive(empty + 8 * (tile % C::stages));
    };
    const auto instruction = [&](int stage, int step, float(&acc)[kAccumulators], int scale_d) {
      wgmma<I>(descriptor(stage_a(stage) + consumer * 64 * kTileBytes + step * 32),
               descriptor(stage_b(stage) + step * 32), acc, scale_d);
    };

    // d: the chain's accumulators, or with take-out the outside sums.
    float d[kAccumulators];
#pragma unroll
    for (int j = 0; j < kAccumulators; ++j) {
      // Rows and columns past D read C's last ones: their accumulators are never stored.
      d[j] = InitialC ? static_cast<const float*>(args.c.data)[element_index(
                            args.c, min(row_of(j), args.m - 1), min(col_of(j), args.n - 1))]
                      : 0.0f;
    }
    if constexpr (T == Takeout::none) {
      fence_accumulators(d);
      for (int tile = 0; tile < k_tiles; ++tile) {
        const int stage = tile % C::stages;
        barrier_wait(full + 8 * stage, (tile / C::stages) & 1);
        wgmma_fence();
#pragma unroll
        for (int step = 0; step < kStepsPerTile; ++step) instruction(stage, step, d, 1);
        wgmma_commit();
        wgmma_wait<1>();  // tile - 1's instructions are done: its stage may be refilled
        if (tile > 0) release(tile - 1);
      }
      wgmma_wait<0>();
      fence_accumulators(d);
    } else {
      // Take-out every t instructions: one chain, waited for at the end of each chunk; the two
      // consumer warpgroups' instructions and adds interleave. (Two chains on 64-column halves,
      // one half's add running while the other's instruction is in flight, made ptxas serialize
      // the instructions: C7514, a read of accumulators it cannot prove finished.)
      float chain[kAccumulators];
#pragma unroll
      for (int j = 0; j < kAccumulators; ++j) chain[j] = 0.0f;  // never read: scale-d = 0
      const int t = args.takeout_instructions;
      const auto take_out = [&] {
        wgmma_wait<0>();
        fence_accumulators(chain);
#pragma unroll
        for (int j = 0; j < kAccumulators; ++j) d[j] = __fadd_rn(d[j], chain[j]);
      };
      for (int tile = 0; tile < k_tiles; ++tile) {
        const int stage = tile % C::stages;
        barrier_wait(full + 8 * stage, (tile / C::stages) & 1);
#pragma unroll
        for (int step = 0; step < kStepsPerTile; ++step) {
          const int g = tile * kStepsPerTile + step;
          wgmma_fence();
          instruction(stage, step, chain, g % t != 0);  // scale-d = 0: a chunk starts
          // Each instruction its own group: a commit only on the chunk's last one, behind a
          // run-time condition, made ptxas inject wgmma fences at every commit (info C7519).
          wgmma_commit();
          if ((g + 1) % t == 0) take_out();
        }
        wgmma_wait<0>();
        release(tile);
      }
      if (k_tiles * kStepsPerTile % t != 0) take_out();
    }
#pragma unroll
    for (int j = 0; j < kAccumulators; ++j) {
      if (row_of(j) < args.m && col_of(j) < args.n) {
        store_result<false>(args, row_of(j), col_of(j), __float_as_uint(d[j]));
      }
    }
  }
#else
  __trap();  // the host launches this kernel on sm_90 only
#endif
}

// The driver's cuTensorMapEncodeTiled, reached through the runtime so that nothing links
// libcuda (which machines without a GPU driver lack).
PFN_cuTensorMapEncodeTiled_v12000 encode_tiled() {
  static const PFN_cuTensorMapEncodeTiled_v12000 function = [] {
    void* address = nullptr;
    cudaDriverEntryPointQueryResult found{};
    TCEMU_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &address, 12000,
                                                      cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || address == nullptr) {
      throw std::runtime_error("gpu: the CUDA driver has no cuTensorMapEncodeTiled");
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(address);
  }();
  return function;
}

// The tensor map of `rows` k-contiguous rows of `k_elements` elements of `element_bytes` (k up to
// the end of its last instruction, whose zero padding KRows guarantees; reads past it are
// zero-filled), in boxes of `box_rows` rows x `box_k` elements (128 bytes) with the 128-byte
// swizzle.
CUtensorMap tensor_map(const KRows& x, int rows, int k_elements, int element_bytes, int box_k,
                       int box_rows) {
  CUtensorMap map{};
  const cuuint64_t size[2] = {static_cast<cuuint64_t>(k_elements), static_cast<cuuint64_t>(rows)};
  const cuuint64_t stride[1] = {static_cast<cuuint64_t>(x.ld_bytes)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_k), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_stride[2] = {1, 1};
  const CUresult status = encode_tiled()(
      &map, element_bytes == 4 ? CU_TENSOR_MAP_DATA_TYPE_UINT32 : CU_TENSOR_MAP_DATA_TYPE_UINT16, 2,
      const_cast<void*>(x.data), size, stride, box, element_stride, CU_TENSOR_MAP_INTERLEAVE_NONE,
      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (status != CUDA_SUCCESS) {
    throw std::runtime_error("gpu: cuTensorMapEncodeTiled failed (CUresult " +
                             std::to_string(static_cast<int>(status)) + ") for " +
                             std::to_string(rows) + " rows of " + std::to_string(k_elements) +
                             " elements, ld " + std::to_string(x.ld_bytes) + " bytes");
  }
  return map;
}

template <Instruction I, bool InitialC, Takeout T>
void launch(const TiledGemmArguments& args, cudaStream_t stream) {
  using C = Config<I, T>;
  const auto kernel = wgmma_gemm<I, InitialC, T>;
  TCEMU_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, C::shared_bytes));
  const int k_per_instruction = instruction_k(I);
  const int k_elements = (args.k + k_per_instruction - 1) / k_per_instruction * k_per_instruction;
  // k = 0 issues no copies (and a tensor map of no elements does not exist).
  const CUtensorMap a_map =
      args.k == 0 ? CUtensorMap{}
                  : tensor_map(args.a, args.m, k_elements, C::element_bytes, C::tile_k, kBlockM);
  const CUtensorMap b_map =
      args.k == 0 ? CUtensorMap{}
                  : tensor_map(args.b, args.n, k_elements, C::element_bytes, C::tile_k, C::block_n);
  const long long blocks = static_cast<long long>((args.m + kBlockM - 1) / kBlockM) *
                           ((args.n + C::block_n - 1) / C::block_n);
  kernel<<<static_cast<unsigned>(blocks), kThreads, C::shared_bytes, stream>>>(args, a_map, b_map);
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

template <Instruction I, bool InitialC>
void launch_initial(const TiledGemmArguments& args, cudaStream_t stream) {
  if (args.takeout_instructions == 0) return launch<I, InitialC, Takeout::none>(args, stream);
  launch<I, InitialC, Takeout::every_chunk>(args, stream);
}

template <Instruction I>
void launch_instruction(const TiledGemmArguments& args, cudaStream_t stream) {
  args.c_is_initial_accumulator ? launch_initial<I, true>(args, stream)
                                : launch_initial<I, false>(args, stream);
}

}  // namespace

bool wgmma_computes(Instruction instruction) {
  return instruction == Instruction::f16_f32 || instruction == Instruction::bf16_f32 ||
         instruction == Instruction::tf32_f32;
}

void launch_wgmma_gemm(Instruction instruction, const TiledGemmArguments& args,
                       cudaStream_t stream) {
  if (args.m == 0 || args.n == 0) return;
  if (instruction == Instruction::f16_f32) {
    return launch_instruction<Instruction::f16_f32>(args, stream);
  }
  if (instruction == Instruction::bf16_f32) {
    return launch_instruction<Instruction::bf16_f32>(args, stream);
  }
  launch_instruction<Instruction::tf32_f32>(args, stream);
}

}  // namespace tcemu::gpu::detail
