// The mma.sp runner: one warp per case, the case broadcast over A's rows and B's columns.
//
// Fragments (PTX ISA, "Matrix fragments for multiply-accumulate operation with sparse matrix A",
// f16/bf16; the MLIR sparse-mma-2-4-f16 integration test lays them out the same way), with
// g = lane / 4, tig = lane % 4 and elements packed low first in each register:
//   A (compressed M x K/2): element e of a lane is kept column 2 tig + (e & 1) + 8 (e / 4)
//     (rows g and g + 8 alternate in pairs; every row is the same here);
//   B (K x 8): element e is row 2 tig + (e & 1) + 8 (e / 2) (as the dense m16n8k16/k32 B);
//   metadata (sparsity selector 0): 2 bits per kept element, kept column j at bits 2 j of its
//     row's metadata; k16: one thread of each four holds row g in bits 0-15 and row g + 8 in
//     16-31; k32: threads tig 0 and 1 hold kept columns 0-7 and 8-15 of rows g (bits 0-15) and
//     g + 8 (bits 16-31). Every lane gets the word of its tig parity, which covers both.
// tf32 (1:2 sparsity, "sparse mma.m16n8k8 / m16n8k16 with .tf32"): one 32-bit element per
//   register; A element e is kept column tig + 4 (e / 2) (rows g, g + 8 alternate); B element e
//   is row tig + 4 e; the metadata of a kept element is 4 bits, 0b0100 for the first k of its
//   pair and 0b1110 for the second, kept column j at bits 4 j (16 bits a row for k8, split over
//   threads tig 0 and 1 as above for k16).
// e4m3/e5m2 (mma.sp.m16n8k64, sm_89+; "sparse mma.m16n8k64 with .u8/.s8/.e4m3/.e5m2"): four
//   8-bit elements per register; A element e is kept column 4 tig + (e & 3) + 16 (e / 8) (registers
//   alternate rows g, g + 8); B element e is row 4 tig + (e & 3) + 16 (e / 4); a row's metadata is
//   64 bits (32 kept columns) and a thread holds 32 of them, half a row ("metadata layout for
//   columns 0-31" and "32-63", sparsity selector 0 only): tig 0 and 1 the kept columns 0-15
//   (dense columns 0-31), tig 2 and 3 the kept columns 16-31, one of each pair for row g, the
//   other for g + 8 (every row is the same here: both get the row's word). Measured on the H100
//   (docs/presets.md): given quarter rows as the f16 shapes take them, row g's kept column j
//   took the metadata of kept column (j % 8) + 16 (j / 16), which is what the half-row layout
//   reads from those words.
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/sparse_runner.hpp>

#include "cuda_check.hpp"
#include "device_words.hpp"

