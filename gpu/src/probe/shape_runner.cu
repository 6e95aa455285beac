// One case per instruction for the mma.sync shapes that mma_runner.cu does not run (m8n8k4,
// m16n8k8 fp16/bf16, m16n8k4 tf32, m16n8k16 fp8) and for the WMMA fragment shapes, plus the
// dispatch of run_instruction() over every shape.
//
// These runners broadcast the case: every row of A holds a, every column of B holds b and every
// element of C holds c, so every element of D is the same dot product a . b + c and any lane's
// register gives it. A lane therefore needs only the k index of each of its A and B slots (the
// PTX ISA's fragment layouts: "Matrix fragments for mma.m8n8k4 / m16n8k8 / m16n8k4 /
// m16n8k16"), and WMMA loads whole matrices from shared memory through load_matrix_sync.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <tcemu/emulator/presets.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/mma_runner.hpp>

#include "cuda_check.hpp"
#include "device_words.hpp"

namespace tcemu::gpu {
namespace {

using detail::DeviceWords;

// The new mma.sync shapes. Each: K, element bits, A and B registers per lane, the k index of
// slot e of a lane (tig = lane % 4), and the instruction on (a, b, c) registers; c holds the
// broadcast accumulator in every register.
enum class Op {  // the fp8 shapes last: op_k and op_bits rely on it
  f16_k8_f32,
  f16_k8_f16,
  bf16_k8_f32,
  tf32_k4_f32,
  f16_m884_f32,
  f16_m884_f16,
  e4m3_k16_f32,
  e4m3_k16_f16,
  e5m2_k16_f32,
  e5m2_k16_f16
};

__host__ __device__ constexpr int op_k(Op op) {
  return op == Op::tf32_k4_f32 || op == Op::f16_m884_f32 || op == Op::f16_m884_f16 ? 4
         : op >= Op::e4m3_k16_f32                                                  ? 16
                                                                                   : 8;
}
__host__ __device__ constexpr int op_bits(Op op) {
  return op == Op::tf32_k4_f32 ? 32 : op >= Op::e4m3_k16_f32 ? 8 : 16;
}
__host__ __device__ constexpr bool op_half_acc(Op op) {
  return op == Op::f16_k8_f16 || op == Op::f16_m884_f16 || op == Op::e4m3_k16_f16 ||
         op == Op::e5m2_k16_f16;
}
__host__ __device__ constexpr bool op_m884(Op op) {
  return op == Op::f16_m884_f32 || op == Op::f16_m884_f16;
}
// Slots per lane: A 2 registers for every shape here; B 1 register, 2 for m8n8k4.
__host__ __device__ constexpr int op_b_registers(Op op) {
  return op_m884(op) ? 2 : 1;
}

// k index of A slot e and B slot e of a lane (elements packed low first in each register).
template <Op O>
__device__ int a_k(int tig, int e) {
  if constexpr (op_m884(O)) return e;                       // row-major A: a_i is column i
  if constexpr (O == Op::tf32_k4_f32) return tig;           // a0 row g, a1 row g + 8
  if constexpr (op_bits(O) == 8) return tig * 4 + (e & 3);  // a0-a3 row g, a4-a7 row g + 8
  return tig * 2 + (e & 1);                                 // a0, a1 row g; a2, a3 row g + 8
}
template <Op O>
__device__ int b_k(int tig, int e) {
  if constexpr (op_m884(O)) return e;  // column-major B: b_i is row i
  if constexpr (O == Op::tf32_k4_f32) return tig;
  if constexpr (op_bits(O) == 8) return tig * 4 + e;
  return tig * 2 + e;
}

template <Op O>
__device__ void issue(const unsigned (&a)[2], const unsigned (&b)[2], unsigned c,
                      unsigned (&d)[8]) {
#define TCEMU_F32_4(SHAPE_TYPES, A, B)                                                          \
  asm volatile("mma.sync.aligned." SHAPE_TYPES " {%0,%1,%2,%3}, " A ", " B ", {%6,%6,%6,%6};\n" \
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])                                 \
               : "r"(a[0]), "r"(a[1]), "r"(c), "r"(b[0]), "r"(b[1]))
#define TCEMU_F16_2(SHAPE_TYPES, A, B)                                              \
  asm volatile("mma.sync.aligned." SHAPE_TYPES " {%0,%1}, " A ", " B ", {%4,%4};\n" \
               : "=r"(d[0]), "=r"(d[1])                                             \
               : "r"(a[0]), "r"(a[1]), "r"(c), "r"(b[0]), "r"(b[1]))
  // Operands: %N of the outputs first; then a[0] a[1] c b[0] b[1].
  if constexpr (O == Op::f16_k8_f32) {
    TCEMU_F32_4("m16n8k8.row.col.f32.f16.f16.f32", "{%4,%5}", "{%7}");
  } else if constexpr (O == Op::bf16_k8_f32) {
    TCEMU_F32_4("m16n8k8.row.col.f32.bf16.bf16.f32", "{%4,%5}", "{%7}");
  } else if constexpr (O == Op::tf32_k4_f32) {
    TCEMU_F32_4("m16n8k4.row.col.f32.tf32.tf32.f32", "{%4,%5}", "{%7}");
  } else if constexpr (O == Op::f16_k8_f16) {
    TCEMU_F16_2("m16n8k8.row.col.f16.f16.f16.f16", "{%2,%3}", "{%5}");
  } else if constexpr (O == Op::f16_m884_f32) {
    asm volatile(
        "mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, "
        "{%10,%11}, {%12,%12,%12,%12,%12,%12,%12,%12};\n"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]), "=r"(d[4]), "=r"(d[5]), "=r"(d[6]),
          "=r"(d[7])
        : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(c));
  } else if constexpr (O == Op::f16_m884_f16) {
    asm volatile(
        "mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f16 {%0,%1,%2,%3}, {%4,%5}, {%6,%7}, "
        "{%8,%8,%8,%8};\n"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(c));
  } else {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    if constexpr (O == Op::e4m3_k16_f32) {
      TCEMU_F32_4("m16n8k16.row.col.f32.e4m3.e4m3.f32", "{%4,%5}", "{%7}");
    } else if constexpr (O == Op::e5m2_k16_f32) {
      TCEMU_F32_4("m16n8k16.row.col.f32.e5m2.e5m2.f32", "{%4,%5}", "{%7}");
    } else if constexpr (O == Op::e4m3_k16_f16) {
      TCEMU_F16_2("m16n8k16.row.col.f16.e4m3.e4m3.f16", "{%2,%3}", "{%5}");
    } else {
      TCEMU_F16_2("m16n8k16.row.col.f16.e5m2.e5m2.f16", "{%2,%3}", "{%5}");
    }
#else
    __trap();  // the host refuses fp8 below sm_89 before launching
#endif
  }
