// Our tiled mma.sync GEMM against cublasGemmEx on the same device buffers, in the same run.
//
//   gpu_gemm_benchmark [n ...]        (default: 4096 8192; kUsage)
//
// For each n and format it times D = A B (A row major, B column major: the operands are read in
// place, nothing is packed) through the GPU backend with our engines (mma_sync, and wgmma on
// sm_90a) and with the cuBLAS engine, the median of 20 runs after 3 warm-ups, timed with CUDA
// events. Inputs are the papers' (rand - 0.5) * exp(randn), never zeros. The last table gives
// TFLOP/s and the ratio of ours to cuBLAS's; the issue's goal is fp16 -> fp32 at n = 8192 at 0.5 or
// more (on an H200). It also prints the relative difference of the two results as a check that both
// computed the product.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/gpu_backend.hpp>
#include <tcemu/session/arguments.hpp>

namespace {

using namespace tcemu;

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
    std::exit(1);
  }
}

std::vector<unsigned char> random_matrix(const FloatFormat& f, std::int64_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-0.5f, 0.5f);
  std::normal_distribution<float> normal;
  const std::size_t bytes = container_bytes(f);
  std::vector<unsigned char> out(static_cast<std::size_t>(count) * bytes);
  for (std::int64_t i = 0; i < count; ++i) {
    const float value = uniform(rng) * std::exp(normal(rng));
    const std::uint32_t bits =
        convert(formats::fp32, f, std::bit_cast<std::uint32_t>(value), Rounding::nearest_even);
    std::memcpy(out.data() + i * bytes, &bits, bytes);
  }
  return out;
}

