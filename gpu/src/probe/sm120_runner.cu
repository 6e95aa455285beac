// One sm_120a mma.sync per case (PTX ISA 9.7.14.5.14 "mma"): m16n8k32 .kind::f8f6f4 and
// .kind::mxf8f6f4.block_scale.scale_vec::1X, m16n8k64 .kind::mxf4.block_scale.scale_vec::2X and
// .kind::mxf4nvf4.block_scale.scale_vec::2X / 4X. Built for sm_120a only (gpu/CMakeLists.txt);
// blackwell_runner.cpp refuses every other device before calling here.
//
// Operands (blackwell_operands.hpp): lane t of group 0 (lanes 0-3) holds words t and 4 + t of the
// case's packed row of A in a0 and a2 and of its column of B in b0 and b1; every other register
// of A and B is 0, so D(0, 0) = (row 0 of A) . (column 0 of B) + C(0, 0), and C(0, 0) is slot 0
// of lane 0 (the C/D fragment of every m16n8 shape). Scales ("Block Scaling for mma.sync"): with
// selectors {byte-id 0, thread-id 0}, row r of scale_A comes from byte 0 (1X), bytes 0-1 (2X) or
// 0-3 (4X) of the scale-a-data of one lane of the quad 4 (r % 8) .. 4 (r % 8) + 1 and column n of
// scale_B from lane 4n; every lane passes the case's scale word, so row 0 and column 0 get the
// case's scales whichever of those lanes the hardware reads.
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "../cuda_check.hpp"
#include "../device_words.hpp"
#include "blackwell_cases.hpp"

namespace tcemu::gpu::detail {
namespace {

using tcgen05::Kind;

// .scale_vec::4X with .ue8m0 scales for mma.sync arrived in PTX ISA 9.1 (CUDA 13.1): earlier
// ptxas refuses it ("Illegal modifier '.scale_vec::4X' for instruction 'mma' with type '.ue8m0'").
#if defined(__CUDACC_VER_MAJOR__) && \
    (__CUDACC_VER_MAJOR__ > 13 || (__CUDACC_VER_MAJOR__ == 13 && __CUDACC_VER_MINOR__ >= 1))
constexpr bool kHasVec4Ue8m0 = true;
#else
constexpr bool kHasVec4Ue8m0 = false;
#endif

// The instruction of kind K on registers ra (4), rb (2), rc (4 fp32 or 2 fp16x2) into rd. A and
// B index the PTX type names below.
#define TCEMU_F32_REGS "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13}"
#define TCEMU_F16_REGS "{%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9}"
#define TCEMU_F32_OPERANDS                                                              \
  : "=r"(rd[0]), "=r"(rd[1]), "=r"(rd[2]), "=r"(rd[3])                                      \
  : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]), "r"(rc[0]), \
    "r"(rc[1]), "r"(rc[2]), "r"(rc[3])
#define TCEMU_SCALED_OPERANDS TCEMU_F32_OPERANDS, "r"(scale_a), "r"(scale_b)
#define TCEMU_F8F6F4(AT, BT)                                                               \
  if constexpr (Half) {                                                                    \
    asm volatile("mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f16." AT "." BT           \
                 ".f16 " TCEMU_F16_REGS ";\n"                                              \
                 : "=r"(rd[0]), "=r"(rd[1])                                                \
                 : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]), \
                   "r"(rc[0]), "r"(rc[1]));                                                \
  } else {                                                                                 \
    asm volatile("mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32." AT "." BT           \
                 ".f32 " TCEMU_F32_REGS ";\n" TCEMU_F32_OPERANDS);                         \
  }
#define TCEMU_MXF8F6F4(AT, BT)                                                                    \
  asm volatile(                                                                                   \
      "mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32." AT "." BT \
      ".f32.ue8m0 " TCEMU_F32_REGS ", %14, {0, 0}, %15, {0, 0};\n" TCEMU_SCALED_OPERANDS);