namespace tcemu::gpu {
namespace {

using detail::DeviceWords;

enum class SparseOp {
  f16_k16_f32,
  f16_k16_f16,
  bf16_k16_f32,
  f16_k32_f32,
  f16_k32_f16,
  bf16_k32_f32,
  tf32_k8_f32,
  tf32_k16_f32,
  e4m3_k64_f32,  // the fp8 shapes last: is_fp8 relies on it
  e5m2_k64_f32
};

__host__ __device__ constexpr bool is_tf32(SparseOp op) {
  return op == SparseOp::tf32_k8_f32 || op == SparseOp::tf32_k16_f32;
}
__host__ __device__ constexpr bool is_fp8(SparseOp op) {
  return op >= SparseOp::e4m3_k64_f32;
}
__host__ __device__ constexpr int sparse_k(SparseOp op) {
  if (is_fp8(op)) return 64;
  if (op == SparseOp::tf32_k8_f32) return 8;
  return op == SparseOp::tf32_k16_f32 || op < SparseOp::f16_k32_f32 ? 16 : 32;
}
__host__ __device__ constexpr bool half_acc(SparseOp op) {
  return op == SparseOp::f16_k16_f16 || op == SparseOp::f16_k32_f16;
}
// Bits of a kept element's metadata: 4 for tf32 (1:2), 2 otherwise.
__host__ __device__ constexpr int kept_meta_bits(SparseOp op) {
  return is_tf32(op) ? 4 : 2;
}
// 16-bit pieces of a row's metadata, one per thread of a quad from the first (the rows g and
// g + 8 share each thread's word): K/2 kept elements of meta_bits bits. fp8 (64 bits a row) has
// 32-bit pieces instead, one per pair of threads (rows g and g + 8 in separate threads).
__host__ __device__ constexpr int meta_pieces(SparseOp op) {
  return sparse_k(op) / 2 * kept_meta_bits(op) / 16;
}
__host__ __device__ constexpr int meta_words(SparseOp op) {
  return (meta_pieces(op) + 1) / 2;
}

template <SparseOp O>
__device__ void issue(const unsigned (&a)[4], const unsigned (&b)[4], unsigned c, unsigned meta,
                      unsigned (&d)[4]) {
#define TCEMU_SP_F32(TYPES, A, B)                                                          \
  asm volatile("mma.sp::ordered_metadata.sync.aligned." TYPES " {%0,%1,%2,%3}, " A ", " B  \
               ", {%8,%8,%8,%8}, %13, 0;\n"                                                \
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])                            \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(c), "r"(b[0]), "r"(b[1]), \
                 "r"(b[2]), "r"(b[3]), "r"(meta))
#define TCEMU_SP_F16(TYPES, A, B)                                                          \
  asm volatile("mma.sp::ordered_metadata.sync.aligned." TYPES " {%0,%1}, " A ", " B        \
               ", {%6,%6}, %11, 0;\n"                                                      \
               : "=r"(d[0]), "=r"(d[1])                                                    \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(c), "r"(b[0]), "r"(b[1]), \
                 "r"(b[2]), "r"(b[3]), "r"(meta))
  // Operands after the outputs: a[0..3], c, b[0..3], meta.
  if constexpr (O == SparseOp::f16_k16_f32) {
    TCEMU_SP_F32("m16n8k16.row.col.f32.f16.f16.f32", "{%4,%5}", "{%9,%10}");
  } else if constexpr (O == SparseOp::bf16_k16_f32) {
    TCEMU_SP_F32("m16n8k16.row.col.f32.bf16.bf16.f32", "{%4,%5}", "{%9,%10}");
  } else if constexpr (O == SparseOp::f16_k32_f32) {
    TCEMU_SP_F32("m16n8k32.row.col.f32.f16.f16.f32", "{%4,%5,%6,%7}", "{%9,%10,%11,%12}");
  } else if constexpr (O == SparseOp::bf16_k32_f32) {
    TCEMU_SP_F32("m16n8k32.row.col.f32.bf16.bf16.f32", "{%4,%5,%6,%7}", "{%9,%10,%11,%12}");
  } else if constexpr (O == SparseOp::tf32_k8_f32) {
    TCEMU_SP_F32("m16n8k8.row.col.f32.tf32.tf32.f32", "{%4,%5}", "{%9,%10}");
  } else if constexpr (O == SparseOp::tf32_k16_f32) {
    TCEMU_SP_F32("m16n8k16.row.col.f32.tf32.tf32.f32", "{%4,%5,%6,%7}", "{%9,%10,%11,%12}");
  } else if constexpr (is_fp8(O)) {
    // fp8 mma.sp exists from sm_89 on: a build for older targets (the default 80-real) must
    // not emit it.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    if constexpr (O == SparseOp::e4m3_k64_f32) {
      TCEMU_SP_F32("m16n8k64.row.col.f32.e4m3.e4m3.f32", "{%4,%5,%6,%7}", "{%9,%10,%11,%12}");
    } else {
      TCEMU_SP_F32("m16n8k64.row.col.f32.e5m2.e5m2.f32", "{%4,%5,%6,%7}", "{%9,%10,%11,%12}");
    }
#else
    __trap();  // the host refuses fp8 mma.sp below sm_89 before launching
#endif
  } else if constexpr (O == SparseOp::f16_k16_f16) {
    TCEMU_SP_F16("m16n8k16.row.col.f16.f16.f16.f16", "{%2,%3}", "{%7,%8}");
  } else {
    TCEMU_SP_F16("m16n8k32.row.col.f16.f16.f16.f16", "{%2,%3,%4,%5}", "{%7,%8,%9,%10}");
  }
#undef TCEMU_SP_F32
#undef TCEMU_SP_F16
}

