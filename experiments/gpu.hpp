// The GPU side of the accuracy experiments (their `--backend gpu` modes): device 0, the GPU
// backend on it and cublasDgemm on host operands (the vendor's DGEMM column of the tables). In a
// build without the CUDA backend (TCEMU_WITH_GPU unset) every function throws, so that a GPU mode
// fails with a message instead of running something else.
#pragma once

#include <cstdint>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/backend/backend.hpp>
#if TCEMU_WITH_GPU
#include <tcemu/gpu/cublas_baselines.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/gpu_backend.hpp>
#endif
#include <tcemu/session/backends.hpp>

namespace tcemu::experiments {

#if TCEMU_WITH_GPU

// The emulator preset of device 0 ("sm90"), after naming the device on stderr. Throws
// std::runtime_error when there is no CUDA device (gpu::require_device's message: "no CUDA
// device (REASON)") or when the device has no preset.
inline std::string gpu_arch() {
  const gpu::DeviceInfo device = gpu::require_device();
  const std::string arch = device.arch_preset();
  std::cerr << "device: " << device.name << " (sm_" << device.compute_major << device.compute_minor
            << ", " << device.multiprocessors << " SMs), preset " << (arch.empty() ? "none" : arch)
            << '\n';
  if (arch.empty()) throw std::runtime_error(device.name + " has no emulator preset");
  return arch;
}

// A B by cublasDgemm (gpu::CublasBaselines) on the device of `gpu`, a GPU backend: A (m x k) and
// B (k x n) column major on the host, copied in; the m x n product copied out.
inline std::vector<double> cublas_dgemm(Backend& gpu, std::int64_t m, std::int64_t n,
                                        std::int64_t k, const std::vector<double>& a,
                                        const std::vector<double>& b) {
  const auto on_device = [&](const std::vector<double>& host) {
    Buffer buffer = gpu.allocate(host.size() * sizeof(double));
    gpu.copy_in(host.data(), buffer, host.size() * sizeof(double));
    return buffer;
  };
  const Buffer da = on_device(a), db = on_device(b);
  const Buffer dc = gpu.allocate(static_cast<std::size_t>(m * n) * sizeof(double));
  const auto view = [](const Buffer& buffer, std::int64_t rows, std::int64_t cols) {
    return RealMatrix{&buffer, 0, Real::fp64, rows, cols, rows, Layout::column_major};
  };
  gpu::CublasBaselines(gpu).gemm(gpu::Baseline::dgemm, view(da, m, k), view(db, k, n),
                                 view(dc, m, n));
  std::vector<double> c(static_cast<std::size_t>(m * n));
  gpu.copy_out(dc, c.data(), c.size() * sizeof(double));
  return c;
}

#else

[[noreturn]] inline void no_gpu_backend() {
  throw std::runtime_error(
      "this build has no GPU backend (no CUDA toolkit was found when it was configured)");
}
inline std::string gpu_arch() {
  no_gpu_backend();
}
inline std::vector<double> cublas_dgemm(Backend&, std::int64_t, std::int64_t, std::int64_t,
                                        const std::vector<double>&, const std::vector<double>&) {
  no_gpu_backend();
}

#endif

// The GPU backend on device 0. Its low-precision GEMMs (the Ozaki scheme's tensor-core slice
// products) run through cuBLAS (the engine "cublas", as ozaki_gpu_table and the benchmarks run
// them), or on our mma.sync kernel when `our_kernels`; binary64 products (Backend::fp64_gemm)
// are cublasDgemm on either. Throws session::NotBuilt in a build without the CUDA backend.
inline std::unique_ptr<Backend> make_gpu(bool our_kernels = false) {
  return session::make_backend(
      session::backend_choice("gpu"),
      {.engine = our_kernels ? session::Engine::mma_sync : session::Engine::cublas});
}

}  // namespace tcemu::experiments
