// One wgmma per case (sm_90a), for `tcemu probe --instr wgmma` (N = 8) and --instr wgmma.m64nNkK
// (N = 16, 64, 128, 256) and the wgmma tests: the operands and the descriptors are those of
// wgmma_operands.cuh.
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/mma_runner.hpp>

#include "cuda_check.hpp"
#include "device_words.hpp"
#include "gemm/mma_fragments.cuh"
#include "wgmma_accumulators.cuh"
#include "wgmma_operands.cuh"

namespace tcemu::gpu {
namespace {

using detail::DeviceWords;
using detail::Instruction;

// d += A B through one wgmma.m64nNkK, waited for: N = 8, 16, 64, 128, 256 for every pair (d holds
// N / 2 fp32 accumulators, or N / 4 registers of two fp16 accumulators). The fences order the
// accumulator registers (written by ordinary instructions) before the asynchronous instruction
// reads them.
template <Instruction I, int N, int Accumulators>
__device__ void wgmma(std::uint64_t a, std::uint64_t b, unsigned (&d)[Accumulators]) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  // The accumulators are the fence's operands, so that every ordinary instruction that writes
  // them (and every copy of them the compiler makes) comes before it; otherwise ptxas injects a
  // second fence in front of the wgmma (its info C7519).
#pragma unroll
  for (int i = 0; i < Accumulators; ++i) asm volatile("" : "+r"(d[i])::"memory");
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#define TCEMU_WGMMA_ASM(SHAPE_TYPES, TAIL, REGS, A, B, P, ...)                            \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " P                                      \
               ", 0;\nwgmma.mma_async.sync.aligned." SHAPE_TYPES " {" REGS "}, " A ", " B \
               ", p" TAIL ";\n}\n"                                                        \
               : __VA_ARGS__                                                              \
               : "l"(a), "l"(b), "r"(1))
// The fp32 accumulator of every input at one N (the K of the input's wgmma).
#define TCEMU_WGMMA_F32(NSTR, REGS, A, B, P, ...)                                                \
  if constexpr (I == Instruction::f16_f32) {                                                     \
    TCEMU_WGMMA_ASM("m64" NSTR "k16.f32.f16.f16", ", 1, 1, 0, 0", REGS, A, B, P, __VA_ARGS__);   \
  } else if constexpr (I == Instruction::bf16_f32) {                                             \
    TCEMU_WGMMA_ASM("m64" NSTR "k16.f32.bf16.bf16", ", 1, 1, 0, 0", REGS, A, B, P, __VA_ARGS__); \
  } else if constexpr (I == Instruction::tf32_f32) {                                             \
    TCEMU_WGMMA_ASM("m64" NSTR "k8.f32.tf32.tf32", ", 1, 1", REGS, A, B, P, __VA_ARGS__);        \
  } else if constexpr (I == Instruction::e4m3_f32) {                                             \
    TCEMU_WGMMA_ASM("m64" NSTR "k32.f32.e4m3.e4m3", ", 1, 1", REGS, A, B, P, __VA_ARGS__);       \
  } else {                                                                                       \
    TCEMU_WGMMA_ASM("m64" NSTR "k32.f32.e5m2.e5m2", ", 1, 1", REGS, A, B, P, __VA_ARGS__);       \
  }
// The fp16 accumulator of every input that has one.
#define TCEMU_WGMMA_F16(NSTR, REGS, A, B, P, ...)                                              \
  if constexpr (I == Instruction::f16_f16) {                                                   \
    TCEMU_WGMMA_ASM("m64" NSTR "k16.f16.f16.f16", ", 1, 1, 0, 0", REGS, A, B, P, __VA_ARGS__); \
  } else if constexpr (I == Instruction::e4m3_f16) {                                           \
    TCEMU_WGMMA_ASM("m64" NSTR "k32.f16.e4m3.e4m3", ", 1, 1", REGS, A, B, P, __VA_ARGS__);     \
  } else {                                                                                     \
    TCEMU_WGMMA_ASM("m64" NSTR "k32.f16.e5m2.e5m2", ", 1, 1", REGS, A, B, P, __VA_ARGS__);     \
  }
#define TCEMU_R(x) "+r"(x)
  if constexpr (detail::fp16_accumulator(I)) {
    static_assert(Accumulators == N / 4);
    if constexpr (N == 8) {
      TCEMU_WGMMA_F16("n8", "%0, %1", "%2", "%3", "%4", "+r"(d[0]), "+r"(d[1]))
    } else if constexpr (N == 16) {
      TCEMU_WGMMA_F16("n16", TCEMU_WGMMA_REGS4, "%4", "%5", "%6", TCEMU_WGMMA_ACC4(TCEMU_R, 0))
    } else if constexpr (N == 64) {
      TCEMU_WGMMA_F16("n64", TCEMU_WGMMA_REGS16, "%16", "%17", "%18", TCEMU_WGMMA_ACC16(TCEMU_R, 0))
    } else if constexpr (N == 128) {
      TCEMU_WGMMA_F16("n128", TCEMU_WGMMA_REGS32, "%32", "%33", "%34",
                      TCEMU_WGMMA_ACC32(TCEMU_R, 0))
    } else {
      static_assert(N == 256);
      TCEMU_WGMMA_F16("n256", TCEMU_WGMMA_REGS64, "%64", "%65", "%66",
                      TCEMU_WGMMA_ACC64(TCEMU_R, 0))
    }
  } else if constexpr (N == 8) {
    TCEMU_WGMMA_F32("n8", "%0, %1, %2, %3", "%4", "%5", "%6", "+r"(d[0]), "+r"(d[1]), "+r"(d[2]),
                    "+r"(d[3]))
  } else if constexpr (N == 16) {
    TCEMU_WGMMA_F32("n16", TCEMU_WGMMA_REGS8, "%8", "%9", "%10", TCEMU_WGMMA_ACC8(TCEMU_R, 0))
  } else if constexpr (N == 64) {
    TCEMU_WGMMA_F32("n64", TCEMU_WGMMA_REGS32, "%32", "%33", "%34", TCEMU_WGMMA_ACC32(TCEMU_R, 0))
  } else if constexpr (N == 128) {
    TCEMU_WGMMA_F32("n128", TCEMU_WGMMA_REGS64, "%64", "%65", "%66", TCEMU_WGMMA_ACC64(TCEMU_R, 0))
  } else {
    static_assert(N == 256);
    TCEMU_WGMMA_F32("n256", TCEMU_WGMMA_REGS128, "%128", "%129", "%130",
                    TCEMU_WGMMA_ACC64(TCEMU_R, 0), TCEMU_WGMMA_ACC64(TCEMU_R, 64))
  }
#undef TCEMU_R
#undef TCEMU_WGMMA_F16
#undef TCEMU_WGMMA_F32
#undef TCEMU_WGMMA_ASM
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#else
  __trap();  // the host refuses devices other than sm_90 before launching
#endif
}

