// A wgmma GEMM for sm_90a (GemmEngine::wgmma of the GPU backend): fp16 or bf16 inputs, fp32
// accumulator, D = A B (+ C), the hardware counterpart of emulated_gemm with the sm90 wgmma preset.
//
// k order, fixed as in tiled_mma_gemm.hpp: every output element is the chain of wgmma.m64n256k16
// instructions over k = 0, 16, 32, ... in increasing order, each taking the previous result as its
// accumulator; no split-k. (On the H200 wgmma's fp16/bf16 datapath is mma.sync's: docs/gpu.md.)
//
// Thread block: two warpgroups, 128 x 256 of D (64 rows each); k through shared memory in
// 64-element (128-byte) pieces, a 4-stage cp.async pipeline. Operands are stored without swizzling,
// K-major, as wgmma's "core matrices" of 8 rows x 16 bytes (128 contiguous bytes): 16-byte chunk c
// of row r of a stage at (r / 8) * 1024 + c * 128 + (r % 8) * 16, so core matrices adjacent in K
// are 128 bytes apart (the descriptor's leading byte offset) and adjacent in M or N 1024 (stride
// byte offset). Operand rows come as KRows (tiled_mma_gemm.hpp), so the GPU backend packs for it as
// for the tiled kernel.
#include <cuda_runtime.h>

#include "cuda_check.hpp"
#include "gemm_epilogue.cuh"
#include "wgmma_gemm.hpp"

namespace tcemu::gpu::detail {
namespace {

constexpr int kBlockM = 128, kBlockN = 256, kStages = 4, kThreads = 256;
constexpr int kStageBytes = (kBlockM + kBlockN) * kTileBytes;
constexpr int kSharedBytes = kStages * kStageBytes;
constexpr int kLeadingBytes = 128, kStrideBytes = 1024;

__device__ inline int core_offset(int row, int chunk) {
  return (row / 8) * kStrideBytes + chunk * kLeadingBytes + (row % 8) * 16;
}

__device__ inline std::uint64_t descriptor(unsigned shared_address) {
  return ((static_cast<std::uint64_t>(shared_address) & 0x3FFFF) >> 4) |
         (static_cast<std::uint64_t>(kLeadingBytes >> 4) << 16) |
         (static_cast<std::uint64_t>(kStrideBytes >> 4) << 32);  // no swizzle (bits 62-63: 0)
}

__device__ inline void cp_async_16(unsigned destination, const void* source, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(destination), "l"(source),
               "r"(valid ? 16 : 0));
}

template <int Rows>
__device__ void load_rows(unsigned stage, const KRows& x, int first_row, int row_limit,
                          std::int64_t k_byte) {
  constexpr int per_thread = Rows * 8 / kThreads;
#pragma unroll
  for (int i = 0; i < per_thread; ++i) {
    // Consecutive threads take consecutive rows of one chunk column: 8 rows fill the 8 distinct
    // 16-byte positions of a core matrix, so a warp's stores do not collide in banks.
    const int index = static_cast<int>(threadIdx.x) + i * kThreads;
    const int row = (index % 8) + 8 * (index / 64), chunk = (index / 8) % 8;
    const bool valid = first_row + row < row_limit;
    const char* source = static_cast<const char*>(x.data);
    if (valid) source += (first_row + row) * x.ld_bytes + k_byte + chunk * 16;
    cp_async_16(stage + core_offset(row, chunk), source, valid);
  }
}

// The sm_90a synchronisation instructions the kernel needs; other targets never run it (the host
// launches it on sm_90 only) and trap.
enum class Sm90 { proxy_fence, wgmma_fence, wgmma_commit, wgmma_wait_all_but_one, wgmma_wait };
template <Sm90 What>
__device__ inline void sm90_asm() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (What == Sm90::proxy_fence) {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  } else if constexpr (What == Sm90::wgmma_fence) {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  } else if constexpr (What == Sm90::wgmma_commit) {
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  } else if constexpr (What == Sm90::wgmma_wait_all_but_one) {
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
  } else {
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  }
#else
  __trap();
#endif
}

// d += A B through one wgmma.m64n256k16 with fp32 accumulators d[0..127]; ELEMENT is "f16" or
// "bf16".
#define TCEMU_WGMMA_M64N256K16(ELEMENT)                                                            \
  asm volatile(                                                                                    \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                                                \
      "wgmma.mma_async.sync.aligned.m64n256k16.f32." ELEMENT "." ELEMENT                           \
      " "                                                                                          \
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "     \
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, " \
      "%37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, " \
      "%55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, " \
      "%73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, " \
      "%91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, "    \
      "%107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, " \
      "%122, %123, %124, %125, %126, %127}, %128, %129, p, 1, 1, 0, 0;\n}\n"                       \
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
      : "l"(a), "l"(b), "r"(1));

template <Instruction I>
__device__ void wgmma_256(std::uint64_t a, std::uint64_t b, float (&d)[128]) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (I == Instruction::f16_f32) {
    TCEMU_WGMMA_M64N256K16("f16");
  } else {
    TCEMU_WGMMA_M64N256K16("bf16");
  }
#else
  __trap();  // the host launches this kernel on sm_90 only
#endif
}
#undef TCEMU_WGMMA_M64N256K16

