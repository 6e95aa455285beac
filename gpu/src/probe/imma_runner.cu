// One integer mma.sync per case. Fragment layouts (PTX ISA, "Matrix Fragments for mma.m8n8k16",
// "mma.m16n8k16", "mma.m16n8k32", "mma.m8n8k32", "mma.m16n8k64" with .s8/.u8/.s4/.u4): a lane
// is (group = lane / 4, thread_in_group = lane % 4); a 32-bit register holds E = 32 / bits
// consecutive elements, element i in bits [bits * i, bits * (i + 1)). With M = 8 or 16:
//   A register r, element i: row group + 8 (r mod M/8), column (r div M/8) 4E + tig E + i;
//   B register r, element i: row (k) 4E r + tig E + i, column group;
//   C/D register r: row group + 8 (r / 2), column 2 tig + r mod 2; D(0, 0) is lane 0's register 0.
// A wrong layout pairs the wrong a with the wrong b, which the random probes would show as
// mismatches against the emulator.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/imma_runner.hpp>

#include "cuda_check.hpp"
#include "device_words.hpp"
#include "wgmma_operands.cuh"

namespace tcemu::gpu {
namespace {

#define TCEMU_UNPAREN(...) __VA_ARGS__

// The four signedness combinations of one shape with or without .satfinite.
#define TCEMU_IMMA_SIGNS(SHAPE, SAT, S, U, OPERANDS, OUTS, INS)                       \
  if constexpr (ASigned && BSigned) {                                                 \
    asm volatile("mma.sync.aligned." SHAPE ".row.col" SAT ".s32" S S ".s32 " OPERANDS \
                 : TCEMU_UNPAREN OUTS                                                 \
                 : TCEMU_UNPAREN INS);                                                \
  } else if constexpr (ASigned) {                                                     \
    asm volatile("mma.sync.aligned." SHAPE ".row.col" SAT ".s32" S U ".s32 " OPERANDS \
                 : TCEMU_UNPAREN OUTS                                                 \
                 : TCEMU_UNPAREN INS);                                                \
  } else if constexpr (BSigned) {                                                     \
    asm volatile("mma.sync.aligned." SHAPE ".row.col" SAT ".s32" U S ".s32 " OPERANDS \
                 : TCEMU_UNPAREN OUTS                                                 \
                 : TCEMU_UNPAREN INS);                                                \
  } else {                                                                            \
    asm volatile("mma.sync.aligned." SHAPE ".row.col" SAT ".s32" U U ".s32 " OPERANDS \
                 : TCEMU_UNPAREN OUTS                                                 \
                 : TCEMU_UNPAREN INS);                                                \
  }

#define TCEMU_IMMA(SHAPE, S, U, OPERANDS, OUTS, INS)                 \
  if constexpr (Saturate) {                                          \
    TCEMU_IMMA_SIGNS(SHAPE, ".satfinite", S, U, OPERANDS, OUTS, INS) \
  } else {                                                           \
    TCEMU_IMMA_SIGNS(SHAPE, "", S, U, OPERANDS, OUTS, INS)           \
  }

#define TCEMU_M8_OPERANDS "{%0, %1}, {%2}, {%3}, {%4, %5};"
#define TCEMU_M8_OUTS ("=r"(d[0]), "=r"(d[1]))
#define TCEMU_M8_INS ("r"(a[0]), "r"(b[0]), "r"(c[0]), "r"(c[1]))
#define TCEMU_M16_SMALL_OPERANDS "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%7, %8, %9, %10};"
#define TCEMU_M16_SMALL_INS \
  ("r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]))
#define TCEMU_M16_LARGE_OPERANDS \
  "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
#define TCEMU_M16_LARGE_INS                                                                \
  ("r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), \
   "r"(c[2]), "r"(c[3]))
#define TCEMU_M16_OUTS ("=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]))

template <int M, int K, int Bits, bool ASigned, bool BSigned, bool Saturate>
__device__ void imma(const unsigned* a, const unsigned* b, const int* c, int* d) {
  if constexpr (Bits == 8 && M == 8) {
    TCEMU_IMMA("m8n8k16", ".s8", ".u8", TCEMU_M8_OPERANDS, TCEMU_M8_OUTS, TCEMU_M8_INS)
  } else if constexpr (Bits == 8 && K == 16) {
    TCEMU_IMMA("m16n8k16", ".s8", ".u8", TCEMU_M16_SMALL_OPERANDS, TCEMU_M16_OUTS,
               TCEMU_M16_SMALL_INS)
  } else if constexpr (Bits == 8) {
    TCEMU_IMMA("m16n8k32", ".s8", ".u8", TCEMU_M16_LARGE_OPERANDS, TCEMU_M16_OUTS,
               TCEMU_M16_LARGE_INS)
  } else if constexpr (M == 8) {
    TCEMU_IMMA("m8n8k32", ".s4", ".u4", TCEMU_M8_OPERANDS, TCEMU_M8_OUTS, TCEMU_M8_INS)
  } else if constexpr (K == 32) {
    TCEMU_IMMA("m16n8k32", ".s4", ".u4", TCEMU_M16_SMALL_OPERANDS, TCEMU_M16_OUTS,
               TCEMU_M16_SMALL_INS)
  } else {
    TCEMU_IMMA("m16n8k64", ".s4", ".u4", TCEMU_M16_LARGE_OPERANDS, TCEMU_M16_OUTS,
               TCEMU_M16_LARGE_INS)
  }
}

// One warp per case; a and b hold K values per case (one word each), c one word per case.
template <int M, int K, int Bits, bool ASigned, bool BSigned, bool Saturate>
__global__ void imma_cases(const std::uint32_t* a_values, const std::uint32_t* b_values,
                           const std::uint32_t* c_values, std::uint32_t* d_values, int cases) {
  const int warp = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / 32);
  if (warp >= cases) return;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int group = lane / 4, tig = lane % 4;
  constexpr int kPerRegister = 32 / Bits;
  constexpr int kARegisters = M * K / 32 / kPerRegister;
  constexpr int kBRegisters = 8 * K / 32 / kPerRegister;
  constexpr int kRowBlocks = M / 8;
  constexpr std::uint32_t kMask = (1u << Bits) - 1;
  const std::uint32_t* a = a_values + static_cast<long long>(warp) * K;
  const std::uint32_t* b = b_values + static_cast<long long>(warp) * K;
  unsigned ra[4] = {0, 0, 0, 0}, rb[2] = {0, 0};
  int rc[4] = {0, 0, 0, 0}, rd[4] = {0, 0, 0, 0};
  for (int r = 0; r < kARegisters; ++r) {
    const int row = group + 8 * (r % kRowBlocks);
    if (row != 0) continue;  // row 0 of A holds the case's a
    for (int i = 0; i < kPerRegister; ++i) {
      const int col = (r / kRowBlocks) * 4 * kPerRegister + tig * kPerRegister + i;
      ra[r] |= (a[col] & kMask) << (Bits * i);
    }
  }
  for (int r = 0; r < kBRegisters; ++r) {
    if (group != 0) continue;  // column 0 of B holds the case's b
    for (int i = 0; i < kPerRegister; ++i) {
      const int k = r * 4 * kPerRegister + tig * kPerRegister + i;
      rb[r] |= (b[k] & kMask) << (Bits * i);
    }
  }
  if (lane == 0) rc[0] = static_cast<int>(c_values[warp]);
  imma<M, K, Bits, ASigned, BSigned, Saturate>(ra, rb, rc, rd);
  if (lane == 0) d_values[warp] = static_cast<std::uint32_t>(rd[0]);
}

// The cases' values on the device, one word each, and room for the results.
class DeviceCases {
 public:
  explicit DeviceCases(std::span<const IntegerMmaCase> cases)
      : count_(cases.size()),
        a_(words(cases, &IntegerMmaCase::a)),
        b_(words(cases, &IntegerMmaCase::b)),
        c_(c_words(cases)),
        d_(cases.size()) {}
  const std::uint32_t* a() const { return a_.get(); }
  const std::uint32_t* b() const { return b_.get(); }
  const std::uint32_t* c() const { return c_.get(); }
  std::uint32_t* d() const { return d_.get(); }
  std::size_t count() const { return count_; }
  // The results, once the launch has finished.
  std::vector<std::int32_t> results() const {
    TCEMU_CUDA_CHECK(cudaGetLastError());
    TCEMU_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<std::uint32_t> d = d_.to_host();
    return std::vector<std::int32_t>(d.begin(), d.end());
  }

 private:
  static std::vector<std::uint32_t> words(std::span<const IntegerMmaCase> cases,
                                          std::vector<std::int32_t> IntegerMmaCase::*operand) {
    std::vector<std::uint32_t> out;
    out.reserve(cases.empty() ? 0 : cases.size() * (cases[0].*operand).size());
    for (const IntegerMmaCase& x : cases) {
      for (std::int32_t v : x.*operand) out.push_back(static_cast<std::uint32_t>(v));
    }
    return out;
  }
  static std::vector<std::uint32_t> c_words(std::span<const IntegerMmaCase> cases) {
    std::vector<std::uint32_t> out;
    out.reserve(cases.size());
    for (const IntegerMmaCase& x : cases) out.push_back(static_cast<std::uint32_t>(x.c));
    return out;
  }
  std::size_t count_;
  detail::DeviceWords a_, b_, c_, d_;
};

template <int M, int K, int Bits, bool ASigned, bool BSigned, bool Saturate>
std::vector<std::int32_t> launch(std::span<const IntegerMmaCase> cases) {
  if (cases.empty()) return {};
  const DeviceCases dc(cases);
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned>((dc.count() * 32 + kThreads - 1) / kThreads);
  imma_cases<M, K, Bits, ASigned, BSigned, Saturate>
      <<<blocks, kThreads>>>(dc.a(), dc.b(), dc.c(), dc.d(), static_cast<int>(dc.count()));
  return dc.results();
}

// f(std::bool_constant<a_signed>, std::bool_constant<b_signed>, std::bool_constant<saturate>).
template <typename F>
std::vector<std::int32_t> with_variant(bool a_signed, bool b_signed, bool saturate, F f) {
  const auto b_and_saturate = [&](auto a) {
    const auto saturate_only = [&](auto b) {
      return saturate ? f(a, b, std::true_type{}) : f(a, b, std::false_type{});
    };
    return b_signed ? saturate_only(std::true_type{}) : saturate_only(std::false_type{});
  };
  return a_signed ? b_and_saturate(std::true_type{}) : b_and_saturate(std::false_type{});
}

template <int M, int K, int Bits>
std::vector<std::int32_t> launch_variant(bool a_signed, bool b_signed, bool saturate,
                                         std::span<const IntegerMmaCase> cases) {
  return with_variant(a_signed, b_signed, saturate, [&](auto a, auto b, auto s) {
    return launch<M, K, Bits, decltype(a)::value, decltype(b)::value, decltype(s)::value>(cases);
  });
}

// D(0, 0) += row 0 of A . column 0 of B through one wgmma.mma_async.m64n8k32 (sm_90a), waited
// for; the fences as in wgmma_runner.cu.
template <bool ASigned, bool BSigned, bool Saturate>
__device__ void imma_wgmma(std::uint64_t a, std::uint64_t b, int (&d)[4]) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.fence.sync.aligned;\n"
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])::"memory");
#define TCEMU_WGMMA_S32(TYPES)                                                                \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\nwgmma.mma_async.sync.aligned." TYPES \
               " {%0,%1,%2,%3}, %4, %5, p;\n}\n"                                              \
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])                               \
               : "l"(a), "l"(b), "r"(1))
