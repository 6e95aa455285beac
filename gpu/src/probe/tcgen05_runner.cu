// One sm_100a tcgen05.mma.cta_group::1 per case (PTX ISA 9.7.16 "Tensor Core 5th Generation
// Family Instructions"), one CTA of four warps per case. Built for sm_100a only
// (gpu/CMakeLists.txt); blackwell_runner.cpp refuses every other device before calling here.
//
//  1. Warp 0 allocates 32 Tensor Memory columns (tcgen05.alloc, "Tensor Memory Allocation"):
//     D = columns 0-15 (M = 128 rows in lanes 0-127, N = 16 columns of 32 bits; an fp16 D(0, 0)
//     in the low half of column 0 of lane 0 whether or not the hardware packs two fp16 a
//     column), A's scales columns 16-19, B's columns 20-23.
//  2. A (128 x K) and B (16 x K, its columns as K-major rows) go to shared memory without
//     swizzling, as grids of 8-row x 16-byte core matrices ("Shared Memory Matrix Layout"), with
//     leading and stride byte offsets both 128: core matrix (i, j) sits at (i + j) * 128 whichever
//     field the hardware reads for K and for M/N (the same argument as wgmma_operands.cuh). Only
//     row 0 of A and of B is nonzero: its 32 bytes in core matrices (0, 0) and (0, 1), at bytes
//     0-15 and 128-143; other rows overlap them, which changes only rows of D other than row 0.
//  3. The four warps write C into D with tcgen05.st (.32x32b, each warp its 32 lanes): C(0, 0) =
//     the case's c, every other element 0.
//  4. For the block-scaled kinds, a 32-row x 16-byte shared-memory matrix whose every 32-bit word
//     is the case's scale word goes to Tensor Memory with tcgen05.cp .32x128b.warpx4 (32 lanes x
//     4 columns, copied to all four lane quarters): every lane of every scale column then holds
//     the scale word, so row 0 of scale_A and column 0 of scale_B hold the case's scales however
//     the instruction maps rows and columns to lanes; the descriptor's scale bytes are 0 (scale j
//     in byte j: "Scale factor A/B ID").
//  5. Thread 0 issues the copies, tcgen05.mma with enable-input-d, and tcgen05.commit to an
//     mbarrier; every thread waits on it; warp 0 reads D(0, 0) (tcgen05.ld .32x32b.x1, lane 0)
//     and frees the columns (tcgen05.dealloc).
// The fences: fence.proxy.async.shared::cta orders the ordinary shared-memory stores before the
// tensor core's reads ("Async proxy"); tcgen05.fence::before_thread_sync / after_thread_sync order
// tcgen05 operations around the CTA barriers ("Memory Consistency Model for 5th generation of
// TensorCore operations"); tcgen05.cp and tcgen05.mma issued by one thread run in issue order
// (the "pipelined" pairs of the same section).
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>

#include "../cuda_check.hpp"
#include "../device_words.hpp"
#include "blackwell_cases.hpp"