template <Instruction I>
__global__ void __launch_bounds__(kThreads, 1) wgmma_gemm(const TiledGemmArguments args) {
  extern __shared__ __align__(1024) unsigned char shared[];
  const int blocks_m = (args.m + kBlockM - 1) / kBlockM;
  const int blocks_n = (args.n + kBlockN - 1) / kBlockN;
  constexpr int group_rows = 8;  // blocks walk D in groups of 8 block rows (L2 reuse)
  const int id = static_cast<int>(blockIdx.x);
  const int per_group = group_rows * blocks_n;
  const int first_m = id / per_group * group_rows;
  const int group_size = min(blocks_m - first_m, group_rows);
  const int row0 = (first_m + id % per_group % group_size) * kBlockM;
  const int col0 = (id % per_group / group_size) * kBlockN;
  const int warpgroup = static_cast<int>(threadIdx.x / 128);
  const int warp = static_cast<int>(threadIdx.x / 32) % 4,
            lane = static_cast<int>(threadIdx.x % 32);
  // Accumulator j of a thread: n8 tile j / 4, slot e = j % 4 as in mma.sync's C layout.
  const auto row_of = [&](int j) {
    return row0 + warpgroup * 64 + warp * 16 + lane / 4 + 8 * ((j % 4) >> 1);
  };
  const auto col_of = [&](int j) { return col0 + (j / 4) * 8 + 2 * (lane % 4) + (j % 2); };

  float d[128];
#pragma unroll
  for (int j = 0; j < 128; ++j) {
    d[j] = 0.0f;
    if (args.c_is_initial_accumulator && row_of(j) < args.m && col_of(j) < args.n) {
      d[j] = __uint_as_float(load_accumulator<false>(args.c, row_of(j), col_of(j)));
    }
  }

  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  const std::int64_t k_bytes = static_cast<std::int64_t>(args.k) * 2;
  const int k_tiles = static_cast<int>((k_bytes + kTileBytes - 1) / kTileBytes);
  const int instructions = (args.k + 15) / 16;
  const auto load_tile = [&](int stage, int tile) {
    const unsigned a_stage = base + stage * kStageBytes;
    const std::int64_t k_byte = static_cast<std::int64_t>(tile) * kTileBytes;
    load_rows<kBlockM>(a_stage, args.a, row0, args.m, k_byte);
    load_rows<kBlockN>(a_stage + kBlockM * kTileBytes, args.b, col0, args.n, k_byte);
  };
#pragma unroll
  for (int s = 0; s < kStages - 2; ++s) {
    if (s < k_tiles) load_tile(s, s);
    asm volatile("cp.async.commit_group;\n" ::);
  }
  for (int tile = 0; tile < k_tiles; ++tile) {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kStages - 3));
    // The cp.async writes are read next by the tensor cores (the async proxy).
    sm90_asm<Sm90::proxy_fence>();
    __syncthreads();
    const unsigned a_stage = base + (tile % kStages) * kStageBytes;
    const unsigned b_stage = a_stage + kBlockM * kTileBytes;
    sm90_asm<Sm90::wgmma_fence>();
    // Instruction step reads 32 bytes of k: core-matrix columns 2 step and 2 step + 1. Past k
    // nothing is issued (only the last tile can end early).
    const auto issue = [&](int step) {
      wgmma_256<I>(descriptor(a_stage + warpgroup * 8 * kStrideBytes + step * 2 * kLeadingBytes),
                   descriptor(b_stage + step * 2 * kLeadingBytes), d);
    };
    if ((tile + 1) * 4 <= instructions) {
#pragma unroll
      for (int step = 0; step < 4; ++step) issue(step);
    } else {
      for (int step = 0; tile * 4 + step < instructions; ++step) issue(step);
    }
    sm90_asm<Sm90::wgmma_commit>();
    // Refill the stage tile - 2 used while this tile's instructions run: every warpgroup waited
    // for tile - 2's instructions (wait_group 1 below) before the barrier above.
    const int next = tile + kStages - 2;
    if (next < k_tiles) load_tile(next % kStages, next);
    asm volatile("cp.async.commit_group;\n" ::);
    sm90_asm<Sm90::wgmma_wait_all_but_one>();  // tile - 1's instructions are done
  }
  sm90_asm<Sm90::wgmma_wait>();
  asm volatile("cp.async.wait_group 0;\n" ::);
#pragma unroll
  for (int j = 0; j < 128; ++j) {
    if (row_of(j) < args.m && col_of(j) < args.n) {
      store_result<false>(args, row_of(j), col_of(j), __float_as_uint(d[j]));
    }
  }
}

template <Instruction I>
void launch(const TiledGemmArguments& args, cudaStream_t stream) {
  const auto kernel = wgmma_gemm<I>;
  TCEMU_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes));
  const long long blocks =
      static_cast<long long>((args.m + kBlockM - 1) / kBlockM) * ((args.n + kBlockN - 1) / kBlockN);
  kernel<<<static_cast<unsigned>(blocks), kThreads, kSharedBytes, stream>>>(args);
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void launch_wgmma_gemm(Instruction instruction, const TiledGemmArguments& args,
                       cudaStream_t stream) {
  if (args.m == 0 || args.n == 0) return;
  if (instruction == Instruction::f16_f32) return launch<Instruction::f16_f32>(args, stream);
  launch<Instruction::bf16_f32>(args, stream);
}

}  // namespace tcemu::gpu::detail
