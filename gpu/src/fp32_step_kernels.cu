#include <cuda_runtime.h>

#include <tcemu/emulator/residual_split.hpp>

#include "cuda_check.hpp"
#include "device_words.hpp"
#include "fp32_step_kernels.hpp"

namespace tcemu::gpu::detail {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::int64_t count) {
  return static_cast<unsigned>(std::max<std::int64_t>(
      1, std::min<std::int64_t>((count + kThreads - 1) / kThreads, 1 << 20)));
}

template <class Body>
__device__ void for_each_element(std::int64_t rows, std::int64_t cols, const Body& body) {
  for (std::int64_t t = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
       t < rows * cols; t += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    body(t % rows, t / rows);
  }
}

constexpr bool nonfinite(std::uint32_t bits) {
  return (bits & 0x7F800000u) == 0x7F800000u;
}

// counters: [0] max |x| bits, [1] NaN count, [2] Inf count (atomics: the order of visits does
// not matter, as the step promises).
__global__ void summarize_kernel(const DeviceMatrix x, unsigned long long* counters) {
  unsigned long long max_bits = 0, nans = 0, infs = 0;
  for_each_element(x.rows, x.cols, [&](std::int64_t i, std::int64_t j) {
    const std::uint32_t magnitude = x.get(i, j) & 0x7FFFFFFFu;
    if (magnitude > 0x7F800000u) {
      ++nans;
    } else if (magnitude == 0x7F800000u) {
      ++infs;
    } else if (magnitude > max_bits) {
      max_bits = magnitude;
    }
  });
  atomicMax(&counters[0], max_bits);
  if (nans) atomicAdd(&counters[1], nans);
  if (infs) atomicAdd(&counters[2], infs);
}

__global__ void split_kernel(const DeviceMatrix x, const DeviceMatrix part,
                             const FloatFormat format, const DeviceMatrix residual,
                             const bool with_residual, const Rounding rounding,
                             const int scale_exponent, unsigned long long* overflows) {
  unsigned long long count = 0;
  for_each_element(x.rows, x.cols, [&](std::int64_t i, std::int64_t j) {
    const SplitElement e = split_fp32_element(x.get(i, j), format, rounding, scale_exponent);
    part.set(i, j, e.part);
    if (with_residual) residual.set(i, j, e.residual);
    count += e.overflow ? 1 : 0;
  });
  if (count) atomicAdd(overflows, count);
}

__global__ void combine_kernel(const DeviceMatrix x, const DeviceMatrix y, const bool has_y,
                               const DeviceMatrix c, const DeviceMatrix d,
                               const CombineOptions options) {
  for_each_element(x.rows, x.cols, [&](std::int64_t i, std::int64_t j) {
    d.set(i, j,
          combine_fp32_element(x.get(i, j), has_y, has_y ? y.get(i, j) : 0u,
                               options.beta == 0.0f ? 0u : c.get(i, j), options.y_exponent,
                               options.scale_exponent, options.alpha, options.beta));
  });
}

// flags[i] (i < m): row i of A holds a NaN or Inf; flags[m + j]: column j of B does.
__global__ void flag_kernel(const DeviceMatrix a, const DeviceMatrix b, unsigned* flags) {
  for_each_element(a.rows, a.cols, [&](std::int64_t i, std::int64_t p) {
    if (nonfinite(a.get(i, p))) flags[i] = 1;
  });
  for_each_element(b.rows, b.cols, [&](std::int64_t p, std::int64_t j) {
    if (nonfinite(b.get(p, j))) flags[a.rows + j] = 1;
  });
}

__global__ void propagate_kernel(const DeviceMatrix a, const DeviceMatrix b, const DeviceMatrix d,
                                 const unsigned* flags) {
  for_each_element(d.rows, d.cols, [&](std::int64_t i, std::int64_t j) {
    if (!flags[i] && !flags[a.rows + j]) return;
    NonfiniteProducts products;
    for (std::int64_t p = 0; p < a.cols; ++p) {
      const std::uint32_t x = a.get(i, p), y = b.get(p, j);
      if (nonfinite(x) || nonfinite(y)) products.add(x, y);
    }
    d.set(i, j, products.result());
  });
}

std::vector<std::uint64_t> read_counters(const DeviceWords& words, std::size_t count) {
  std::vector<std::uint32_t> raw = words.to_host();
  std::vector<std::uint64_t> out(count);
  std::memcpy(out.data(), raw.data(), count * sizeof(std::uint64_t));
  return out;
}

}  // namespace

Fp32Summary summarize_fp32(const DeviceMatrix& x) {
  DeviceWords counters(std::vector<std::uint32_t>(6, 0));
  auto* c = reinterpret_cast<unsigned long long*>(counters.get());
  if (x.rows > 0 && x.cols > 0) {
    summarize_kernel<<<blocks_for(x.rows * x.cols), kThreads>>>(x, c);
    TCEMU_CUDA_CHECK(cudaGetLastError());
  }
  const auto v = read_counters(counters, 3);
  return {static_cast<std::uint32_t>(v[0]), static_cast<std::int64_t>(v[1]),
          static_cast<std::int64_t>(v[2])};
}

std::int64_t split_fp32(const DeviceMatrix& x, const DeviceMatrix& part, const FloatFormat& format,
                        const DeviceMatrix* residual, Rounding rounding, int scale_exponent) {
  DeviceWords counter(std::vector<std::uint32_t>(2, 0));
  if (x.rows > 0 && x.cols > 0) {
    split_kernel<<<blocks_for(x.rows * x.cols), kThreads>>>(
        x, part, format, residual ? *residual : part, residual != nullptr, rounding, scale_exponent,
        reinterpret_cast<unsigned long long*>(counter.get()));
    TCEMU_CUDA_CHECK(cudaGetLastError());
  }
  return static_cast<std::int64_t>(read_counters(counter, 1)[0]);
}

void combine_fp32(const DeviceMatrix& x, const DeviceMatrix* y, const DeviceMatrix* c,
                  const DeviceMatrix& d, const CombineOptions& options) {
  if (x.rows == 0 || x.cols == 0) return;
  combine_kernel<<<blocks_for(x.rows * x.cols), kThreads>>>(x, y ? *y : x, y != nullptr, c ? *c : x,
                                                            d, options);
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

void propagate_nonfinite_fp32(const DeviceMatrix& a, const DeviceMatrix& b, const DeviceMatrix& d) {
  if (d.rows == 0 || d.cols == 0 || a.cols == 0) return;
  DeviceWords flags(std::vector<std::uint32_t>(static_cast<std::size_t>(a.rows + b.cols), 0));
  flag_kernel<<<blocks_for(std::max(a.rows * a.cols, b.rows * b.cols)), kThreads>>>(a, b,
                                                                                    flags.get());
  TCEMU_CUDA_CHECK(cudaGetLastError());
  propagate_kernel<<<blocks_for(d.rows * d.cols), kThreads>>>(a, b, d, flags.get());
  TCEMU_CUDA_CHECK(cudaGetLastError());
  TCEMU_CUDA_CHECK(cudaDeviceSynchronize());  // flags are freed on return
}

}  // namespace tcemu::gpu::detail