namespace tcemu::gpu::detail {
namespace {

using tcgen05::Kind;

#if defined(__CUDA_ARCH_FEAT_SM100_ALL)
constexpr int kM = 128, kN = 16;
constexpr int kColumns = 32;  // allocated: a power of two, at least 32
constexpr int kScaleAColumn = 16, kScaleBColumn = 20;
constexpr int kCoreBytes = 128;
constexpr int kABytes = (kM / 8 + 1) * kCoreBytes;  // core matrices (i + j) * 128, i < 16, j < 2
constexpr int kBBytes = (kN / 8 + 1) * kCoreBytes;
constexpr int kScaleBytes = 4 * kCoreBytes;  // 32 rows x 16 bytes: core matrices 0-3

// The row's 32 bytes in core matrices (0, 0) and (0, 1).
__device__ void put_row(unsigned char* operand, const std::uint32_t* words) {
  for (int w = 0; w < kRowWords; ++w) {
    const int offset = 4 * w < 16 ? 4 * w : kCoreBytes + 4 * w - 16;
    for (int byte = 0; byte < 4; ++byte) {
      operand[offset + byte] = static_cast<unsigned char>(words[w] >> (8 * byte));
    }
  }
}

__device__ std::uint32_t shared_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

__device__ std::uint64_t descriptor(const void* p, std::uint32_t core_offset) {
  return tcgen05::shared_memory_descriptor(shared_address(p), core_offset, core_offset);
}

__device__ void fence_before_sync() {
  asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
}
__device__ void fence_after_sync() {
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
}

// d (Tensor Memory) = A B + d, one instruction of kind K (scale qualifier V).
template <Kind K, ScaleVec V>
__device__ void mma(std::uint32_t d, std::uint64_t a, std::uint64_t b, std::uint32_t idesc,
                    std::uint32_t scale_a, std::uint32_t scale_b) {
#define TCEMU_UNSCALED(KIND)                                                            \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\ntcgen05.mma.cta_group::1." KIND \
               " [%0], %1, %2, %3, p;\n}\n" ::"r"(d),                                   \
               "l"(a), "l"(b), "r"(idesc)                                               \
               : "memory")
#define TCEMU_SCALED(KIND_VEC)                                                              \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\ntcgen05.mma.cta_group::1." KIND_VEC \
               " [%0], %1, %2, %3, [%4], [%5], p;\n}\n" ::"r"(d),                           \
               "l"(a), "l"(b), "r"(idesc), "r"(scale_a), "r"(scale_b)                       \
               : "memory")
  if constexpr (K == Kind::f16) {
    TCEMU_UNSCALED("kind::f16");
  } else if constexpr (K == Kind::tf32) {
    TCEMU_UNSCALED("kind::tf32");
  } else if constexpr (K == Kind::f8f6f4) {
    TCEMU_UNSCALED("kind::f8f6f4");
  } else if constexpr (K == Kind::mxf8f6f4) {
    TCEMU_SCALED("kind::mxf8f6f4.block_scale.scale_vec::1X");
  } else if constexpr (K == Kind::mxf4) {
    TCEMU_SCALED("kind::mxf4.block_scale.scale_vec::2X");
  } else if constexpr (V == ScaleVec::x2) {
    TCEMU_SCALED("kind::mxf4nvf4.block_scale.scale_vec::2X");
  } else {
    TCEMU_SCALED("kind::mxf4nvf4.block_scale.scale_vec::4X");
  }
#undef TCEMU_SCALED
#undef TCEMU_UNSCALED
}
#endif

// One CTA of 128 threads per case (the header of this file).
template <Kind K, ScaleVec V>
__global__ void __launch_bounds__(128)
    tcgen05_cases(const std::uint32_t* cases, std::uint32_t idesc, bool half,
                  std::uint32_t* d_out) {
#if defined(__CUDA_ARCH_FEAT_SM100_ALL)
  __shared__ __align__(128) unsigned char a[kABytes];
  __shared__ __align__(128) unsigned char b[kBBytes];
  __shared__ __align__(128) std::uint32_t scales[2][kScaleBytes / 4];
  __shared__ __align__(8) std::uint64_t barrier;
  __shared__ std::uint32_t tmem_base;
  const int thread = static_cast<int>(threadIdx.x), warp = thread / 32;
  const std::uint32_t* x = cases + static_cast<long long>(blockIdx.x) * kCaseWords;

  if (warp == 0) {
    asm volatile(
        "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;\n"
        "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n" ::"r"(
            shared_address(&tmem_base)),
        "n"(kColumns)
        : "memory");
  }
  if (thread == 0) {
    // The initialisation made visible to the async proxy that tcgen05.commit arrives through.
    asm volatile(
        "mbarrier.init.shared::cta.b64 [%0], 1;\n"
        "fence.mbarrier_init.release.cluster;\n" ::"r"(shared_address(&barrier))
        : "memory");
  }
  for (int i = thread; i < kABytes; i += blockDim.x) a[i] = 0;
  for (int i = thread; i < kBBytes; i += blockDim.x) b[i] = 0;
  for (int i = thread; i < kScaleBytes / 4; i += blockDim.x) {
    scales[0][i] = x[kCaseScaleA];
    scales[1][i] = x[kCaseScaleB];
  }
  __syncthreads();
  if (thread == 0) {
    put_row(a, x + kCaseA);
    put_row(b, x + kCaseB);
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  fence_before_sync();
  __syncthreads();
  fence_after_sync();
  const std::uint32_t tmem = tmem_base;

  // C: each warp its 32 lanes of columns 0-15; C(0, 0) = c.
  std::uint32_t c[kN] = {};
  if (thread == 0) c[0] = half ? (x[kCaseC] & 0xFFFFu) : x[kCaseC];
  asm volatile(
      "tcgen05.st.sync.aligned.32x32b.x16.b32 [%0], {%1, %2, %3, %4, %5, %6, %7, %8, %9, %10, "
      "%11, %12, %13, %14, %15, %16};\n"
      "tcgen05.wait::st.sync.aligned;\n" ::"r"(tcgen05::tmem_address(tmem, 32 * warp, 0)),
      "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(c[5]), "r"(c[6]), "r"(c[7]),
      "r"(c[8]), "r"(c[9]), "r"(c[10]), "r"(c[11]), "r"(c[12]), "r"(c[13]), "r"(c[14]), "r"(c[15])
      : "memory");
  fence_before_sync();
  __syncthreads();
  fence_after_sync();

  if (thread == 0) {
    const std::uint32_t scale_a = tcgen05::tmem_address(tmem, 0, kScaleAColumn);
    const std::uint32_t scale_b = tcgen05::tmem_address(tmem, 0, kScaleBColumn);
    if constexpr (tcgen05::block_scaled(K)) {
      asm volatile(
          "tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;\n"
          "tcgen05.cp.cta_group::1.32x128b.warpx4 [%2], %3;\n" ::"r"(scale_a),
          "l"(descriptor(scales[0], kCoreBytes)), "r"(scale_b),
          "l"(descriptor(scales[1], kCoreBytes))
          : "memory");
    }
    mma<K, V>(tcgen05::tmem_address(tmem, 0, 0), descriptor(a, kCoreBytes),
              descriptor(b, kCoreBytes), idesc, scale_a, scale_b);
    asm volatile(
        "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n" ::"r"(
            shared_address(&barrier))
        : "memory");
  }
  std::uint32_t done = 0;
  while (done == 0) {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(shared_address(&barrier))
        : "memory");
  }
  fence_after_sync();
  if (warp == 0) {
    std::uint32_t d = 0;
    asm volatile(
        "tcgen05.ld.sync.aligned.32x32b.x1.b32 {%0}, [%1];\n"
        "tcgen05.wait::ld.sync.aligned;\n"
        : "=r"(d)
        : "r"(tcgen05::tmem_address(tmem, 0, 0))
        : "memory");
    if (thread == 0) d_out[blockIdx.x] = half ? (d & 0xFFFFu) : d;
  }
  fence_before_sync();
  __syncthreads();
  if (warp == 0) {
    fence_after_sync();
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;\n" ::"r"(tmem),
                 "n"(kColumns)
                 : "memory");
  }