// One warp per case: a_bits K/2 words, meta_words(O) words of a row's metadata (kept column j at
// bits 2 j, tf32 4 j, of the 64-bit row), b_bits K words per case.
template <SparseOp O>
__global__ void sparse_cases(const std::uint32_t* a_bits, const std::uint32_t* meta_bits,
                             const std::uint32_t* b_bits, const std::uint32_t* c_bits,
                             std::uint32_t* d_bits, int cases) {
  constexpr int k = sparse_k(O), registers = is_tf32(O) ? k / 4 : is_fp8(O) ? k / 16 : k / 8;
  const int warp = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / 32);
  if (warp >= cases) return;
  const int lane = static_cast<int>(threadIdx.x % 32), tig = lane % 4;
  const std::uint32_t* a = a_bits + static_cast<long long>(warp) * (k / 2);
  const std::uint32_t* b = b_bits + static_cast<long long>(warp) * k;
  unsigned ra[4] = {0, 0, 0, 0}, rb[4] = {0, 0, 0, 0}, d[4] = {0, 0, 0, 0};
  if constexpr (is_tf32(O)) {
    for (int e = 0; e < registers; ++e) {
      ra[e] = a[tig + 4 * (e / 2)];
      rb[e] = b[tig + 4 * e];
    }
  } else if constexpr (is_fp8(O)) {
    for (int e = 0; e < 4 * registers; ++e) {
      ra[e / 4] |= (a[4 * tig + (e & 3) + 16 * (e / 8)] & 0xFFu) << (8 * (e % 4));
      rb[e / 4] |= (b[4 * tig + (e & 3) + 16 * (e / 4)] & 0xFFu) << (8 * (e % 4));
    }
  } else {
    for (int e = 0; e < 2 * registers; ++e) {
      ra[e / 2] |= (a[2 * tig + (e & 1) + 8 * (e / 4)] & 0xFFFFu) << (16 * (e % 2));
      rb[e / 2] |= (b[2 * tig + (e & 1) + 8 * (e / 2)] & 0xFFFFu) << (16 * (e % 2));
    }
  }
  const std::uint32_t* row_meta = meta_bits + static_cast<long long>(warp) * meta_words(O);
  std::uint32_t meta = 0;
  if constexpr (is_fp8(O)) {
    meta = row_meta[tig / 2];  // tig 0, 1: kept columns 0-15; tig 2, 3: 16-31
  } else {
    // Thread tig holds piece tig % meta_pieces (16 bits) of the row's metadata, for both rows.
    const int piece = tig % meta_pieces(O);
    const std::uint32_t half = (row_meta[piece / 2] >> (16 * (piece % 2))) & 0xFFFFu;
    meta = half | (half << 16);
  }
  const std::uint32_t c = half_acc(O) ? (c_bits[warp] & 0xFFFFu) * 0x10001u : c_bits[warp];
  issue<O>(ra, rb, c, meta, d);
  if (lane == 0) d_bits[warp] = half_acc(O) ? (d[0] & 0xFFFFu) : d[0];
}

template <SparseOp O>
std::vector<std::uint32_t> launch(std::span<const SparseMmaCase> cases) {
  std::vector<std::uint32_t> a, meta, b, c;
  for (const SparseMmaCase& x : cases) {
    a.insert(a.end(), x.a.begin(), x.a.end());
    std::uint64_t row = 0;
    for (std::size_t j = 0; j < x.index.size(); ++j) {
      // tf32: the kept k of a pair is index % 2; 0b0100 names the first, 0b1110 the second.
      row |= is_tf32(O) ? std::uint64_t{x.index[j] % 2 == 0 ? 0x4u : 0xEu} << (4 * j)
                        : std::uint64_t{x.index[j]} << (2 * j);
    }
    for (int w = 0; w < meta_words(O); ++w)
      meta.push_back(static_cast<std::uint32_t>(row >> (32 * w)));
    b.insert(b.end(), x.b.begin(), x.b.end());
    c.push_back(x.c);
  }
  const DeviceWords da(a), dm(meta), db(b), dc(c);
  DeviceWords d(cases.size());
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned>((cases.size() * 32 + kThreads - 1) / kThreads);
  sparse_cases<O><<<blocks, kThreads>>>(da.get(), dm.get(), db.get(), dc.get(), d.get(),
                                        static_cast<int>(cases.size()));
  TCEMU_CUDA_CHECK(cudaGetLastError());
  TCEMU_CUDA_CHECK(cudaDeviceSynchronize());
  return d.to_host();
}

}  // namespace