// Median time in milliseconds of `run`, with CUDA events.
template <class Run>
double median_ms(const Run& run) {
  for (int i = 0; i < 3; ++i) run();
  check(cudaDeviceSynchronize(), "warm-up");
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  std::vector<double> times;
  for (int i = 0; i < 20; ++i) {
    check(cudaEventRecord(start), "record");
    run();
    check(cudaEventRecord(stop), "record");
    check(cudaEventSynchronize(stop), "sync");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

struct Row {
  std::string what;
  std::int64_t n;
  double ours_tflops, cublas_tflops, relative_difference;
};

constexpr const char* kUsage = R"(usage: gpu_gemm_benchmark [N ...]

Our tiled mma.sync (and, on sm_90a, wgmma) GEMM against cublasGemmEx on device 0, on the same
device buffers in the same run: D = A B for each size N (default 4096 8192) and input format
(fp16, bf16, tf32, e4m3 -> fp32, with and without take-out every instruction), the median of 20
runs after 3 warm-ups (CUDA events). Prints progress lines, then a table of TFLOP/s, ours over
cuBLAS and the relative difference of the two results, on stdout. Writes no file.
)";

int run(const session::Arguments& args) {
  std::vector<std::int64_t> sizes;
  for (const std::string& n : args.positional())
    sizes.push_back(session::integer_in("N", n, 1, 1'000'000));
  if (sizes.empty()) sizes = {4096, 8192};
  std::string why;
  const auto devices = gpu::list_devices(&why);
  if (devices.empty()) throw std::runtime_error("no CUDA device (" + why + ")");
  const std::string arch = devices.front().arch_preset();
  std::printf("device: %s (%s)\n", devices.front().name.c_str(), arch.c_str());
  const auto mma_sync = gpu::make_gpu_backend({.engine = gpu::GemmEngine::mma_sync});
  const auto cublas = gpu::make_gpu_backend({.engine = gpu::GemmEngine::cublas});
  const bool has_wgmma = devices.front().compute_major == 9 && devices.front().compute_minor == 0;
  const auto wgmma =
      has_wgmma ? gpu::make_gpu_backend({.engine = gpu::GemmEngine::wgmma}) : nullptr;

  struct Variant {
    FloatFormat input;
    std::int64_t takeout;  // in instructions' k; 0: none
    bool with_cublas;
    bool on_wgmma;  // our wgmma kernel instead of our mma.sync kernel
  };
  const std::vector<Variant> variants = {
      {formats::fp16, 0, true, true},   {formats::bf16, 0, true, true},
      {formats::tf32, 0, true, true},   {formats::fp16, 1, false, true},
      {formats::tf32, 1, false, true},  {formats::fp16, 0, true, false},
      {formats::bf16, 0, true, false},  {formats::tf32, 0, true, false},
      {formats::fp16, 1, false, false}, {formats::e4m3, 0, false, false}};
  std::vector<Row> rows;
  for (const std::int64_t n : sizes) {
    for (const Variant& v : variants) {
      if (v.input == formats::e4m3 && arch != "sm89" && arch != "sm90" && arch != "sm100") continue;
      if (v.on_wgmma && !has_wgmma) continue;
      Backend& ours = v.on_wgmma ? *wgmma : *mma_sync;
      const Datapath dp = preset(arch, v.input, formats::fp32, v.on_wgmma ? "wgmma" : "mma.sync");
      const auto host_a = random_matrix(v.input, n * n, 1),
                 host_b = random_matrix(v.input, n * n, 2);
      const std::size_t out_bytes = static_cast<std::size_t>(n * n) * 4;
      // Each backend gets its own copies (a backend only touches its own buffers).
      auto setup = [&](Backend& be, Buffer& a, Buffer& b, Buffer& d) {
        a = be.allocate(host_a.size());
        b = be.allocate(host_b.size());
        d = be.allocate(out_bytes);
        be.copy_in(host_a.data(), a, host_a.size());
        be.copy_in(host_b.data(), b, host_b.size());
      };
      Buffer oa, ob, od, ca, cb, cd;
      setup(ours, oa, ob, od);
      const GemmOptions options{.takeout_every_k = v.takeout * dp.instruction_k};
      const auto matrices = [&](const Buffer& a, const Buffer& b, const Buffer& d) {
        return std::array<BufferMatrix, 3>{
            BufferMatrix{&a, 0, v.input, n, n, n, Layout::row_major},
            BufferMatrix{&b, 0, v.input, n, n, n, Layout::column_major},
            BufferMatrix{&d, 0, formats::fp32, n, n, n, Layout::column_major}};
      };
      const auto om = matrices(oa, ob, od);
      const double size = static_cast<double>(n);
      const double flops = 2.0 * size * size * size;
      const double ours_ms =
          median_ms([&] { ours.mma_gemm(dp, options, om[0], om[1], std::nullopt, om[2]); });
      Row row{std::string(v.input.name) + " -> fp32" + (v.on_wgmma ? ", wgmma" : ", mma.sync") +
                  (v.takeout ? ", take-out every instruction" : ""),
              n, flops / ours_ms / 1e9, 0, 0};
      if (v.with_cublas) {
        setup(*cublas, ca, cb, cd);
        const auto cm = matrices(ca, cb, cd);
        const double cublas_ms =
            median_ms([&] { cublas->mma_gemm(dp, {}, cm[0], cm[1], std::nullopt, cm[2]); });
        row.cublas_tflops = flops / cublas_ms / 1e9;
        std::vector<float> x(static_cast<std::size_t>(n * n)), y(x.size());
        ours.copy_out(od, x.data(), out_bytes);
        cublas->copy_out(cd, y.data(), out_bytes);
        double num = 0, den = 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
          num += (static_cast<double>(x[i]) - y[i]) * (static_cast<double>(x[i]) - y[i]);
          den += static_cast<double>(y[i]) * y[i];
        }
        row.relative_difference = std::sqrt(num / den);
      }
      rows.push_back(row);
      std::printf("done: %s n=%lld\n", row.what.c_str(), static_cast<long long>(n));
      std::fflush(stdout);
    }
  }
  std::printf(
      "\n| GEMM | n | ours (TFLOP/s) | cublasGemmEx (TFLOP/s) | ours / cuBLAS | "
      "||ours - cuBLAS|| / ||cuBLAS|| |\n| --- | --- | --- | --- | --- | --- |\n");
  for (const Row& r : rows) {
    if (r.cublas_tflops > 0) {
      std::printf("| %s | %lld | %.0f | %.0f | %.2f | %.1e |\n", r.what.c_str(),
                  static_cast<long long>(r.n), r.ours_tflops, r.cublas_tflops,
                  r.ours_tflops / r.cublas_tflops, r.relative_difference);
    } else {
      std::printf("| %s | %lld | %.0f | - | - | - |\n", r.what.c_str(), static_cast<long long>(r.n),
                  r.ours_tflops);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tcemu::session::run_program({"gpu_gemm_benchmark", kUsage, {}, {}}, argc, argv, run);
}
