#include <cuda_runtime.h>

#include <tcemu/backend/complex_elements.hpp>

#include "cuda_check.hpp"
#include "grid_loop.cuh"
#include "steps/complex_steps.hpp"

namespace tcemu::gpu::detail {
namespace {

namespace el = complex_elements;

constexpr int kThreads = 256;

// The position of part `imaginary` of complex element (i, j) in its parts view.
__device__ void part(const DeviceReal& parts, std::int64_t i, std::int64_t j, bool imaginary,
                     std::int64_t& pi, std::int64_t& pj) {
  const std::int64_t at = imaginary ? 1 : 0;
  pi = parts.row_major ? i : 2 * i + at;
  pj = parts.row_major ? 2 * j + at : j;
}

__global__ void real_form_kernel(const DeviceReal x, const std::int64_t rows,
                                 const std::int64_t cols, const bool conjugate,
                                 const DeviceReal dst) {
  for_each_element(dst.rows, dst.cols, dst.row_major, [&](std::int64_t r, std::int64_t c) {
    const el::RealFormSource s = el::real_form_source(r, c, rows, cols, conjugate);
    std::int64_t pi = 0, pj = 0;
    part(x, s.i, s.j, s.imaginary, pi, pj);
    dst.set_bits(r, c, el::flip_sign(x.raw(pi, pj), dst.fp64, s.flip));
  });
}

template <class T>
__global__ void epilogue_kernel(const DeviceReal v, const bool has_v, const el::Pair<T> alpha,
                                const el::Pair<T> beta, const DeviceReal c, const std::int64_t rows,
                                const std::int64_t cols, const fp64::Direction d) {
  const bool read_c = beta.re != 0 || beta.im != 0;
  for_each_element(rows, cols, c.row_major, [&](std::int64_t i, std::int64_t j) {
    std::int64_t ri = 0, rj = 0, ii = 0, ij = 0;
    part(c, i, j, false, ri, rj);
    part(c, i, j, true, ii, ij);
    el::Pair<T> old{T(0), T(0)};
    if (read_c) old = {static_cast<T>(c.get(ri, rj)), static_cast<T>(c.get(ii, ij))};
    const el::Pair<T> r =
        has_v ? el::complex_epilogue(
                    alpha, {static_cast<T>(v.get(i, j)), static_cast<T>(v.get(i, cols + j))}, beta,
                    old)
              : el::complex_epilogue_without_value(beta, old);
    c.set_bits(ri, rj, el::part_bits(r.re, c.fp64, d));
    c.set_bits(ii, ij, el::part_bits(r.im, c.fp64, d));
  });
}

template <class T>
void run_epilogue(const DeviceReal* v, std::complex<double> alpha, std::complex<double> beta,
                  const DeviceReal& c, std::int64_t rows, std::int64_t cols, fp64::Direction d) {
  const DeviceReal none{nullptr, 0, 0, 1, false, true};
  epilogue_kernel<T><<<elementwise_grid(rows, cols, c.row_major, kThreads), kThreads>>>(
      v ? *v : none, v != nullptr,
      el::Pair<T>{static_cast<T>(alpha.real()), static_cast<T>(alpha.imag())},
      el::Pair<T>{static_cast<T>(beta.real()), static_cast<T>(beta.imag())}, c, rows, cols, d);
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void complex_real_form(const DeviceReal& x_parts, std::int64_t rows, std::int64_t cols,
                       bool conjugate, const DeviceReal& dst) {
  if (dst.rows == 0 || dst.cols == 0) return;
  real_form_kernel<<<elementwise_grid(dst.rows, dst.cols, dst.row_major, kThreads), kThreads>>>(
      x_parts, rows, cols, conjugate, dst);
  TCEMU_CUDA_CHECK(cudaGetLastError());
}

void complex_epilogue(const DeviceReal* v, bool fp64_arithmetic, std::complex<double> alpha,
                      std::complex<double> beta, const DeviceReal& c_parts, std::int64_t rows,
                      std::int64_t cols, fp64::Direction d) {
  if (rows == 0 || cols == 0) return;
  if (fp64_arithmetic) {
    run_epilogue<double>(v, alpha, beta, c_parts, rows, cols, d);
  } else {
    run_epilogue<float>(v, alpha, beta, c_parts, rows, cols, d);
  }
}

}  // namespace tcemu::gpu::detail