std::vector<std::string_view> sparse_probe_instructions(int compute_capability) {
  if (compute_capability < 80) return {};
  if (compute_capability < 89) return {"mma.sp.m16n8k8", "mma.sp.m16n8k16", "mma.sp.m16n8k32"};
  return {"mma.sp.m16n8k8", "mma.sp.m16n8k16", "mma.sp.m16n8k32", "mma.sp.m16n8k64"};
}

std::vector<std::pair<FloatFormat, FloatFormat>> sparse_pairs(std::string_view instruction) {
  const std::pair<FloatFormat, FloatFormat> tf32{formats::tf32, formats::fp32};
  if (instruction == "mma.sp.m16n8k8") return {tf32};
  if (instruction == "mma.sp.m16n8k64") {
    // fp8 with an fp16 accumulator: ptxas (CUDA 13.0) refuses it for sm_90a ("F16 accumulator
    // and F8 floating point type not supported").
    return {{formats::e4m3, formats::fp32}, {formats::e5m2, formats::fp32}};
  }
  if (instruction != "mma.sp.m16n8k16" && instruction != "mma.sp.m16n8k32") return {};
  std::vector<std::pair<FloatFormat, FloatFormat>> out = {{formats::fp16, formats::fp32},
                                                          {formats::fp16, formats::fp16},
                                                          {formats::bf16, formats::fp32}};
  if (instruction == "mma.sp.m16n8k16") out.push_back(tf32);
  return out;
}

std::vector<std::uint32_t> run_sparse(std::string_view instruction, const FloatFormat& input,
                                      const FloatFormat& accumulator,
                                      std::span<const SparseMmaCase> cases) {
  const bool k8 = instruction == "mma.sp.m16n8k8", k16 = instruction == "mma.sp.m16n8k16";
  const bool k64 = instruction == "mma.sp.m16n8k64";
  const bool bf16 = input == formats::bf16, tf32 = input == formats::tf32;
  const bool fp32_acc = accumulator == formats::fp32;
  const auto pairs = sparse_pairs(instruction);
  if (std::none_of(pairs.begin(), pairs.end(),
                   [&](const auto& p) { return p.first == input && p.second == accumulator; })) {
    throw std::invalid_argument("no sparse runner for " + std::string(instruction) + " " +
                                std::string(input.name) + " -> " + std::string(accumulator.name) +
                                "; it runs mma.sp.m16n8k16 and mma.sp.m16n8k32 with fp16 -> "
                                "fp32, fp16 -> fp16, bf16 -> fp32, and mma.sp.m16n8k8 and "
                                "mma.sp.m16n8k16 with tf32 -> fp32, and mma.sp.m16n8k64 with e4m3, "
                                "e5m2 -> fp32");
  }
  const std::size_t k = k8 ? 8 : k16 ? 16 : k64 ? 64 : 32;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (cases[i].b.size() != k) {
      throw std::invalid_argument("sparse case " + std::to_string(i + 1) +
                                  " has K = " + std::to_string(cases[i].b.size()) + ", " +
                                  std::string(instruction) + " takes K = " + std::to_string(k));
    }
    check_sparse_case(cases[i], input);
  }
  const DeviceInfo device = require_device();
  if (device.compute_major < 8) {
    throw std::runtime_error(device.name + " has no mma.sp (sm_80 or newer needed)");
  }
  if (k64 && device.compute_major * 10 + device.compute_minor < 89) {
    throw std::runtime_error(device.name + " has no fp8 mma.sp (sm_89 or newer needed)");
  }
  if (cases.empty()) return {};
  if (k64) {
    return input == formats::e4m3 ? launch<SparseOp::e4m3_k64_f32>(cases)
                                  : launch<SparseOp::e5m2_k64_f32>(cases);
  }
  if (k8) return launch<SparseOp::tf32_k8_f32>(cases);
  if (k16 && tf32) return launch<SparseOp::tf32_k16_f32>(cases);
  if (k16) {
    return bf16 ? launch<SparseOp::bf16_k16_f32>(cases)
                : (fp32_acc ? launch<SparseOp::f16_k16_f32>(cases)
                            : launch<SparseOp::f16_k16_f16>(cases));
  }
  return bf16 ? launch<SparseOp::bf16_k32_f32>(cases)
              : (fp32_acc ? launch<SparseOp::f16_k32_f32>(cases)
                          : launch<SparseOp::f16_k32_f16>(cases));
}

}  // namespace tcemu::gpu