#undef TCEMU_F32_4
#undef TCEMU_F16_2
}

// One warp per case; a_bits and b_bits hold K container words per case.
template <Op O>
__global__ void shape_cases(const std::uint32_t* a_bits, const std::uint32_t* b_bits,
                            const std::uint32_t* c_bits, std::uint32_t* d_bits, int cases) {
  constexpr int k = op_k(O), bits = op_bits(O), per_register = 32 / bits;
  constexpr std::uint32_t mask = bits == 32 ? 0xFFFFFFFFu : (1u << bits) - 1;
  const int warp = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / 32);
  if (warp >= cases) return;
  const int lane = static_cast<int>(threadIdx.x % 32), tig = lane % 4;
  const std::uint32_t* a = a_bits + static_cast<long long>(warp) * k;
  const std::uint32_t* b = b_bits + static_cast<long long>(warp) * k;
  unsigned ra[2] = {0, 0}, rb[2] = {0, 0}, d[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int e = 0; e < 2 * per_register; ++e) {
    ra[e / per_register] |= (a[a_k<O>(tig, e)] & mask) << (bits * (e % per_register));
  }
  for (int e = 0; e < op_b_registers(O) * per_register; ++e) {
    rb[e / per_register] |= (b[b_k<O>(tig, e)] & mask) << (bits * (e % per_register));
  }
  const std::uint32_t c = op_half_acc(O) ? (c_bits[warp] & 0xFFFFu) * 0x10001u : c_bits[warp];
  issue<O>(ra, rb, c, d);
  if (lane == 0) d_bits[warp] = op_half_acc(O) ? (d[0] & 0xFFFFu) : d[0];
}

