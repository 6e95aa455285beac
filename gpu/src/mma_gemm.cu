#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/gpu/mma_gemm.hpp>
#include <tcemu/gpu/mma_runner.hpp>

#include "cuda_check.hpp"
#include "device_words.hpp"
#include "mma_fragments.cuh"

namespace tcemu::gpu {
namespace {

using detail::Coordinate;
using detail::DeviceWords;
using detail::fp16_accumulator;
using detail::Instruction;
using detail::mma;
using detail::Shape16x8x16;
using detail::Shape16x8x32;
using detail::Shape16x8x8;

// Matrices arrive as row-major arrays of one 32-bit word per element (the element's container
// in the low bits). Blocks of one warp; block (x, y) computes D rows 16y..16y+15, columns
// 8x..8x+7.
template <class Shape, Instruction I>
__global__ void gemm_kernel(const std::uint32_t* a, const std::uint32_t* b, const std::uint32_t* c,
                            std::uint32_t* d, int m, int n, int k) {
  const int lane = static_cast<int>(threadIdx.x);
  const int group = lane / 4, tig = lane % 4;
  const int row0 = static_cast<int>(blockIdx.y) * 16, col0 = static_cast<int>(blockIdx.x) * 8;
  constexpr int bits = 32 / Shape::per_register;
  constexpr std::uint32_t element_mask = bits == 32 ? 0xFFFFFFFFu : (1u << bits) - 1;
  constexpr bool half_acc = fp16_accumulator(I);

  // C and D slot e of a lane: (group + 8 * (e >> 1), 2 * tig + (e & 1)).
  unsigned acc[4] = {0, 0, 0, 0};
  for (int e = 0; e < 4; ++e) {
    const int row = row0 + group + 8 * (e >> 1), col = col0 + 2 * tig + (e & 1);
    const std::uint32_t v = row < m && col < n ? c[static_cast<long long>(row) * n + col] : 0;
    if (half_acc) {
      acc[e >> 1] |= (v & 0xFFFFu) << (16 * (e & 1));
    } else {
      acc[e] = v;
    }
  }
  for (int k0 = 0; k0 < k; k0 += Shape::k) {
    unsigned ra[4] = {0, 0, 0, 0}, rb[2] = {0, 0}, rd[4] = {0, 0, 0, 0};
    for (int e = 0; e < Shape::a_elements; ++e) {
      const Coordinate at = Shape::a(group, tig, e);
      const int row = row0 + at.row, col = k0 + at.col;
      const std::uint32_t v =
          row < m && col < k ? a[static_cast<long long>(row) * k + col] & element_mask : 0;
      ra[e / Shape::per_register] |= v << (bits * (e % Shape::per_register));
    }
    for (int e = 0; e < Shape::b_elements; ++e) {
      const Coordinate at = Shape::b(group, tig, e);
      const int row = k0 + at.row, col = col0 + at.col;
      const std::uint32_t v =
          row < k && col < n ? b[static_cast<long long>(row) * n + col] & element_mask : 0;
      rb[e / Shape::per_register] |= v << (bits * (e % Shape::per_register));
    }
    mma<I>(ra, rb, acc, rd);
    for (int r = 0; r < 4; ++r) acc[r] = rd[r];
  }
  for (int e = 0; e < 4; ++e) {
    const int row = row0 + group + 8 * (e >> 1), col = col0 + 2 * tig + (e & 1);
    if (row >= m || col >= n) continue;
    d[static_cast<long long>(row) * n + col] =
        half_acc ? (acc[e >> 1] >> (16 * (e & 1))) & 0xFFFFu : acc[e];
  }
}

std::vector<std::uint32_t> words(ConstMatrixView x) {
  std::vector<std::uint32_t> out(static_cast<std::size_t>(x.rows * x.cols));
  for (std::int64_t i = 0; i < x.rows; ++i) {
    for (std::int64_t j = 0; j < x.cols; ++j) out[i * x.cols + j] = x.get(i, j);
  }
  return out;
}

template <class Shape, Instruction I>
void launch(const DeviceWords& a, const DeviceWords& b, const DeviceWords& c, DeviceWords& d, int m,
            int n, int k) {
  const dim3 grid(static_cast<unsigned>((n + 7) / 8), static_cast<unsigned>((m + 15) / 16));
  gemm_kernel<Shape, I><<<grid, 32>>>(a.get(), b.get(), c.get(), d.get(), m, n, k);
  TCEMU_CUDA_CHECK(cudaGetLastError());
  TCEMU_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace

void mma_sync_gemm(ConstMatrixView a, ConstMatrixView b, ConstMatrixView c, MatrixView d) {
  const FloatFormat& input = a.format;
  const FloatFormat& accumulator = c.format;
  if (!(b.format == input) || !(d.format == accumulator)) {
    throw std::invalid_argument("mma_sync_gemm: A and B must share a format, C and D another");
  }
  if (a.cols != b.rows || c.rows != a.rows || c.cols != b.cols || d.rows != a.rows ||
      d.cols != b.cols) {
    throw std::invalid_argument("mma_sync_gemm: shapes do not chain (A m x k, B k x n, C/D m x n)");
  }
  const auto m = static_cast<int>(a.rows), n = static_cast<int>(b.cols),
             k = static_cast<int>(a.cols);
  check_mma_sync(input, accumulator);
  if (m == 0 || n == 0) return;
  const DeviceWords da(words(a)), db(words(b)), dc(words(c));
  DeviceWords dd(static_cast<std::size_t>(m) * n);
  const bool fp32 = accumulator == formats::fp32;
  if (input == formats::fp16 && fp32)
    launch<Shape16x8x16, Instruction::f16_f32>(da, db, dc, dd, m, n, k);
  else if (input == formats::fp16)
    launch<Shape16x8x16, Instruction::f16_f16>(da, db, dc, dd, m, n, k);
  else if (input == formats::bf16)
    launch<Shape16x8x16, Instruction::bf16_f32>(da, db, dc, dd, m, n, k);
  else if (input == formats::tf32)
    launch<Shape16x8x8, Instruction::tf32_f32>(da, db, dc, dd, m, n, k);
  else if (input == formats::e4m3 && fp32)
    launch<Shape16x8x32, Instruction::e4m3_f32>(da, db, dc, dd, m, n, k);
  else if (input == formats::e4m3)
    launch<Shape16x8x32, Instruction::e4m3_f16>(da, db, dc, dd, m, n, k);
  else if (fp32)
    launch<Shape16x8x32, Instruction::e5m2_f32>(da, db, dc, dd, m, n, k);
  else
    launch<Shape16x8x32, Instruction::e5m2_f16>(da, db, dc, dd, m, n, k);
  const std::vector<std::uint32_t> out = dd.to_host();
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) d.set(i, j, out[static_cast<std::size_t>(i) * n + j]);
  }
}

}  // namespace tcemu::gpu
