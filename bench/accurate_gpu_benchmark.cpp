// Dot2 and ExBLAS-style inner products on the GPU against cuBLAS (cublasDdot, cublasDgemv,
// cublasDgemm) on the same device buffers in the same run, and the correctly rounded DGEMM by the
// Ozaki scheme (tensor cores, and binary64 slices) against ExBLAS-style for phi = 0 to 8.
//
//   accurate_gpu_benchmark [--dot N] [--gemv N] [--gemm N] [--cr N]
//       defaults: DOT of 2^26 terms, GEMV and GEMM of N x N, N = 8192 and 4096, CR DGEMM 1024
//       (kUsage)
//
// Table 1: the median of 5 runs after a warm-up (steady clock around the call and a device
// synchronisation), and ours / cuBLAS as a ratio (the seed slides: Dot2 near 1 for DOT and GEMV,
// about 11 for GEMM). Inputs: (rand - 0.5) * exp(randn). Table 2: host-to-host time of one
// dgemm call (operands copied in and out, as a user calls it), the slices the Ozaki scheme
// took, the device memory it needs (operands, remainders, slices, the stack of scaled products
// CR sums) against ExBLAS's (operands only: accumulators live in registers and local memory),
// and whether every element of the two correctly rounded results agrees bit for bit.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <tcemu/accurate/handle.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/gpu_backend.hpp>
#include <tcemu/ozaki/handle.hpp>
#include <tcemu/reference/phi_values.hpp>
#include <tcemu/session/arguments.hpp>

namespace {

using namespace tcemu;

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "%s: cuBLAS status %d\n", what, static_cast<int>(status));
    std::exit(1);
  }
}

using reference::phi_values;