#define TCEMU_WGMMA_SIGNS(SAT)                    \
  if constexpr (ASigned && BSigned) {             \
    TCEMU_WGMMA_S32("m64n8k32" SAT ".s32.s8.s8"); \
  } else if constexpr (ASigned) {                 \
    TCEMU_WGMMA_S32("m64n8k32" SAT ".s32.s8.u8"); \
  } else if constexpr (BSigned) {                 \
    TCEMU_WGMMA_S32("m64n8k32" SAT ".s32.u8.s8"); \
  } else {                                        \
    TCEMU_WGMMA_S32("m64n8k32" SAT ".s32.u8.u8"); \
  }
  if constexpr (Saturate) {
    TCEMU_WGMMA_SIGNS(".satfinite")
  } else {
    TCEMU_WGMMA_SIGNS("")
  }
#undef TCEMU_WGMMA_SIGNS
#undef TCEMU_WGMMA_S32
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#else
  __trap();  // the host refuses devices other than sm_90 before launching
#endif
}

// One block (one warpgroup) per case; a and b hold 32 values per case (one word each).
template <bool ASigned, bool BSigned, bool Saturate>
__global__ void imma_wgmma_cases(const std::uint32_t* a_values, const std::uint32_t* b_values,
                                 const std::uint32_t* c_values, std::uint32_t* d_values) {
  __shared__ __align__(128) unsigned char a[detail::kWgmmaOperandBytes];
  __shared__ __align__(128) unsigned char b[detail::kWgmmaOperandBytes];
  constexpr int k = 32;
  const int lane = static_cast<int>(threadIdx.x);
  const long long id = blockIdx.x;
  for (int i = lane; i < detail::kWgmmaOperandBytes; i += blockDim.x) a[i] = b[i] = 0;
  __syncthreads();
  if (lane == 0) {
    detail::put_wgmma_row(a, a_values + id * k, k, 1);
    detail::put_wgmma_row(b, b_values + id * k, k, 1);
  }
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
  __syncthreads();
  int d[4] = {0, 0, 0, 0};
  if (lane == 0) d[0] = static_cast<int>(c_values[id]);
  imma_wgmma<ASigned, BSigned, Saturate>(detail::wgmma_descriptor(a), detail::wgmma_descriptor(b),
                                         d);
  if (lane == 0) d_values[id] = static_cast<std::uint32_t>(d[0]);
}