#define TCEMU_MXF4(KIND_VEC, STYPE)                                                      \
  asm volatile("mma.sync.aligned.m16n8k64.row.col." KIND_VEC ".f32.e2m1.e2m1.f32." STYPE \
               " " TCEMU_F32_REGS ", %14, {0, 0}, %15, {0, 0};\n" TCEMU_SCALED_OPERANDS);
#define TCEMU_B_TYPES(MACRO, AT) \
  if constexpr (B == 0) {        \
    MACRO(AT, "e5m2")            \
  } else if constexpr (B == 1) { \
    MACRO(AT, "e4m3")            \
  } else if constexpr (B == 2) { \
    MACRO(AT, "e3m2")            \
  } else if constexpr (B == 3) { \
    MACRO(AT, "e2m3")            \
  } else {                       \
    MACRO(AT, "e2m1")            \
  }
#define TCEMU_A_B_TYPES(MACRO)   \
  if constexpr (A == 0) {        \
    TCEMU_B_TYPES(MACRO, "e5m2") \
  } else if constexpr (A == 1) { \
    TCEMU_B_TYPES(MACRO, "e4m3") \
  } else if constexpr (A == 2) { \
    TCEMU_B_TYPES(MACRO, "e3m2") \
  } else if constexpr (A == 3) { \
    TCEMU_B_TYPES(MACRO, "e2m3") \
  } else {                       \
    TCEMU_B_TYPES(MACRO, "e2m1") \
  }

template <Kind K, ScaleVec V, bool Ue4m3, int A, int B, bool Half>
__device__ void mma(const unsigned (&ra)[4], const unsigned (&rb)[2], const unsigned (&rc)[4],
                    unsigned scale_a, unsigned scale_b, unsigned (&rd)[4]) {
#if defined(__CUDA_ARCH_FEAT_SM120_ALL)
  if constexpr (K == Kind::f8f6f4) {
    TCEMU_A_B_TYPES(TCEMU_F8F6F4)
  } else if constexpr (K == Kind::mxf8f6f4) {
    TCEMU_A_B_TYPES(TCEMU_MXF8F6F4)
  } else if constexpr (K == Kind::mxf4) {
    TCEMU_MXF4("kind::mxf4.block_scale.scale_vec::2X", "ue8m0")
  } else if constexpr (V == ScaleVec::x2) {
    TCEMU_MXF4("kind::mxf4nvf4.block_scale.scale_vec::2X", "ue8m0")
  } else if constexpr (Ue4m3) {
    TCEMU_MXF4("kind::mxf4nvf4.block_scale.scale_vec::4X", "ue4m3")
  } else if constexpr (kHasVec4Ue8m0) {
    TCEMU_MXF4("kind::mxf4nvf4.block_scale.scale_vec::4X", "ue8m0")
  } else {
    __trap();  // run_sm120_cases refuses it before launching
  }
#else
  (void)ra, (void)rb, (void)rc, (void)scale_a, (void)scale_b, (void)rd;
  __trap();  // only an sm_120a image runs this; the host refuses other devices before launching
#endif
}
#undef TCEMU_A_B_TYPES
#undef TCEMU_B_TYPES
#undef TCEMU_MXF4
#undef TCEMU_MXF8F6F4
#undef TCEMU_F8F6F4
#undef TCEMU_SCALED_OPERANDS
#undef TCEMU_F32_OPERANDS
#undef TCEMU_F16_REGS
#undef TCEMU_F32_REGS

