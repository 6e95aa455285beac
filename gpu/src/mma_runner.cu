// One mma.sync per case, with the fragment layouts of the PTX ISA ("Matrix fragments for
// mma.m16n8k16 / m16n8k8 / m16n8k32"). In a warp, lane = 4 * group + tig; every element of A,
// B, C and D has one owning lane and register slot, given by the *_element functions below.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include <tcemu/gpu/mma_runner.hpp>

#include "cuda_check.hpp"

namespace tcemu::gpu {
namespace {

struct Coordinate {
  int row;
  int col;
};

// Shapes: K, elements per 32-bit register, A/B/C elements per lane, and the element owned by a
// lane's e-th slot.
struct Shape16x8x16 {  // fp16, bf16 (2 per register)
  static constexpr int k = 16, per_register = 2, a_elements = 8, b_elements = 4;
  __device__ static Coordinate a(int group, int tig, int e) {
    return {group + 8 * ((e >> 1) & 1), tig * 2 + (e & 1) + 8 * (e >> 2)};
  }
  __device__ static Coordinate b(int group, int tig, int e) {
    return {tig * 2 + (e & 1) + 8 * (e >> 1), group};
  }
};
struct Shape16x8x8 {  // tf32 (1 per register)
  static constexpr int k = 8, per_register = 1, a_elements = 4, b_elements = 2;
  __device__ static Coordinate a(int group, int tig, int e) {
    return {group + 8 * (e & 1), tig + 4 * (e >> 1)};
  }
  __device__ static Coordinate b(int group, int tig, int e) { return {tig + 4 * e, group}; }
};
struct Shape16x8x32 {  // e4m3, e5m2 (4 per register)
  static constexpr int k = 32, per_register = 4, a_elements = 16, b_elements = 8;
  __device__ static Coordinate a(int group, int tig, int e) {
    return {group + 8 * ((e >> 2) & 1), tig * 4 + (e & 3) + 16 * (e >> 3)};
  }
  __device__ static Coordinate b(int group, int tig, int e) {
    return {tig * 4 + (e & 3) + 16 * (e >> 2), group};
  }
};
// C and D (16 x 8) for every shape: slot e of a lane is (group + 8 * (e >> 1), 2 * tig + (e & 1)).

enum class Instruction {
  f16_f32,
  f16_f16,
  bf16_f32,
  tf32_f32,
  e4m3_f32,
  e4m3_f16,
  e5m2_f32,
  e5m2_f16
};

template <Instruction I>
__device__ void mma(const unsigned (&a)[4], const unsigned (&b)[2], const unsigned (&c)[4],
                    unsigned (&d)[4]) {
  if constexpr (I == Instruction::f16_f32) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%10,%11,%12,%13};\n"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]),
          "r"(c[2]), "r"(c[3]));
  } else if constexpr (I == Instruction::f16_f16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, "
        "{%8,%9};\n"
        : "=r"(d[0]), "=r"(d[1])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]));
  } else if constexpr (I == Instruction::bf16_f32) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%10,%11,%12,%13};\n"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]),
          "r"(c[2]), "r"(c[3]));
  } else if constexpr (I == Instruction::tf32_f32) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%10,%11,%12,%13};\n"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]),
          "r"(c[2]), "r"(c[3]));
  } else {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    if constexpr (I == Instruction::e4m3_f32) {
      asm volatile(
          "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
          "{%8,%9}, {%10,%11,%12,%13};\n"
          : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]),
            "r"(c[2]), "r"(c[3]));
    } else if constexpr (I == Instruction::e5m2_f32) {
      asm volatile(
          "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
          "{%8,%9}, {%10,%11,%12,%13};\n"
          : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]),
            "r"(c[2]), "r"(c[3]));
    } else if constexpr (I == Instruction::e4m3_f16) {
      asm volatile(
          "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, "
          "{%8,%9};\n"
          : "=r"(d[0]), "=r"(d[1])
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]));
    } else {
      asm volatile(
          "mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e5m2.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, "
          "{%8,%9};\n"
          : "=r"(d[0]), "=r"(d[1])
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]));
    }
#else
    __trap();  // the host refuses fp8 below sm_89 before launching
#endif
  }
}

__host__ __device__ constexpr bool fp16_accumulator(Instruction i) {
  return i == Instruction::f16_f16 || i == Instruction::e4m3_f16 || i == Instruction::e5m2_f16;
}

// One warp per case. Inputs are K container words per case (the low bits hold the element).
template <class Shape, Instruction I>
__global__ void mma_cases(const std::uint32_t* a_bits, const std::uint32_t* b_bits,
                          const std::uint32_t* c_bits, std::uint32_t* d_bits, int cases) {
  const int warp = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / 32);
  if (warp >= cases) return;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int group = lane / 4, tig = lane % 4;
  constexpr int bits = 32 / Shape::per_register;
  constexpr std::uint32_t element_mask = bits == 32 ? 0xFFFFFFFFu : (1u << bits) - 1;
  const std::uint32_t* a = a_bits + static_cast<long long>(warp) * Shape::k;
  const std::uint32_t* b = b_bits + static_cast<long long>(warp) * Shape::k;

  unsigned ra[4] = {0, 0, 0, 0}, rb[2] = {0, 0}, rc[4] = {0, 0, 0, 0}, rd[4] = {0, 0, 0, 0};
  for (int e = 0; e < Shape::a_elements; ++e) {
    const Coordinate at = Shape::a(group, tig, e);  // A(row, col): row 0 holds the case's a
    const std::uint32_t v = at.row == 0 ? a[at.col] & element_mask : 0;
    ra[e / Shape::per_register] |= v << (bits * (e % Shape::per_register));
  }
  for (int e = 0; e < Shape::b_elements; ++e) {
    const Coordinate at = Shape::b(group, tig, e);  // B(k, n): column 0 holds the case's b
    const std::uint32_t v = at.col == 0 ? b[at.row] & element_mask : 0;
    rb[e / Shape::per_register] |= v << (bits * (e % Shape::per_register));
  }
  // C(0, 0) is slot 0 of lane 0: the low half of register 0 for an fp16 accumulator.
  if (lane == 0) rc[0] = fp16_accumulator(I) ? (c_bits[warp] & 0xFFFFu) : c_bits[warp];
  mma<I>(ra, rb, rc, rd);
  if (lane == 0) d_bits[warp] = fp16_accumulator(I) ? (rd[0] & 0xFFFFu) : rd[0];
}