// The case words of every case, concatenated, on the device.
struct CaseWords {
  DeviceWords a, b, c;
};
CaseWords upload(std::span<const MmaCase> cases) {
  std::vector<std::uint32_t> a, b, c;
  for (const MmaCase& x : cases) {
    a.insert(a.end(), x.a.begin(), x.a.end());
    b.insert(b.end(), x.b.begin(), x.b.end());
    c.push_back(x.c);
  }
  return {DeviceWords(a), DeviceWords(b), DeviceWords(c)};
}

template <Op O>
std::vector<std::uint32_t> launch_shape(std::span<const MmaCase> cases) {
  const CaseWords words = upload(cases);
  DeviceWords d(cases.size());
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned>((cases.size() * 32 + kThreads - 1) / kThreads);
  shape_cases<O><<<blocks, kThreads>>>(words.a.get(), words.b.get(), words.c.get(), d.get(),
                                       static_cast<int>(cases.size()));
  TCEMU_CUDA_CHECK(cudaGetLastError());
  TCEMU_CUDA_CHECK(cudaDeviceSynchronize());
  return d.to_host();
}

// WMMA: one warp (one block) per case. A is M x K row-major with every row a, B is K x N
// column-major with every column b, C is M x N with every element c; D(0, 0) is stored back.
template <class T, int M, int N, int K, class Acc>
__global__ void wmma_cases(const std::uint32_t* a_bits, const std::uint32_t* b_bits,
                           const std::uint32_t* c_bits, std::uint32_t* d_bits) {
  namespace w = nvcuda::wmma;
  using Element = std::conditional_t<std::is_same_v<T, w::precision::tf32>, float, T>;
  __shared__ __align__(32) Element a[M * K];
  __shared__ __align__(32) Element b[K * N];
  __shared__ __align__(32) Acc c[M * N];
  const long long id = blockIdx.x;
  const int lane = static_cast<int>(threadIdx.x);
  using Word = std::conditional_t<sizeof(Element) == 4, std::uint32_t, std::uint16_t>;
  for (int i = lane; i < M * K; i += 32) {
    const auto bits = static_cast<Word>(a_bits[id * K + i % K]);
    memcpy(&a[i], &bits, sizeof bits);
  }
  for (int i = lane; i < K * N; i += 32) {
    const auto bits = static_cast<Word>(b_bits[id * K + i % K]);  // column-major: k fastest
    memcpy(&b[i], &bits, sizeof bits);
  }
  using AccWord = std::conditional_t<sizeof(Acc) == 4, std::uint32_t, std::uint16_t>;
  for (int i = lane; i < M * N; i += 32) {
    const auto bits = static_cast<AccWord>(c_bits[id]);
    memcpy(&c[i], &bits, sizeof bits);
  }
  __syncwarp();
  w::fragment<w::matrix_a, M, N, K, T, w::row_major> fa;
  w::fragment<w::matrix_b, M, N, K, T, w::col_major> fb;
  w::fragment<w::accumulator, M, N, K, Acc> fc;
  w::load_matrix_sync(fa, a, K);
  w::load_matrix_sync(fb, b, K);
  w::load_matrix_sync(fc, c, N, w::mem_row_major);
  w::mma_sync(fc, fa, fb, fc);
  __syncwarp();
  w::store_matrix_sync(c, fc, N, w::mem_row_major);
  __syncwarp();
  if (lane == 0) {
    AccWord out;
    memcpy(&out, &c[0], sizeof out);
    d_bits[id] = out;
  }
}

template <class T, int M, int N, int K, class Acc>
std::vector<std::uint32_t> launch_wmma(std::span<const MmaCase> cases) {
  const CaseWords words = upload(cases);
  DeviceWords d(cases.size());
  constexpr std::size_t kMaxBlocks = 1u << 30;
  for (std::size_t first = 0; first < cases.size(); first += kMaxBlocks) {
    const std::size_t count = std::min(kMaxBlocks, cases.size() - first);
    wmma_cases<T, M, N, K, Acc>
        <<<static_cast<unsigned>(count), 32>>>(words.a.get() + first * K, words.b.get() + first * K,
                                               words.c.get() + first, d.get() + first);
    TCEMU_CUDA_CHECK(cudaGetLastError());
  }
  TCEMU_CUDA_CHECK(cudaDeviceSynchronize());
  return d.to_host();
}