// One warp per case (the header of this file).
template <Kind K, ScaleVec V, bool Ue4m3, int A, int B, bool Half>
__global__ void sm120_cases(const std::uint32_t* cases, std::uint32_t* d, int count) {
  const int warp = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / 32);
  if (warp >= count) return;  // whole warps: blockDim.x is a multiple of 32
  const int lane = static_cast<int>(threadIdx.x % 32);
  const std::uint32_t* x = cases + static_cast<long long>(warp) * kCaseWords;
  unsigned ra[4] = {0, 0, 0, 0}, rb[2] = {0, 0}, rc[4] = {0, 0, 0, 0}, rd[4] = {0, 0, 0, 0};
  if (lane < 4) {
    ra[0] = x[kCaseA + lane];
    ra[2] = x[kCaseA + 4 + lane];
    rb[0] = x[kCaseB + lane];
    rb[1] = x[kCaseB + 4 + lane];
  }
  if (lane == 0) rc[0] = Half ? (x[kCaseC] & 0xFFFFu) : x[kCaseC];
  mma<K, V, Ue4m3, A, B, Half>(ra, rb, rc, x[kCaseScaleA], x[kCaseScaleB], rd);
  if (lane == 0) d[warp] = Half ? (rd[0] & 0xFFFFu) : rd[0];
}

using Launch = void (*)(const std::uint32_t*, std::uint32_t*, int, unsigned);

template <Kind K, ScaleVec V, bool Ue4m3, int A, int B, bool Half>
void launch(const std::uint32_t* cases, std::uint32_t* d, int count, unsigned blocks) {
  sm120_cases<K, V, Ue4m3, A, B, Half><<<blocks, 256>>>(cases, d, count);
}

// The launcher of pair index = 5 a + b (the kinds of two formats).
template <Kind K, bool Half, int... I>
Launch pair_launcher(int index, std::integer_sequence<int, I...>) {
  constexpr Launch table[] = {&launch<K, ScaleVec::none, false, I / 5, I % 5, Half>...};
  return table[index];
}

}  // namespace

std::vector<std::uint32_t> run_sm120_cases(Kind kind, ScaleVec vec, bool ue4m3, int a, int b,
                                           bool fp16_result, std::span<const std::uint32_t> cases) {
  if (vec == ScaleVec::x4 && !ue4m3 && !kHasVec4Ue8m0) {
    throw std::runtime_error(
        "mma.sync .kind::mxf4nvf4.block_scale.scale_vec::4X with ue8m0 scales needs PTX ISA 9.1 "
        "(CUDA 13.1 or newer); this tcemu was built with an older CUDA toolkit");
  }
  const auto pairs = std::make_integer_sequence<int, 25>{};
  Launch run = nullptr;
  if (kind == Kind::f8f6f4) {
    run = fp16_result ? pair_launcher<Kind::f8f6f4, true>(5 * a + b, pairs)
                      : pair_launcher<Kind::f8f6f4, false>(5 * a + b, pairs);
  } else if (kind == Kind::mxf8f6f4) {
    run = pair_launcher<Kind::mxf8f6f4, false>(5 * a + b, pairs);
  } else if (kind == Kind::mxf4) {
    run = &launch<Kind::mxf4, ScaleVec::x2, false, 4, 4, false>;
  } else if (vec == ScaleVec::x2) {
    run = &launch<Kind::mxf4nvf4, ScaleVec::x2, false, 4, 4, false>;
  } else {
    run = ue4m3 ? &launch<Kind::mxf4nvf4, ScaleVec::x4, true, 4, 4, false>
                : &launch<Kind::mxf4nvf4, ScaleVec::x4, false, 4, 4, false>;
  }
  const std::size_t n = cases.size() / kCaseWords;
  if (n == 0) return {};
  const DeviceWords device_cases(std::vector<std::uint32_t>(cases.begin(), cases.end()));
  DeviceWords d(n);
  constexpr std::size_t kPerLaunch = std::size_t{1} << 24;  // cases (warps) per launch
  for (std::size_t first = 0; first < n; first += kPerLaunch) {
    const std::size_t count = std::min(kPerLaunch, n - first);
    run(device_cases.get() + first * kCaseWords, d.get() + first, static_cast<int>(count),
        static_cast<unsigned>((count * 32 + 255) / 256));
    TCEMU_CUDA_CHECK(cudaGetLastError());
  }
  TCEMU_CUDA_CHECK(cudaDeviceSynchronize());
  return d.to_host();
}

}  // namespace tcemu::gpu::detail