// Bytes of a K-major B of N rows (wgmma_operands.cuh: core matrix (i, j) at (i + j) * 128).
constexpr int b_operand_bytes(int n) {
  return std::max(detail::kWgmmaOperandBytes, (n / 8 + 1) * detail::kWgmmaCoreBytes);
}

// One block (one warpgroup) per case; inputs are K container words per case.
template <Instruction I, int N>
__global__ void wgmma_cases(const std::uint32_t* a_bits, const std::uint32_t* b_bits,
                            const std::uint32_t* c_bits, std::uint32_t* d_bits) {
  __shared__ __align__(128) unsigned char a[detail::kWgmmaOperandBytes];
  __shared__ __align__(128) unsigned char b[b_operand_bytes(N)];
  constexpr int k = detail::instruction_k(I);
  constexpr bool half = detail::fp16_accumulator(I);
  const int lane = static_cast<int>(threadIdx.x);
  const long long id = blockIdx.x;
  for (int i = lane; i < detail::kWgmmaOperandBytes; i += blockDim.x) a[i] = 0;
  for (int i = lane; i < b_operand_bytes(N); i += blockDim.x) b[i] = 0;
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
  unsigned d[half ? N / 4 : N / 2] = {};
  if (lane == 0) d[0] = half ? (c_bits[id] & 0xFFFFu) : c_bits[id];
  wgmma<I, N>(detail::wgmma_descriptor(a), detail::wgmma_descriptor(b), d);
  // D(0, 0): register 0 of thread 0 for every N (the wgmma D layout, per warp of 16 rows).
  if (lane == 0) d_bits[id] = half ? (d[0] & 0xFFFFu) : d[0];
}

template <Instruction I, int N>
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
    wgmma_cases<I, N><<<static_cast<unsigned>(count), 128>>>(
        da.get() + first * k, db.get() + first * k, dc.get() + first, dd.get() + first);
    TCEMU_CUDA_CHECK(cudaGetLastError());
  }
  TCEMU_CUDA_CHECK(cudaDeviceSynchronize());
  return dd.to_host();
}

// The N that run_wgmma checked against wgmma_probe_n.
template <Instruction I>
std::vector<std::uint32_t> launch_n(int n, std::span<const MmaCase> cases) {
  switch (n) {
    case 8:
      return launch<I, 8>(cases);
    case 16:
      return launch<I, 16>(cases);
    case 64:
      return launch<I, 64>(cases);
    case 128:
      return launch<I, 128>(cases);
    default:
      return launch<I, 256>(cases);
  }
}

}  // namespace

std::vector<std::pair<FloatFormat, FloatFormat>> wgmma_pairs(int compute_capability) {
  if (compute_capability != 90) return {};
  return mma_sync_pairs(compute_capability);
}

std::vector<int> wgmma_probe_n() {
  return {8, 16, 64, 128, 256};
}

std::vector<std::uint32_t> run_wgmma(const FloatFormat& input, const FloatFormat& accumulator,
                                     std::span<const MmaCase> cases, int n) {
  check_case_k(input, cases, "wgmma");
  check_mma_sync(input, accumulator);  // the same format pairs
  const std::vector<int> ns = wgmma_probe_n();
  if (std::ranges::count(ns, n) == 0) {
    std::string list;
    for (int x : ns) list += (list.empty() ? "" : ", ") + std::to_string(x);
    throw std::invalid_argument("no wgmma runner for N = " + std::to_string(n) + " with " +
                                std::string(input.name) + " -> " + std::string(accumulator.name) +
                                "; it runs N = " + list);
  }
  const DeviceInfo device = require_device();
  if (device.compute_major != 9 || device.compute_minor != 0) {
    throw std::runtime_error("wgmma needs an sm_90a device (compute capability 9.0); " +
                             device.name + " has " + std::to_string(device.compute_major) + "." +
                             std::to_string(device.compute_minor));
  }
  if (cases.empty()) return {};
  return detail::with_instruction(
      detail::mma_sync_instruction(input, accumulator),
      [&](auto instruction) { return launch_n<instruction()>(n, cases); });
}

}  // namespace tcemu::gpu