struct Shape {
  std::string_view name;
  int m, k, bits, min_cc;
};

constexpr Shape kShapes[] = {
    {"mma.sync.m8n8k16", 8, 16, 8, 75},   {"mma.sync.m16n8k16", 16, 16, 8, 80},
    {"mma.sync.m16n8k32", 16, 32, 8, 80}, {"mma.sync.m8n8k32", 8, 32, 4, 75},
    {"mma.sync.m16n8k32", 16, 32, 4, 80}, {"mma.sync.m16n8k64", 16, 64, 4, 80},
};

// Throws std::invalid_argument naming the first case whose K is not k or whose values lie outside
// the formats.
void check_cases(const char* caller, std::string_view shape, int k, const IntegerFormat& a_format,
                 const IntegerFormat& b_format, std::span<const IntegerMmaCase> cases) {
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const IntegerMmaCase& x = cases[i];
    if (x.a.size() != static_cast<std::size_t>(k) || x.b.size() != x.a.size()) {
      throw std::invalid_argument(std::string(caller) + ": case " + std::to_string(i + 1) +
                                  " has K = " + std::to_string(x.a.size()) + ", " +
                                  std::string(shape) + " takes K = " + std::to_string(k));
    }
    for (std::size_t p = 0; p < x.a.size(); ++p) {
      if (!a_format.holds(x.a[p]) || !b_format.holds(x.b[p])) {
        throw std::invalid_argument(std::string(caller) + ": case " + std::to_string(i + 1) +
                                    " has an operand outside " + std::string(a_format.name) +
                                    " x " + std::string(b_format.name) +
                                    " at k = " + std::to_string(p));
      }
    }
  }
}

