// One fp64 mma.sync per case. Fragment layouts (PTX ISA, "Matrix Fragments for mma.m8n8k4" with
// .f64, and "mma.m16n8k4", "mma.m16n8k8", "mma.m16n8k16" with .f64): a lane is (group = lane / 4,
// thread_in_group = lane % 4) and every register holds one .f64 element. With M = 8 or 16:
//   A register r: row group + 8 (r mod M/8), column 4 (r div M/8) + tig;
//   B register r: row (k) 4 r + tig, column group;
//   C/D register r: row group + 8 (r div 2), column 2 tig + r mod 2; D(0, 0) is lane 0's
//   register 0.
// CUTLASS's CuTe MMA_Traits of SM80_8x8x4_F64F64F64F64_TN and SM90_16x8x{4,8,16}_F64F64F64F64_TN
// (include/cute/atom/mma_traits_sm80.hpp, mma_traits_sm90.hpp) give the same maps. A wrong layout
// pairs the wrong a with the wrong b, which the random probes show as mismatches against the
// emulator. The k of a product is its column of A and row of B as the PTX ISA numbers them: the
// order of the chain the probe measures is in those k.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/dmma_runner.hpp>

#include "cuda_check.hpp"
#include "device_words.hpp"

namespace tcemu::gpu {
namespace {

// The instruction on registers a (M K / 32 of them), b (K / 4) and c, d (M / 4). The m16n8
// shapes need sm_90 and m8n8k4 sm_80: a build for an older architecture traps there, and the host
// refuses such a device before launching.
template <int M, int K>
__device__ void dmma(const double* a, const double* b, const double* c, double* d) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (M == 16 && K == 4) {
    asm volatile(
        "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
        "{%7, %8, %9, %10};"
        : "=d"(d[0]), "=d"(d[1]), "=d"(d[2]), "=d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(b[0]), "d"(c[0]), "d"(c[1]), "d"(c[2]), "d"(c[3]));
    return;
  } else if constexpr (M == 16 && K == 8) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%10, %11, %12, %13};"
        : "=d"(d[0]), "=d"(d[1]), "=d"(d[2]), "=d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]), "d"(c[0]), "d"(c[1]),
          "d"(c[2]), "d"(c[3]));
    return;
  } else if constexpr (M == 16 && K == 16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7, %8, %9, %10, %11}, {%12, %13, %14, %15}, {%16, %17, %18, %19};"
        : "=d"(d[0]), "=d"(d[1]), "=d"(d[2]), "=d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
          "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]), "d"(c[0]), "d"(c[1]), "d"(c[2]), "d"(c[3]));
    return;
  }
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (M == 8 && K == 4) {
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%4, %5};"
                 : "=d"(d[0]), "=d"(d[1])
                 : "d"(a[0]), "d"(b[0]), "d"(c[0]), "d"(c[1]));
    return;
  }
#endif
  __trap();
}

// One warp per case; a and b hold K words per case, c one word per case.
template <int M, int K>
__global__ void dmma_cases(const std::uint64_t* a_words, const std::uint64_t* b_words,
                           const std::uint64_t* c_words, std::uint64_t* d_words, int cases) {
  const int warp = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / 32);
  if (warp >= cases) return;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int group = lane / 4, tig = lane % 4;
  constexpr int kARegisters = M * K / 32, kBRegisters = K / 4, kRowBlocks = M / 8;
  const std::uint64_t* a = a_words + static_cast<long long>(warp) * K;
  const std::uint64_t* b = b_words + static_cast<long long>(warp) * K;
  double ra[8] = {}, rb[4] = {}, rc[4] = {}, rd[4] = {};
  for (int r = 0; r < kARegisters; ++r) {
    if (group + 8 * (r % kRowBlocks) != 0) continue;  // row 0 of A holds the case's a
    ra[r] = __longlong_as_double(static_cast<long long>(a[4 * (r / kRowBlocks) + tig]));
  }
  for (int r = 0; r < kBRegisters; ++r) {
    if (group != 0) continue;  // column 0 of B holds the case's b
    rb[r] = __longlong_as_double(static_cast<long long>(b[4 * r + tig]));
  }
  if (lane == 0) rc[0] = __longlong_as_double(static_cast<long long>(c_words[warp]));
  dmma<M, K>(ra, rb, rc, rd);
  if (lane == 0) d_words[warp] = static_cast<std::uint64_t>(__double_as_longlong(rd[0]));
}

