// One mma.sync per case (mma_fragments.cuh has the instructions and their fragment layouts).
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include <tcemu/gpu/mma_runner.hpp>

#include "cuda_check.hpp"
#include "device_words.hpp"
#include "gemm/mma_fragments.cuh"

namespace tcemu::gpu {
namespace {

using detail::Coordinate;
using detail::fp16_accumulator;
using detail::Instruction;
using detail::mma;
using detail::Shape16x8x16;
using detail::Shape16x8x32;
using detail::Shape16x8x8;

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
  if (n == 0) return {};
  const detail::DeviceWords da(a), db(b), dc(c);
  detail::DeviceWords dd(n);
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned>((n * 32 + kThreads - 1) / kThreads);
  mma_cases<Shape, I>
      <<<blocks, kThreads>>>(da.get(), db.get(), dc.get(), dd.get(), static_cast<int>(n));
  TCEMU_CUDA_CHECK(cudaGetLastError());
  TCEMU_CUDA_CHECK(cudaDeviceSynchronize());
  return dd.to_host();
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

std::vector<std::pair<FloatFormat, FloatFormat>> mma_sync_pairs(int compute_capability) {
  std::vector<std::pair<FloatFormat, FloatFormat>> pairs = {{formats::fp16, formats::fp32},
                                                            {formats::fp16, formats::fp16},
                                                            {formats::bf16, formats::fp32},
                                                            {formats::tf32, formats::fp32}};
  if (compute_capability >= 89) {
    for (const FloatFormat& f8 : {formats::e4m3, formats::e5m2}) {
      pairs.emplace_back(f8, formats::fp32);
      pairs.emplace_back(f8, formats::fp16);
    }
  }
  return pairs;
}

void check_mma_sync(const FloatFormat& input, const FloatFormat& accumulator) {
  mma_sync_k(input);  // refuses inputs no mma.sync takes
  const bool fp32 = accumulator == formats::fp32;
  const bool fp16_from_fp16_or_fp8 =
      accumulator == formats::fp16 &&
      (input == formats::fp16 || input == formats::e4m3 || input == formats::e5m2);
  if (!fp32 && !fp16_from_fp16_or_fp8) {
    throw std::invalid_argument("no mma.sync takes " + std::string(input.name) + " with an " +
                                std::string(accumulator.name) + " accumulator");
  }
  if ((input == formats::e4m3 || input == formats::e5m2) && compute_capability() < 89) {
    throw std::runtime_error("fp8 mma.sync needs compute capability 8.9 or newer");
  }
}

void check_case_k(const FloatFormat& input, std::span<const MmaCase> cases,
                  const char* instruction) {
  const int k = mma_sync_k(input);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (cases[i].a.size() != static_cast<std::size_t>(k) ||
        cases[i].b.size() != cases[i].a.size()) {
      throw std::invalid_argument(
          "case " + std::to_string(i + 1) + " has K = " + std::to_string(cases[i].a.size()) + ", " +
          instruction + " with " + std::string(input.name) + " takes K = " + std::to_string(k));
    }
  }
}

std::vector<std::uint32_t> run_mma_sync(const FloatFormat& input, const FloatFormat& accumulator,
                                        std::span<const MmaCase> cases) {
  check_case_k(input, cases, "mma.sync");
  check_mma_sync(input, accumulator);
  const bool fp32 = accumulator == formats::fp32;
  if (input == formats::fp16) {
    return fp32 ? launch<Shape16x8x16, Instruction::f16_f32>(cases)
                : launch<Shape16x8x16, Instruction::f16_f16>(cases);
  }
  if (input == formats::bf16) return launch<Shape16x8x16, Instruction::bf16_f32>(cases);
  if (input == formats::tf32) return launch<Shape16x8x8, Instruction::tf32_f32>(cases);
  if (input == formats::e4m3) {
    return fp32 ? launch<Shape16x8x32, Instruction::e4m3_f32>(cases)
                : launch<Shape16x8x32, Instruction::e4m3_f16>(cases);
  }
  return fp32 ? launch<Shape16x8x32, Instruction::e5m2_f32>(cases)
              : launch<Shape16x8x32, Instruction::e5m2_f16>(cases);
}

}  // namespace tcemu::gpu
