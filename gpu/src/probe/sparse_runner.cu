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
#include <cuda_runtime.h>

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
  bf16_k32_f32
};

__host__ __device__ constexpr int sparse_k(SparseOp op) {
  return op >= SparseOp::f16_k32_f32 ? 32 : 16;
}
__host__ __device__ constexpr bool half_acc(SparseOp op) {
  return op == SparseOp::f16_k16_f16 || op == SparseOp::f16_k32_f16;
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
  } else if constexpr (O == SparseOp::f16_k16_f16) {
    TCEMU_SP_F16("m16n8k16.row.col.f16.f16.f16.f16", "{%2,%3}", "{%7,%8}");
  } else {
    TCEMU_SP_F16("m16n8k32.row.col.f16.f16.f16.f16", "{%2,%3,%4,%5}", "{%7,%8,%9,%10}");
  }
#undef TCEMU_SP_F32
#undef TCEMU_SP_F16
}

// One warp per case: a_bits K/2 words, meta one 2-bits-per-kept-element word (kept column j at
// bits 2 j), b_bits K words per case.
template <SparseOp O>
__global__ void sparse_cases(const std::uint32_t* a_bits, const std::uint32_t* meta_bits,
                             const std::uint32_t* b_bits, const std::uint32_t* c_bits,
                             std::uint32_t* d_bits, int cases) {
  constexpr int k = sparse_k(O), registers = k / 8;
  const int warp = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / 32);
  if (warp >= cases) return;
  const int lane = static_cast<int>(threadIdx.x % 32), tig = lane % 4;
  const std::uint32_t* a = a_bits + static_cast<long long>(warp) * (k / 2);
  const std::uint32_t* b = b_bits + static_cast<long long>(warp) * k;
  unsigned ra[4] = {0, 0, 0, 0}, rb[4] = {0, 0, 0, 0}, d[4] = {0, 0, 0, 0};
  for (int e = 0; e < 2 * registers; ++e) {
    ra[e / 2] |= (a[2 * tig + (e & 1) + 8 * (e / 4)] & 0xFFFFu) << (16 * (e % 2));
    rb[e / 2] |= (b[2 * tig + (e & 1) + 8 * (e / 2)] & 0xFFFFu) << (16 * (e % 2));
  }
  const std::uint32_t m = meta_bits[warp];
  const std::uint32_t half = k == 16 ? (m & 0xFFFFu) : (tig % 2 == 0 ? m & 0xFFFFu : m >> 16);
  const std::uint32_t c = half_acc(O) ? (c_bits[warp] & 0xFFFFu) * 0x10001u : c_bits[warp];
  issue<O>(ra, rb, c, half | (half << 16), d);
  if (lane == 0) d_bits[warp] = half_acc(O) ? (d[0] & 0xFFFFu) : d[0];
}

template <SparseOp O>
std::vector<std::uint32_t> launch(std::span<const SparseMmaCase> cases) {
  std::vector<std::uint32_t> a, meta, b, c;
  for (const SparseMmaCase& x : cases) {
    a.insert(a.end(), x.a.begin(), x.a.end());
    std::uint32_t word = 0;
    for (std::size_t j = 0; j < x.index.size(); ++j) word |= std::uint32_t{x.index[j]} << (2 * j);
    meta.push_back(word);
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
  return {"mma.sp.m16n8k16", "mma.sp.m16n8k32"};
}

std::vector<std::pair<FloatFormat, FloatFormat>> sparse_pairs() {
  return {{formats::fp16, formats::fp32},
          {formats::fp16, formats::fp16},
          {formats::bf16, formats::fp32}};
}

std::vector<std::uint32_t> run_sparse(std::string_view instruction, const FloatFormat& input,
                                      const FloatFormat& accumulator,
                                      std::span<const SparseMmaCase> cases) {
  const bool k16 = instruction == "mma.sp.m16n8k16", k32 = instruction == "mma.sp.m16n8k32";
  const bool fp16 = input == formats::fp16, bf16 = input == formats::bf16;
  const bool fp32_acc = accumulator == formats::fp32, fp16_acc = accumulator == formats::fp16;
  if (!(k16 || k32) || !((fp16 && (fp32_acc || fp16_acc)) || (bf16 && fp32_acc))) {
    throw std::invalid_argument("no sparse runner for " + std::string(instruction) + " " +
                                std::string(input.name) + " -> " + std::string(accumulator.name) +
                                "; it runs mma.sp.m16n8k16 and mma.sp.m16n8k32 with fp16 -> "
                                "fp32, fp16 -> fp16, bf16 -> fp32");
  }
  const std::size_t k = k16 ? 16 : 32;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (cases[i].b.size() != k) {
      throw std::invalid_argument("sparse case " + std::to_string(i + 1) +
                                  " has K = " + std::to_string(cases[i].b.size()) + ", " +
                                  std::string(instruction) + " takes K = " + std::to_string(k));
    }
    check_sparse_case(cases[i]);
  }
  const DeviceInfo device = require_device();
  if (device.compute_major < 8) {
    throw std::runtime_error(device.name + " has no mma.sp (sm_80 or newer needed)");
  }
  if (cases.empty()) return {};
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