template <class Run>
double median_ms(Backend& backend, const Run& run) {
  run();
  backend.synchronize();
  std::vector<double> ms;
  for (int i = 0; i < 5; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    backend.synchronize();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[2];
}

struct Operands {
  Buffer a, b, c;
  std::int64_t m = 0, n = 0, k = 0;
  // Views made where they are used (a move of Operands moves the buffers).
  RealMatrix am() const { return {&a, 0, Real::fp64, m, k, m, Layout::column_major}; }
  RealMatrix bm() const { return {&b, 0, Real::fp64, k, n, k, Layout::column_major}; }
  RealMatrix cm() const { return {&c, 0, Real::fp64, m, n, m, Layout::column_major}; }
};

// A (m x k), B (k x n), C (m x n) column-major on the device.
Operands operands(Backend& backend, std::int64_t m, std::int64_t n, std::int64_t k) {
  Operands o;
  const auto a = phi_values(m * k, 1, 1), b = phi_values(k * n, 1, 2);
  o.a = backend.allocate(a.size() * 8);
  o.b = backend.allocate(b.size() * 8);
  o.c = backend.allocate(static_cast<std::size_t>(m * n) * 8);
  backend.copy_in(a.data(), o.a, a.size() * 8);
  backend.copy_in(b.data(), o.b, b.size() * 8);
  o.m = m;
  o.n = n;
  o.k = k;
  return o;
}

double* device(const Buffer& b) {
  return static_cast<double*>(b.address());
}

void throughput(Backend& gpu, cublasHandle_t cublas, std::int64_t dot_n, std::int64_t gemv_n,
                std::int64_t gemm_n) {
  std::printf("\n%-5s %-12s %12s %12s %8s %12s %8s\n", "op", "size", "cuBLAS ms", "Dot2 ms",
              "x cuBLAS", "ExBLAS ms", "x cuBLAS");
  struct Case {
    const char* op;
    std::int64_t m, n, k;
  };
  for (const Case& c : {Case{"DOT", 1, 1, dot_n}, Case{"GEMV", gemv_n, 1, gemv_n},
                        Case{"GEMM", gemm_n, gemm_n, gemm_n}}) {
    std::fprintf(stderr, "%s: preparing operands...\n", c.op);
    Operands o = operands(gpu, c.m, c.n, c.k);
    const double one = 1, zero = 0;
    double result = 0;
    const double cublas_ms = median_ms(gpu, [&] {
      if (c.m == 1) {
        check(cublasDdot(cublas, static_cast<int>(c.k), device(o.a), 1, device(o.b), 1, &result),
              "cublasDdot");
      } else if (c.n == 1) {
        check(
            cublasDgemv(cublas, CUBLAS_OP_N, static_cast<int>(c.m), static_cast<int>(c.k), &one,
                        device(o.a), static_cast<int>(c.m), device(o.b), 1, &zero, device(o.c), 1),
            "cublasDgemv");
      } else {
        check(cublasDgemm(cublas, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(c.m),
                          static_cast<int>(c.n), static_cast<int>(c.k), &one, device(o.a),
                          static_cast<int>(c.m), device(o.b), static_cast<int>(c.k), &zero,
                          device(o.c), static_cast<int>(c.m)),
              "cublasDgemm");
      }
    });
    std::map<InnerProduct, double> ours;
    for (const InnerProduct method : {InnerProduct::dot2, InnerProduct::exact}) {
      std::fprintf(stderr, "%s: %s...\n", c.op, method == InnerProduct::dot2 ? "Dot2" : "ExBLAS");
      ours[method] =
          median_ms(gpu, [&] { gpu.inner_products(method, o.am(), o.bm(), 1, 0, o.cm()); });
    }
    const std::string size = c.m == 1   ? std::to_string(c.k)
                             : c.n == 1 ? std::to_string(c.m) + "x" + std::to_string(c.k)
                                        : std::to_string(c.m) + "^3";
    std::printf("%-5s %-12s %12.3f %12.3f %8.2f %12.3f %8.2f\n", c.op, size.c_str(), cublas_ms,
                ours[InnerProduct::dot2], ours[InnerProduct::dot2] / cublas_ms,
                ours[InnerProduct::exact], ours[InnerProduct::exact] / cublas_ms);
    std::fflush(stdout);
  }
}

void correctly_rounded(Backend& gpu, const std::string& arch, std::int64_t n) {
  std::printf("\nCorrectly rounded DGEMM, n = %lld (host arrays in and out):\n",
              static_cast<long long>(n));
  std::printf("%-4s %-22s %10s %14s %12s %s\n", "phi", "method", "ms", "slices A x B", "MiB",
              "bits = ExBLAS");
  const double operand_mib = 3.0 * static_cast<double>(n * n) * 8 / (1 << 20);
  for (int phi = 0; phi <= 8; ++phi) {
    const auto a = phi_values(n * n, phi, 3), b = phi_values(n * n, phi, 4);
    std::vector<double> exblas_c(static_cast<std::size_t>(n * n));
    accurate::Handle exblas(gpu, InnerProduct::exact);
    auto start = std::chrono::steady_clock::now();
    exblas.dgemm('N', 'N', n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, exblas_c.data(), n);
    const double exblas_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::printf("%-4d %-22s %10.1f %14s %12.1f %s\n", phi, "ExBLAS-style", exblas_ms, "-",
                operand_mib, "-");
    struct Variant {
      const char* name;
      ozaki::Products products;
      double slice_bytes, product_bytes;
    };
    for (const Variant& v :
         {Variant{"Ozaki CR, tensor cores",
                  ozaki::TensorCoreProducts{preset(arch, formats::fp16, formats::fp32, "mma.sync")},
                  2, 4},
          Variant{"Ozaki CR, FP64", ozaki::Fp64Products{}, 8, 8}}) {
      ozaki::Handle h(
          gpu, v.products,
          {.mode = ozaki::Mode::cr, .max_splits = 80, .workspace_bytes = std::size_t{16} << 30});
      std::vector<double> c(static_cast<std::size_t>(n * n));
      start = std::chrono::steady_clock::now();
      h.dgemm('N', 'N', n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n);
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      const ozaki::Report& r = h.report();
      const double nn = static_cast<double>(n * n);
      const double mib =
          operand_mib + (2 * nn * 8 + (r.slices_a + r.slices_b) * nn * v.slice_bytes +
                         nn * v.product_bytes + r.slices_a * r.slices_b * nn * 8) /
                            (1 << 20);
      bool same = true;
      for (std::size_t e = 0; e < c.size(); ++e) {
        same =
            same && std::bit_cast<std::uint64_t>(c[e]) == std::bit_cast<std::uint64_t>(exblas_c[e]);
      }
      const std::string slices = std::to_string(r.slices_a) + " x " + std::to_string(r.slices_b);
      std::printf("%-4d %-22s %10.1f %14s %12.1f %s\n", phi, v.name, ms, slices.c_str(), mib,
                  same ? "yes" : "NO");
      std::fflush(stdout);
    }
  }
}

constexpr const char* kUsage =
    R"(usage: accurate_gpu_benchmark [--dot N] [--gemv N] [--gemm N] [--cr N]

Dot2 and ExBLAS-style inner products on device 0 against cuBLAS (cublasDdot, cublasDgemv,
cublasDgemm) on the same device buffers, and the correctly rounded DGEMM by the Ozaki scheme
(tensor cores, and binary64 slices) against ExBLAS-style for phi = 0 to 8. Table 1: the median of
5 runs after a warm-up and ours / cuBLAS; table 2: host-to-host time of one dgemm call, the
slices, the device memory and whether the two correctly rounded results agree bit for bit.
Prints the tables on stdout; writes no file.

Options:
  --dot N                terms of the DOT (default 67108864 = 2^26)
  --gemv N               GEMV of N x N (default 8192)
  --gemm N               GEMM of N x N x N (default 4096)
  --cr N                 the correctly rounded DGEMMs, N x N x N (default 1024)
)";

int run(const session::Arguments& args) {
  if (!args.positional().empty()) {
    throw session::UsageError("unexpected word '" + args.positional()[0] + "'");
  }
  const std::int64_t dot = args.integer_or("dot", std::int64_t{1} << 26, 1, std::int64_t{1} << 40);
  const std::int64_t gemv = args.integer_or("gemv", 8192, 1, 1'000'000);
  const std::int64_t gemm = args.integer_or("gemm", 4096, 1, 1'000'000);
  const std::int64_t cr = args.integer_or("cr", 1024, 1, 1'000'000);
  const gpu::DeviceInfo device = gpu::require_device();
  std::printf("device: %s (sm_%d%d, %d SMs)\n", device.name.c_str(), device.compute_major,
              device.compute_minor, device.multiprocessors);
  auto backend = gpu::make_gpu_backend();
  cublasHandle_t cublas = nullptr;
  check(cublasCreate(&cublas), "cublasCreate");
  throughput(*backend, cublas, dot, gemv, gemm);
  cublasDestroy(cublas);
  correctly_rounded(*backend, device.arch_preset(), cr);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tcemu::session::run_program(
      {"accurate_gpu_benchmark", kUsage, {"dot", "gemv", "gemm", "cr"}, {}}, argc, argv, run);
}