struct DeviceBuffer {
  std::uint32_t* pointer = nullptr;
  explicit DeviceBuffer(std::size_t words) {
    TCEMU_CUDA_CHECK(cudaMalloc(&pointer, std::max<std::size_t>(words, 1) * sizeof(std::uint32_t)));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(pointer); }
};

template <class Shape, Instruction I>
std::vector<std::uint32_t> launch(std::span<const MmaCase> cases) {
  const std::size_t n = cases.size();
  std::vector<std::uint32_t> a, b, c;
  a.reserve(n * Shape::k);
  b.reserve(n * Shape::k);
  c.reserve(n);
  for (const MmaCase& x : cases) {
    a.insert(a.end(), x.a.begin(), x.a.end());
    b.insert(b.end(), x.b.begin(), x.b.end());
    c.push_back(x.c);
  }
  std::vector<std::uint32_t> d(n);
  if (n == 0) return d;
  DeviceBuffer da(a.size()), db(b.size()), dc(n), dd(n);
  TCEMU_CUDA_CHECK(cudaMemcpy(da.pointer, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
  TCEMU_CUDA_CHECK(cudaMemcpy(db.pointer, b.data(), b.size() * 4, cudaMemcpyHostToDevice));
  TCEMU_CUDA_CHECK(cudaMemcpy(dc.pointer, c.data(), n * 4, cudaMemcpyHostToDevice));
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned>((n * 32 + kThreads - 1) / kThreads);
  mma_cases<Shape, I>
      <<<blocks, kThreads>>>(da.pointer, db.pointer, dc.pointer, dd.pointer, static_cast<int>(n));
  TCEMU_CUDA_CHECK(cudaGetLastError());
  TCEMU_CUDA_CHECK(cudaDeviceSynchronize());
  TCEMU_CUDA_CHECK(cudaMemcpy(d.data(), dd.pointer, n * 4, cudaMemcpyDeviceToHost));
  return d;
}

int compute_capability() {
  int device = 0, major = 0, minor = 0;
  TCEMU_CUDA_CHECK(cudaGetDevice(&device));
  TCEMU_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  TCEMU_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return major * 10 + minor;
}

}  // namespace

int mma_sync_k(const FloatFormat& input) {
  if (input == formats::fp16 || input == formats::bf16) return 16;
  if (input == formats::tf32) return 8;
  if (input == formats::e4m3 || input == formats::e5m2) return 32;
  throw std::invalid_argument("no mma.sync takes " + std::string(input.name) + " inputs");
}

std::vector<std::uint32_t> run_mma_sync(const FloatFormat& input, const FloatFormat& accumulator,
                                        std::span<const MmaCase> cases) {
  const int k = mma_sync_k(input);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (cases[i].a.size() != static_cast<std::size_t>(k) ||
        cases[i].b.size() != cases[i].a.size()) {
      throw std::invalid_argument(
          "case " + std::to_string(i + 1) + " has K = " + std::to_string(cases[i].a.size()) +
          ", mma.sync with " + std::string(input.name) + " takes K = " + std::to_string(k));
    }
  }
  const bool fp32 = accumulator == formats::fp32;
  const bool fp16 = accumulator == formats::fp16;
  const bool fp8 = input == formats::e4m3 || input == formats::e5m2;
  if (fp8 && compute_capability() < 89) {
    throw std::runtime_error("fp8 mma.sync needs compute capability 8.9 or newer");
  }
  if (input == formats::fp16 && fp32) return launch<Shape16x8x16, Instruction::f16_f32>(cases);
  if (input == formats::fp16 && fp16) return launch<Shape16x8x16, Instruction::f16_f16>(cases);
  if (input == formats::bf16 && fp32) return launch<Shape16x8x16, Instruction::bf16_f32>(cases);
  if (input == formats::tf32 && fp32) return launch<Shape16x8x8, Instruction::tf32_f32>(cases);
  if (input == formats::e4m3 && fp32) return launch<Shape16x8x32, Instruction::e4m3_f32>(cases);
  if (input == formats::e4m3 && fp16) return launch<Shape16x8x32, Instruction::e4m3_f16>(cases);
  if (input == formats::e5m2 && fp32) return launch<Shape16x8x32, Instruction::e5m2_f32>(cases);
  if (input == formats::e5m2 && fp16) return launch<Shape16x8x32, Instruction::e5m2_f16>(cases);
  throw std::invalid_argument("no mma.sync takes " + std::string(input.name) + " with an " +
                              std::string(accumulator.name) + " accumulator");
}

}  // namespace tcemu::gpu