int compute_capability() {
  int device = 0, major = 0, minor = 0;
  TCEMU_CUDA_CHECK(cudaGetDevice(&device));
  TCEMU_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  TCEMU_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return major * 10 + minor;
}

}  // namespace

std::vector<std::int32_t> run_imma_wgmma(const IntegerFormat& a_format,
                                         const IntegerFormat& b_format, bool satfinite,
                                         std::span<const IntegerMmaCase> cases) {
  if (a_format.bits != 8 || b_format.bits != 8) {
    throw std::invalid_argument("run_imma_wgmma: wgmma takes s8/u8 operands, not " +
                                std::string(a_format.name) + " x " + std::string(b_format.name));
  }
  check_cases("run_imma_wgmma", "wgmma.m64n8k32", 32, a_format, b_format, cases);
  const DeviceInfo device = require_device();
  if (device.compute_major != 9 || device.compute_minor != 0) {
    throw std::runtime_error("wgmma needs an sm_90a device (compute capability 9.0); " +
                             device.name + " has " + std::to_string(device.compute_major) + "." +
                             std::to_string(device.compute_minor));
  }
  if (cases.empty()) return {};
  return with_variant(
      a_format.is_signed, b_format.is_signed, satfinite, [&](auto a, auto b, auto s) {
        const DeviceCases dc(cases);
        imma_wgmma_cases<decltype(a)::value, decltype(b)::value, decltype(s)::value>
            <<<static_cast<unsigned>(dc.count()), 128>>>(dc.a(), dc.b(), dc.c(), dc.d());
        return dc.results();
      });
}