#else
  (void)cases, (void)idesc, (void)half, (void)d_out;
  __trap();  // only an sm_100a image runs this; the host refuses other devices before launching
#endif
}

template <Kind K, ScaleVec V>
void launch(const std::uint32_t* cases, std::uint32_t idesc, bool half, std::uint32_t* d,
            unsigned count) {
  tcgen05_cases<K, V><<<count, 128>>>(cases, idesc, half, d);
}

}  // namespace

std::vector<std::uint32_t> run_tcgen05_cases(Kind kind, ScaleVec vec,
                                             std::uint32_t instruction_descriptor, bool fp16_result,
                                             std::span<const std::uint32_t> cases) {
  using Launch = void (*)(const std::uint32_t*, std::uint32_t, bool, std::uint32_t*, unsigned);
  Launch run = nullptr;
  switch (kind) {
    case Kind::f16:
      run = &launch<Kind::f16, ScaleVec::none>;
      break;
    case Kind::tf32:
      run = &launch<Kind::tf32, ScaleVec::none>;
      break;
    case Kind::f8f6f4:
      run = &launch<Kind::f8f6f4, ScaleVec::none>;
      break;
    case Kind::mxf8f6f4:
      run = &launch<Kind::mxf8f6f4, ScaleVec::x1>;
      break;
    case Kind::mxf4:
      run = &launch<Kind::mxf4, ScaleVec::x2>;
      break;
    case Kind::mxf4nvf4:
      run = vec == ScaleVec::x2 ? &launch<Kind::mxf4nvf4, ScaleVec::x2>
                                : &launch<Kind::mxf4nvf4, ScaleVec::x4>;
      break;
  }
  const std::size_t n = cases.size() / kCaseWords;
  if (n == 0) return {};
  const DeviceWords device_cases(std::vector<std::uint32_t>(cases.begin(), cases.end()));
  DeviceWords d(n);
  constexpr std::size_t kMaxBlocks = std::size_t{1} << 30;
  for (std::size_t first = 0; first < n; first += kMaxBlocks) {
    const std::size_t count = std::min(kMaxBlocks, n - first);
    run(device_cases.get() + first * kCaseWords, instruction_descriptor, fp16_result,
        d.get() + first, static_cast<unsigned>(count));
    TCEMU_CUDA_CHECK(cudaGetLastError());
  }
  TCEMU_CUDA_CHECK(cudaDeviceSynchronize());
  return d.to_host();
}

}  // namespace tcemu::gpu::detail
