// One wgmma per case (sm_90a), for `tcemu probe --instr wgmma` and the wgmma tests: the operands
// and the descriptors are those of wgmma_operands.cuh.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/mma_runner.hpp>

#include "cuda_check.hpp"
#include "device_words.hpp"
#include "gemm/mma_fragments.cuh"
#include "wgmma_operands.cuh"

namespace tcemu::gpu {
namespace {

using detail::DeviceWords;
using detail::Instruction;

// d += A B through one wgmma, waited for. The fences order the accumulator registers (written
// by ordinary instructions) before the asynchronous instruction reads them.
template <Instruction I>
__device__ void wgmma(std::uint64_t a, std::uint64_t b, unsigned (&d)[4]) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  // The accumulators are the fence's operands, so that every ordinary instruction that writes
  // them (and every copy of them the compiler makes) comes before it; otherwise ptxas injects a
  // second fence in front of the wgmma (its info C7519).
  asm volatile("wgmma.fence.sync.aligned;\n"
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])::"memory");
#define TCEMU_WGMMA_F32(SHAPE_TYPES, TAIL)                                                 \
  asm volatile(                                                                            \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\nwgmma.mma_async.sync.aligned." SHAPE_TYPES \
      " {%0,%1,%2,%3}, %4, %5, p" TAIL ";\n}\n"                                            \
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])                                     \
      : "l"(a), "l"(b), "r"(1))
#define TCEMU_WGMMA_F16(SHAPE_TYPES, TAIL)                                                 \
  asm volatile(                                                                            \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\nwgmma.mma_async.sync.aligned." SHAPE_TYPES \
      " {%0,%1}, %2, %3, p" TAIL ";\n}\n"                                                  \
      : "+r"(d[0]), "+r"(d[1])                                                             \
      : "l"(a), "l"(b), "r"(1))
  if constexpr (I == Instruction::f16_f32) {
    TCEMU_WGMMA_F32("m64n8k16.f32.f16.f16", ", 1, 1, 0, 0");
  } else if constexpr (I == Instruction::f16_f16) {
    TCEMU_WGMMA_F16("m64n8k16.f16.f16.f16", ", 1, 1, 0, 0");
  } else if constexpr (I == Instruction::bf16_f32) {
    TCEMU_WGMMA_F32("m64n8k16.f32.bf16.bf16", ", 1, 1, 0, 0");
  } else if constexpr (I == Instruction::tf32_f32) {
    TCEMU_WGMMA_F32("m64n8k8.f32.tf32.tf32", ", 1, 1");
  } else if constexpr (I == Instruction::e4m3_f32) {
    TCEMU_WGMMA_F32("m64n8k32.f32.e4m3.e4m3", ", 1, 1");
  } else if constexpr (I == Instruction::e4m3_f16) {
    TCEMU_WGMMA_F16("m64n8k32.f16.e4m3.e4m3", ", 1, 1");
  } else if constexpr (I == Instruction::e5m2_f32) {
    TCEMU_WGMMA_F32("m64n8k32.f32.e5m2.e5m2", ", 1, 1");
  } else {
    TCEMU_WGMMA_F16("m64n8k32.f16.e5m2.e5m2", ", 1, 1");
  }
#undef TCEMU_WGMMA_F32
#undef TCEMU_WGMMA_F16
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#else
  __trap();  // the host refuses devices other than sm_90 before launching
#endif
}

// One block (one warpgroup) per case; inputs are K container words per case.
template <Instruction I>
__global__ void wgmma_cases(const std::uint32_t* a_bits, const std::uint32_t* b_bits,
                            const std::uint32_t* c_bits, std::uint32_t* d_bits) {
  __shared__ __align__(128) unsigned char a[detail::kWgmmaOperandBytes];
  __shared__ __align__(128) unsigned char b[detail::kWgmmaOperandBytes];
  constexpr int k = detail::instruction_k(I);
  constexpr bool half = detail::fp16_accumulator(I);
  const int lane = static_cast<int>(threadIdx.x);
  const long long id = blockIdx.x;
  for (int i = lane; i < detail::kWgmmaOperandBytes; i += blockDim.x) a[i] = b[i] = 0;
  __syncthreads();
  if (lane == 0) {
    detail::put_wgmma_row(a, a_bits + id * k, k, detail::input_bytes(I));
    detail::put_wgmma_row(b, b_bits + id * k, k, detail::input_bytes(I));
  }
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  // Ordinary stores that the tensor cores read next: order them for the async proxy.
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
  __syncthreads();
  unsigned d[4] = {0, 0, 0, 0};
  if (lane == 0) d[0] = half ? (c_bits[id] & 0xFFFFu) : c_bits[id];
  wgmma<I>(detail::wgmma_descriptor(a), detail::wgmma_descriptor(b), d);
  if (lane == 0) d_bits[id] = half ? (d[0] & 0xFFFFu) : d[0];
}

template <Instruction I>
std::vector<std::uint32_t> launch(std::span<const MmaCase> cases) {
  constexpr int k = detail::instruction_k(I);
  std::vector<std::uint32_t> a, b, c;
  for (const MmaCase& x : cases) {
    a.insert(a.end(), x.a.begin(), x.a.end());
    b.insert(b.end(), x.b.begin(), x.b.end());
    c.push_back(x.c);
  }
  static_assert(k > 0);
  const DeviceWords da(a), db(b), dc(c);
  DeviceWords dd(cases.size());
  constexpr std::size_t kMaxBlocks = 1u << 30;
  for (std::size_t first = 0; first < cases.size(); first += kMaxBlocks) {
    const std::size_t count = std::min(kMaxBlocks, cases.size() - first);
    wgmma_cases<I><<<static_cast<unsigned>(count), 128>>>(
        da.get() + first * k, db.get() + first * k, dc.get() + first, dd.get() + first);
    TCEMU_CUDA_CHECK(cudaGetLastError());
  }
  TCEMU_CUDA_CHECK(cudaDeviceSynchronize());
  return dd.to_host();
}

}  // namespace

std::vector<std::pair<FloatFormat, FloatFormat>> wgmma_pairs(int compute_capability) {
  if (compute_capability != 90) return {};
  return mma_sync_pairs(compute_capability);
}

std::vector<std::uint32_t> run_wgmma(const FloatFormat& input, const FloatFormat& accumulator,
                                     std::span<const MmaCase> cases) {
  check_case_k(input, cases, "wgmma");
  check_mma_sync(input, accumulator);  // the same format pairs
  const DeviceInfo device = require_device();
  if (device.compute_major != 9 || device.compute_minor != 0) {
    throw std::runtime_error("wgmma needs an sm_90a device (compute capability 9.0); " +
                             device.name + " has " + std::to_string(device.compute_major) + "." +
                             std::to_string(device.compute_minor));
  }
  if (cases.empty()) return {};
  return detail::with_instruction(detail::mma_sync_instruction(input, accumulator),
                                  [&](auto instruction) { return launch<instruction()>(cases); });
}

}  // namespace tcemu::gpu