std::vector<std::string_view> imma_sync_shapes(int cc, int operand_bits) {
  std::vector<std::string_view> names;
  for (const Shape& s : kShapes) {
    if (s.bits == operand_bits && cc >= s.min_cc) names.push_back(s.name);
  }
  return names;
}

std::vector<std::int32_t> run_imma_sync(std::string_view shape, const IntegerFormat& a_format,
                                        const IntegerFormat& b_format, bool satfinite,
                                        std::span<const IntegerMmaCase> cases) {
  validate(IntegerDatapath{a_format, b_format, 1, IntegerOverflow::wrap});
  const Shape* s = nullptr;
  for (const Shape& x : kShapes) {
    if (x.name == shape && x.bits == a_format.bits) s = &x;
  }
  if (!s) {
    throw std::invalid_argument("run_imma_sync: no integer " + std::string(shape) + " for " +
                                std::string(a_format.name) + " operands");
  }
  check_cases("run_imma_sync", shape, s->k, a_format, b_format, cases);
  const int cc = compute_capability();
  if (cc < s->min_cc) {
    throw std::runtime_error(std::string(shape) + " needs compute capability " +
                             std::to_string(s->min_cc / 10) + "." + std::to_string(s->min_cc % 10) +
                             " or newer");
  }
  const bool as = a_format.is_signed, bs = b_format.is_signed;
  if (s->bits == 8) {
    if (s->m == 8) return launch_variant<8, 16, 8>(as, bs, satfinite, cases);
    if (s->k == 16) return launch_variant<16, 16, 8>(as, bs, satfinite, cases);
    return launch_variant<16, 32, 8>(as, bs, satfinite, cases);
  }
  if (s->m == 8) return launch_variant<8, 32, 4>(as, bs, satfinite, cases);
  if (s->k == 32) return launch_variant<16, 32, 4>(as, bs, satfinite, cases);
  return launch_variant<16, 64, 4>(as, bs, satfinite, cases);
}

}  // namespace tcemu::gpu