// fp16 or bf16 WMMA of shape MxNxK with an fp32 or fp16 accumulator.
template <int M, int N, int K>
std::vector<std::uint32_t> wmma_16bit(const FloatFormat& input, bool fp32,
                                      std::span<const MmaCase> cases) {
  if (input == formats::bf16) return launch_wmma<__nv_bfloat16, M, N, K, float>(cases);
  return fp32 ? launch_wmma<__half, M, N, K, float>(cases)
              : launch_wmma<__half, M, N, K, __half>(cases);
}

// N and K of one of wide_wgmma_instructions(90), or std::invalid_argument naming them.
struct WideWgmma {
  int n = 0, k = 0;
};
WideWgmma wide_wgmma_shape(std::string_view instruction) {
  if (std::ranges::count(wide_wgmma_instructions(90), instruction) == 0) {
    std::string names = "wgmma";
    for (std::string_view n : wide_wgmma_instructions(90)) names += ", " + std::string(n);
    throw std::invalid_argument("no wgmma runner for " + std::string(instruction) +
                                "; the runners cover: " + names);
  }
  const std::size_t n_at = std::string_view("wgmma.m64n").size(), k_at = instruction.rfind('k');
  return {std::stoi(std::string(instruction.substr(n_at, k_at - n_at))),
          std::stoi(std::string(instruction.substr(k_at + 1)))};
}

[[noreturn]] void not_probed(std::string_view instruction, const FloatFormat& input,
                             const FloatFormat& accumulator) {
  throw std::invalid_argument("no probe runner for " + std::string(instruction) + " " +
                              std::string(input.name) + " -> " + std::string(accumulator.name) +
                              "; the runners cover: " + [] {
                                std::string names;
                                for (std::string_view n : probe_instructions(90)) {
                                  names += (names.empty() ? "" : ", ") + std::string(n);
                                }
                                return names;
                              }());
}

}  // namespace

std::vector<std::string_view> probe_instructions(int compute_capability) {
  std::vector<std::string_view> out = {"mma.sync.m8n8k4",   "mma.sync.m16n8k4", "mma.sync.m16n8k8",
                                       "mma.sync.m16n8k16", "wmma.m16n16k16",   "wmma.m32n8k16",
                                       "wmma.m8n32k16",     "wmma.m16n16k8"};
  if (compute_capability >= 89) out.push_back("mma.sync.m16n8k32");
  if (compute_capability == 90) out.push_back("wgmma");
  return out;
}

std::vector<std::string_view> wide_wgmma_instructions(int compute_capability) {
  if (compute_capability != 90) return {};
  return {"wgmma.m64n16k8",   "wgmma.m64n16k16", "wgmma.m64n16k32",  "wgmma.m64n64k8",
          "wgmma.m64n64k16",  "wgmma.m64n64k32", "wgmma.m64n128k8",  "wgmma.m64n128k16",
          "wgmma.m64n128k32", "wgmma.m64n256k8", "wgmma.m64n256k16", "wgmma.m64n256k32"};
}

std::vector<std::pair<FloatFormat, FloatFormat>> instruction_pairs(std::string_view instruction,
                                                                   int compute_capability) {
  if (instruction == "wgmma") return wgmma_pairs(compute_capability);
  if (instruction.starts_with("wgmma.m64n")) {
    // The pairs whose wgmma K is the name's.
    const WideWgmma shape = wide_wgmma_shape(instruction);
    std::vector<std::pair<FloatFormat, FloatFormat>> out;
    for (const auto& pair : wgmma_pairs(compute_capability)) {
      if (mma_sync_k(pair.first) == shape.k) out.push_back(pair);
    }
    return out;
  }
  // The shapes of the runners exist with the same formats from sm_80 (fp8 from sm_89) on: the
  // sm90 preset table says which pairs each takes.
  std::vector<std::pair<FloatFormat, FloatFormat>> out;
  for (const auto& pair : mma_sync_pairs(compute_capability)) {
    if (std::ranges::count(instruction_names("sm90", pair.first, pair.second), instruction) == 1)
      out.push_back(pair);
  }
  return out;
}

