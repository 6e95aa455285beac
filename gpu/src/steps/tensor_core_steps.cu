#include <tcemu/emulator/convert.hpp>

#include "cuda_check.hpp"
#include "grid_loop.cuh"
#include "steps/tensor_core_steps.hpp"

namespace tcemu::gpu::detail {
namespace {

constexpr int kThreads = 256;

__global__ void convert_kernel(const DeviceMatrix src, const FloatFormat from,
                               const DeviceMatrix dst, const FloatFormat to,
                               const Rounding rounding) {
  for_each_element(dst.rows, dst.cols, dst.row_major, [&](std::int64_t i, std::int64_t j) {
    dst.set(i, j, convert(from, to, src.get(i, j), rounding));
  });
}

__global__ void copy_kernel(const DeviceMatrix src, const DeviceMatrix dst) {
  for_each_element(dst.rows, dst.cols, dst.row_major,
                   [&](std::int64_t i, std::int64_t j) { dst.set(i, j, src.get(i, j)); });
}

__global__ void pack_kernel(const DeviceMatrix src, const bool columns, const DeviceMatrix dst,
                            const std::int64_t k) {
  for_each_element(dst.rows, dst.cols, true, [&](std::int64_t r, std::int64_t kk) {
    dst.set(r, kk, kk >= k ? 0u : columns ? src.get(kk, r) : src.get(r, kk));
  });
}

}  // namespace

void convert_matrix(const DeviceMatrix& src, const FloatFormat& from, const DeviceMatrix& dst,
                    const FloatFormat& to, Rounding rounding) {
  if (dst.rows == 0 || dst.cols == 0) return;
  convert_kernel<<<elementwise_grid(dst.rows, dst.cols, dst.row_major, kThreads), kThreads>>>(
      src, from, dst, to, rounding);
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

void copy_matrix(const DeviceMatrix& src, const DeviceMatrix& dst) {
  if (dst.rows == 0 || dst.cols == 0) return;
  copy_kernel<<<elementwise_grid(dst.rows, dst.cols, dst.row_major, kThreads), kThreads>>>(src,
                                                                                           dst);
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

void pack_k_rows(const DeviceMatrix& src, bool columns, std::int64_t rows, std::int64_t k,
                 void* dst, std::int64_t ld_elements) {
  if (rows == 0 || ld_elements == 0) return;
  const DeviceMatrix out{
      static_cast<unsigned char*>(dst), rows, ld_elements, ld_elements, true, src.element_bytes};
  pack_kernel<<<elementwise_grid(rows, ld_elements, true, kThreads), kThreads>>>(src, columns, out,
                                                                                 k);
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tcemu::gpu::detail
