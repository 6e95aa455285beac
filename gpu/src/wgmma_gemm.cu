// A wgmma GEMM for sm_90a (GemmEngine::wgmma of the GPU backend): fp16 or bf16 inputs, fp32
// accumulator, D = A B (+ C), the hardware counterpart of emulated_gemm with the sm90 wgmma preset.
//
// k order, fixed as in tiled_mma_gemm.hpp: every output element is the chain of wgmma.m64n256k16
// instructions over k = 0, 16, 32, ... in increasing order, each taking the previous result as its
// accumulator; no split-k. (On the H200 wgmma's fp16/bf16 datapath is mma.sync's: docs/gpu.md.)
// The chain runs on to the end of the last 64-element k tile: instructions past k see only zero
// operands (the copy engine fills reads past the tensor with zeros). On the sm90 datapath an
// instruction whose products are all zero returns its C unchanged except for -0 (made +0) and a
// NaN (made the canonical 0x7FFFFFFF); no instruction ever returns -0 (zero sums are +0) or
// another NaN, so after the first instruction these trailing ones change no bit. (k = 0 issues
// none.)
//
// Thread block: three warpgroups. Warpgroup 0 is the producer: one thread issues the bulk tensor
// copies (TMA) of 128 x 64 of A and 256 x 64 of B per k tile into a 4-stage ring of shared memory,
// each stage guarded by a "full" mbarrier (the copies' bytes arrived) and an "empty" one (every
// consumer warp is done reading it). Warpgroups 1 and 2 are the consumers: 64 rows x 256 columns
// of D each, four wgmma per k tile with one tile of instructions left in flight. Tiles are stored
// K-major with the 128-byte swizzle (each 128-byte row's 16-byte chunks permuted by row % 8, as
// the copy engine writes them and wgmma reads them), so 8 rows form a 1024-byte atom.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "cuda_check.hpp"
#include "gemm_epilogue.cuh"
#include "wgmma_gemm.hpp"

namespace tcemu::gpu::detail {
namespace {

constexpr int kBlockM = 128, kBlockN = 256, kStages = 4;
constexpr int kTileK = kTileBytes / 2;  // 64 two-byte elements
constexpr int kConsumers = 2, kThreads = 128 * (1 + kConsumers);
constexpr int kATileBytes = kBlockM * kTileBytes, kBTileBytes = kBlockN * kTileBytes;
constexpr int kStageBytes = kATileBytes + kBTileBytes;
constexpr int kAtomBytes = 1024;  // 8 rows of 128 bytes: the stride between core-matrix rows
// Stages, then the 2 x kStages mbarriers; + kAtomBytes to align the stages to the swizzle atom.
constexpr int kSharedBytes = kStages * kStageBytes + 2 * kStages * 8 + kAtomBytes;

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// Shared-memory matrix descriptor of a K-major tile with the 128-byte swizzle: start address,
// leading byte offset 1 (unused by swizzled K-major layouts), stride byte offset 1024 (8 rows),
// layout type 1 in bits 62-63. Advancing k by 16 elements adds 32 bytes to the start address
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

// d += A B through one wgmma.m64n256k16 with fp32 accumulators d[0..127]; ELEMENT is "f16" or
// "bf16". Both operands K-major (transpose flags 0), scales +1.
#define TCEMU_WGMMA_M64N256K16(ELEMENT)                                                            \
  asm volatile(                                                                                    \
      "wgmma.mma_async.sync.aligned.m64n256k16.f32." ELEMENT "." ELEMENT                           \
      " "                                                                                          \
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "     \
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, " \
      "%37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, " \
      "%55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, " \
      "%73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, " \
      "%91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, "    \
      "%107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, " \
      "%122, %123, %124, %125, %126, %127}, %128, %129, 1, 1, 1, 0, 0;\n"                          \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),        \
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),    \
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), \
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), \
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), \
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), \
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), \
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), \
        "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), \
        "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), \
        "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), \
        "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), \
        "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), \
        "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),          \
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),        \
        "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),        \
        "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),        \
        "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])         \
      : "l"(a), "l"(b))

template <Instruction I>
__device__ inline void wgmma_256(std::uint64_t a, std::uint64_t b, float (&d)[128]) {
  if constexpr (I == Instruction::f16_f32) {
    TCEMU_WGMMA_M64N256K16("f16");
  } else {
    TCEMU_WGMMA_M64N256K16("bf16");
  }
}
#undef TCEMU_WGMMA_M64N256K16