struct Shape {
  std::string_view name;
  int m, k, min_cc;
};

constexpr Shape kShapes[] = {
    {"mma.sync.m8n8k4", 8, 4, 80},
    {"mma.sync.m16n8k4", 16, 4, 90},
    {"mma.sync.m16n8k8", 16, 8, 90},
    {"mma.sync.m16n8k16", 16, 16, 90},
};

template <int M, int K>
std::vector<std::uint64_t> launch(std::span<const Fp64MmaCase> cases) {
  std::vector<std::uint64_t> a, b, c;
  a.reserve(cases.size() * K);
  b.reserve(cases.size() * K);
  c.reserve(cases.size());
  for (const Fp64MmaCase& x : cases) {
    a.insert(a.end(), x.a.begin(), x.a.end());
    b.insert(b.end(), x.b.begin(), x.b.end());
    c.push_back(x.c);
  }
  const detail::DeviceArray<std::uint64_t> da(a), db(b), dc(c), dd(cases.size());
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned>((cases.size() * 32 + kThreads - 1) / kThreads);
  dmma_cases<M, K><<<blocks, kThreads>>>(da.get(), db.get(), dc.get(), dd.get(),
                                         static_cast<int>(cases.size()));
  TCEMU_CUDA_CHECK(cudaGetLastError());
  TCEMU_CUDA_CHECK(cudaDeviceSynchronize());
  return dd.to_host();
}

}  // namespace

std::vector<std::string_view> dmma_sync_shapes(int cc) {
  std::vector<std::string_view> names;
  for (const Shape& s : kShapes) {
    if (cc >= s.min_cc) names.push_back(s.name);
  }
  return names;
}

std::vector<std::uint64_t> run_dmma_sync(std::string_view shape,
                                         std::span<const Fp64MmaCase> cases) {
  const Shape* s = nullptr;
  for (const Shape& x : kShapes) {
    if (x.name == shape) s = &x;
  }
  if (!s) {
    throw std::invalid_argument("run_dmma_sync: no fp64 shape '" + std::string(shape) +
                                "' (mma.sync.m8n8k4, mma.sync.m16n8k4, mma.sync.m16n8k8, "
                                "mma.sync.m16n8k16)");
  }
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (cases[i].a.size() != static_cast<std::size_t>(s->k) ||
        cases[i].b.size() != cases[i].a.size()) {
      throw std::invalid_argument("run_dmma_sync: case " + std::to_string(i + 1) +
                                  " has K = " + std::to_string(cases[i].a.size()) + ", " +
                                  std::string(shape) + " takes K = " + std::to_string(s->k));
    }
  }
  const DeviceInfo device = require_device();
  const int cc = device.compute_major * 10 + device.compute_minor;
  if (cc < s->min_cc) {
    throw std::runtime_error(
        std::string(shape) + " .f64 needs compute capability " + std::to_string(s->min_cc / 10) +
        "." + std::to_string(s->min_cc % 10) + " or newer; " + device.name + " has " +
        std::to_string(device.compute_major) + "." + std::to_string(device.compute_minor));
  }
  if (cases.empty()) return {};
  if (s->m == 8) return launch<8, 4>(cases);
  if (s->k == 4) return launch<16, 4>(cases);
  if (s->k == 8) return launch<16, 8>(cases);
  return launch<16, 16>(cases);
}

}  // namespace tcemu::gpu