std::vector<std::uint32_t> run_instruction(std::string_view instruction, const FloatFormat& input,
                                           const FloatFormat& accumulator,
                                           std::span<const MmaCase> cases) {
  check_mma_sync(input, accumulator);  // every shape takes a subset of mma.sync's pairs
  if (instruction == "wgmma") return run_wgmma(input, accumulator, cases);
  if (instruction.starts_with("wgmma.m64n")) {
    const WideWgmma shape = wide_wgmma_shape(instruction);
    if (shape.k != mma_sync_k(input)) not_probed(instruction, input, accumulator);
    return run_wgmma(input, accumulator, cases, shape.n);
  }
  const bool fp16_or_bf16 = input == formats::fp16 || input == formats::bf16;
  const bool fp8 = input == formats::e4m3 || input == formats::e5m2;
  if (instruction == "mma.sync" || (instruction == "mma.sync.m16n8k16" && fp16_or_bf16) ||
      (instruction == "mma.sync.m16n8k8" && input == formats::tf32) ||
      (instruction == "mma.sync.m16n8k32" && fp8))
    return run_mma_sync(input, accumulator, cases);
  if (std::ranges::count(probe_instructions(90), instruction) == 0) {
    not_probed(instruction, input, accumulator);
  }
  // The K of the shape's name (the digits after its last 'k'), which every case must have.
  const std::size_t k_at = instruction.rfind('k');
  const std::size_t k =
      k_at == std::string_view::npos ? 0 : std::strtoul(instruction.data() + k_at + 1, nullptr, 10);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (cases[i].a.size() != k || cases[i].b.size() != k) {
      throw std::invalid_argument("case " + std::to_string(i + 1) +
                                  " has K = " + std::to_string(cases[i].a.size()) + ", " +
                                  std::string(instruction) + " takes K = " + std::to_string(k));
    }
  }
  if (cases.empty()) return {};
  const bool fp32 = accumulator == formats::fp32;
  const bool e4m3 = input == formats::e4m3;
  if (instruction == "mma.sync.m16n8k8" && fp16_or_bf16) {
    if (input == formats::bf16) return launch_shape<Op::bf16_k8_f32>(cases);
    return fp32 ? launch_shape<Op::f16_k8_f32>(cases) : launch_shape<Op::f16_k8_f16>(cases);
  }
  if (instruction == "mma.sync.m16n8k4" && input == formats::tf32) {
    return launch_shape<Op::tf32_k4_f32>(cases);
  }
  // Both accumulators, though only the fp32 one has a preset (docs/presets.md).
  if (instruction == "mma.sync.m8n8k4" && input == formats::fp16) {
    return fp32 ? launch_shape<Op::f16_m884_f32>(cases) : launch_shape<Op::f16_m884_f16>(cases);
  }
  if (instruction == "mma.sync.m16n8k16" && fp8) {
    return e4m3 ? (fp32 ? launch_shape<Op::e4m3_k16_f32>(cases)
                        : launch_shape<Op::e4m3_k16_f16>(cases))
                : (fp32 ? launch_shape<Op::e5m2_k16_f32>(cases)
                        : launch_shape<Op::e5m2_k16_f16>(cases));
  }
  if (instruction == "wmma.m16n16k16" && fp16_or_bf16)
    return wmma_16bit<16, 16, 16>(input, fp32, cases);
  if (instruction == "wmma.m32n8k16" && fp16_or_bf16)
    return wmma_16bit<32, 8, 16>(input, fp32, cases);
  if (instruction == "wmma.m8n32k16" && fp16_or_bf16)
    return wmma_16bit<8, 32, 16>(input, fp32, cases);
  if (instruction == "wmma.m16n16k8" && input == formats::tf32) {
    return launch_wmma<nvcuda::wmma::precision::tf32, 16, 16, 8, float>(cases);
  }
  not_probed(instruction, input, accumulator);
}

}  // namespace tcemu::gpu