// Pins the accumulators to float registers at this point (emits nothing). Without it the compiler
// carries them through the k loop in integer registers and moves them in front of every wgmma,
// and ptxas then serializes the instructions (its warnings C7515/C7511).
__device__ inline void fence_accumulators(float (&d)[128]) {
#pragma unroll
  for (int j = 0; j < 128; ++j) asm volatile("" : "+f"(d[j])::"memory");
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

// InitialC: C is the first instruction's accumulator (else D goes through the epilogue). A
// template parameter, so that the accumulators' set-up is straight-line code.
template <Instruction I, bool InitialC>
__global__ void __launch_bounds__(kThreads, 1)
    wgmma_gemm(const TiledGemmArguments args, const __grid_constant__ CUtensorMap a_map,
               const __grid_constant__ CUtensorMap b_map) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ unsigned char shared_raw[];
  const unsigned raw = static_cast<unsigned>(__cvta_generic_to_shared(shared_raw));
  const unsigned base = (raw + kAtomBytes - 1) / kAtomBytes * kAtomBytes;
  const unsigned full = base + kStages * kStageBytes, empty = full + kStages * 8;
  const auto stage_a = [&](int stage) { return base + stage * kStageBytes; };
  const auto stage_b = [&](int stage) { return base + stage * kStageBytes + kATileBytes; };

  const int blocks_m = (args.m + kBlockM - 1) / kBlockM;
  const int blocks_n = (args.n + kBlockN - 1) / kBlockN;
  constexpr int group_rows = 8;  // blocks walk D in groups of 8 block rows (L2 reuse)
  const int id = static_cast<int>(blockIdx.x);
  const int per_group = group_rows * blocks_n;
  const int first_m = id / per_group * group_rows;
  const int group_size = min(blocks_m - first_m, group_rows);
  const int row0 = (first_m + id % per_group % group_size) * kBlockM;
  const int col0 = (id % per_group / group_size) * kBlockN;
  const int k_tiles = (args.k + kTileK - 1) / kTileK;
  const int warpgroup = static_cast<int>(threadIdx.x / 128);

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
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
        const int stage = tile % kStages;
        if (tile >= kStages) barrier_wait(empty + 8 * stage, (tile / kStages - 1) & 1);
        barrier_expect_bytes(full + 8 * stage, kStageBytes);
        tensor_copy(stage_a(stage), a_map, tile * kTileK, row0, full + 8 * stage);
        tensor_copy(stage_b(stage), b_map, tile * kTileK, col0, full + 8 * stage);
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

    float d[128];
#pragma unroll
    for (int j = 0; j < 128; ++j) {
      // Rows and columns past D read C's last ones: their accumulators are never stored.
      d[j] = InitialC ? static_cast<const float*>(args.c.data)[element_index(
                            args.c, min(row_of(j), args.m - 1), min(col_of(j), args.n - 1))]
                      : 0.0f;
    }
    fence_accumulators(d);
    for (int tile = 0; tile < k_tiles; ++tile) {
      const int stage = tile % kStages;
      barrier_wait(full + 8 * stage, (tile / kStages) & 1);
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
      for (int step = 0; step < kTileK / 16; ++step) {
        wgmma_256<I>(descriptor(stage_a(stage) + consumer * 64 * kTileBytes + step * 32),
                     descriptor(stage_b(stage) + step * 32), d);
      }
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      // Tile - 1's instructions are done: its stage may be refilled.
      asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
      if (tile > 0 && lane == 0) barrier_arrive(empty + 8 * ((tile - 1) % kStages));
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    fence_accumulators(d);
#pragma unroll
    for (int j = 0; j < 128; ++j) {
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

// The tensor map of `rows` k-contiguous rows of `k_elements` two-byte elements (k up to the end
// of its last instruction, whose zero padding KRows guarantees; reads past it are zero-filled), in
// boxes of `box_rows` x 64 elements with the 128-byte swizzle.
CUtensorMap tensor_map(const KRows& x, int rows, int k_elements, int box_rows) {
  CUtensorMap map{};
  const cuuint64_t size[2] = {static_cast<cuuint64_t>(k_elements), static_cast<cuuint64_t>(rows)};
  const cuuint64_t stride[1] = {static_cast<cuuint64_t>(x.ld_bytes)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(kTileK), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_stride[2] = {1, 1};
  const CUresult status = encode_tiled()(
      &map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, const_cast<void*>(x.data), size, stride, box,
      element_stride, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (status != CUDA_SUCCESS) {
    throw std::runtime_error("gpu: cuTensorMapEncodeTiled failed (CUresult " +
                             std::to_string(static_cast<int>(status)) + ") for " +
                             std::to_string(rows) + " rows of " + std::to_string(k_elements) +
                             " elements, ld " + std::to_string(x.ld_bytes) + " bytes");
  }
  return map;
}

template <Instruction I, bool InitialC>
void launch(const TiledGemmArguments& args, cudaStream_t stream) {
  const auto kernel = wgmma_gemm<I, InitialC>;
  TCEMU_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes));
  const int k_elements = (args.k + 15) / 16 * 16;
  const CUtensorMap a_map = tensor_map(args.a, args.m, k_elements, kBlockM);
  const CUtensorMap b_map = tensor_map(args.b, args.n, k_elements, kBlockN);
  const long long blocks =
      static_cast<long long>((args.m + kBlockM - 1) / kBlockM) * ((args.n + kBlockN - 1) / kBlockN);
  kernel<<<static_cast<unsigned>(blocks), kThreads, kSharedBytes, stream>>>(args, a_map, b_map);
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void launch_wgmma_gemm(Instruction instruction, const TiledGemmArguments& args,
                       cudaStream_t stream) {
  if (args.m == 0 || args.n == 0) return;
  const bool initial = args.c_is_initial_accumulator;
  if (instruction == Instruction::f16_f32) {
    return initial ? launch<Instruction::f16_f32, true>(args, stream)
                   : launch<Instruction::f16_f32, false>(args, stream);
  }
  initial ? launch<Instruction::bf16_f32, true>(args, stream)
          : launch<Instruction::bf16_f32, false>(args, stream);
}

}  // namespace tcemu::gpu::detail
