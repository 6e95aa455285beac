// Table 1 of Mukunoki, Ozaki, Ogita and Imamura (ISC 2020) on our GPU, with cuBLAS's own FP64
// emulation beside it: GFLOPS of cublasDgemm, DGEMM-TC-DP, DGEMM-TC-CR and DGEMM-DP-CR (OzBLAS
// style: binary64 slices, products by cublasDgemm) at m = n = k = N for each phi, with the
// slices, GEMMs and the time of each phase (split A, split B, products, summation: Fig. 5), and
// the accuracy of each against the correctly rounded product (DGEMM-TC-CR's result, whose bits
// the tests check against MPFR and the emulator): the largest relative error and the number of
// elements that are not correctly rounded. cuBLAS's fixed-point emulation
// (cublasGemmEx with CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT, strategy EAGER) runs with its
// dynamic mantissa control and with fixed mantissa widths, so that the width of comparable
// accuracy can be read off the table. One CSV row per method and phi; progress on stderr.
//
// kUsage has the options; experiments/plot_ozaki_gpu.py draws the figures;
// docs/results/ozaki-gpu.md has the page.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/emulator/presets.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/gpu_backend.hpp>
#include <tcemu/ozaki/handle.hpp>
#include <tcemu/session/arguments.hpp>
#include <tcemu/session/output_file.hpp>

#include "accuracy.hpp"
#include "cublas_runs.hpp"

namespace {

using namespace tcemu;

using experiments::Accuracy;
using experiments::accuracy;
using experiments::check;
using experiments::failure;

struct Result {
  std::string method;
  int mantissa_bits = 0;  // cuBLAS emulation: the width asked for (0: dynamic) ...
  int used_bits = 0;      // ... and the width it reports having used (-1: native FP64)
  ozaki::Report report;
  double seconds = 0;
  Accuracy accuracy;
  std::string note;
};

class Table {
 public:
  Table(const std::string& path, std::string device) : csv_(path), device_(std::move(device)) {
    csv_.stream()
        << "device,phi,n,method,mantissa_bits,used_bits,slices_a,slices_b,slice_bits,gemms,"
           "blocks,seconds,gflops,seconds_split_a,seconds_split_b,seconds_products,"
           "seconds_summation,max_relative_error,not_correctly_rounded,note\n";
  }
  // Throws naming the file unless every row was written.
  void close() { csv_.close(); }
  void add(double phi, std::int64_t n, const Result& r) {
    const double size = static_cast<double>(n);
    const double gflops = r.seconds > 0 ? 2.0 * size * size * size / r.seconds / 1e9 : 0.0;
    char line[1024];
    std::snprintf(
        line, sizeof line,
        "%s,%g,%lld,%s,%d,%d,%d,%d,%d,%lld,%lld,%.6f,%.1f,%.6f,%.6f,%.6f,%.6f,%.3e,%lld,%s\n",
        device_.c_str(), phi, static_cast<long long>(n), r.method.c_str(), r.mantissa_bits,
        r.used_bits, r.report.slices_a, r.report.slices_b, r.report.slice_bits,
        static_cast<long long>(r.report.gemms), static_cast<long long>(r.report.blocks), r.seconds,
        gflops, r.report.seconds_split_a, r.report.seconds_split_b, r.report.seconds_products,
        r.report.seconds_summation, r.accuracy.max_relative_error,
        static_cast<long long>(r.accuracy.not_correctly_rounded), r.note.c_str());
    csv_.stream() << line << std::flush;
    std::fprintf(
        stderr, "  %-28s %9.1f GFLOPS  %8.4f s  max rel. error %.3e  not CR %lld%s%s\n",
        (r.method + (r.mantissa_bits ? " " + std::to_string(r.mantissa_bits) : "")).c_str(), gflops,
        r.seconds, r.accuracy.max_relative_error,
        static_cast<long long>(r.accuracy.not_correctly_rounded), r.note.empty() ? "" : "  ",
        r.note.c_str());
  }

 private:
  session::OutputFile csv_;
  std::string device_;
};

constexpr const char* kUsage =
    R"(usage: ozaki_gpu_table [--out FILE] [--n N] [--phis PHI,...] [--runs R] [--bits B,...]

Table 1 of Mukunoki, Ozaki, Ogita and Imamura (ISC 2020) on device 0, beside cuBLAS's FP64
emulation: for each phi, GFLOPS of cublasDgemm, DGEMM-TC-DP, DGEMM-TC-CR and DGEMM-DP-CR at
m = n = k = N (the median of R runs after a warm-up), their slices, GEMMs and phase times, and
their accuracy against the correctly rounded product (DGEMM-TC-CR's result); cuBLAS's
fixed-point emulation with dynamic mantissa control and with each fixed width of --bits. One CSV
row per method and phi; progress on stderr; experiments/plot_ozaki_gpu.py draws the figures.

Options:
  --out FILE             the CSV written (default ozaki-gpu.csv)
  --n N                  the size (default 10240)
  --phis PHI,...         the exponent spreads of the inputs (default 0.1,1,2)
  --runs R               timed runs per method (default 3)
  --bits B,...           cuBLAS emulation's fixed mantissa widths (default 31,39,47,55,63,71,79)
)";

int run(const session::Arguments& args) {
  if (!args.positional().empty()) {
    throw session::UsageError("unexpected word '" + args.positional()[0] + "'");
  }
  const std::int64_t n = args.integer_or("n", 10240, 1, 1'000'000);
  const int runs = static_cast<int>(args.integer_or("runs", 3, 1, 10000));
  std::vector<double> phis;
  for (const std::string& phi : args.list_or("phis", "0.1,1,2"))
    phis.push_back(session::number_in("--phis", phi));
  std::vector<int> widths;
  for (const std::string& bits : args.list_or("bits", "31,39,47,55,63,71,79"))
    widths.push_back(static_cast<int>(session::integer_in("--bits", bits, 1, 1000)));
  std::string why;
  const auto devices = gpu::list_devices(&why);
  if (devices.empty()) throw std::runtime_error("no CUDA device (" + why + ")");
  const std::string arch = devices.front().arch_preset();
  Table table(args.value_or("out", "ozaki-gpu.csv"), devices.front().name);
  const auto backend = gpu::make_gpu_backend({.engine = gpu::GemmEngine::cublas});
  const ozaki::TensorCoreProducts tc{preset(arch, formats::fp16, formats::fp32)};

  const std::size_t bytes = static_cast<std::size_t>(n * n) * 8;
  Buffer a = backend->allocate(bytes), b = backend->allocate(bytes), c = backend->allocate(bytes);
  const RealMatrix am{&a, 0, Real::fp64, n, n, n, Layout::column_major};
  const RealMatrix bm{&b, 0, Real::fp64, n, n, n, Layout::column_major};
  const RealMatrix cm{&c, 0, Real::fp64, n, n, n, Layout::column_major};
  const auto* da = static_cast<const double*>(a.address());
  const auto* db = static_cast<const double*>(b.address());
  auto* dc = static_cast<double*>(c.address());
  const int ni = static_cast<int>(n);

  // cuBLAS: one handle for native DGEMM, one for its FP64 emulation.
  cublasHandle_t native = nullptr;
  if (auto f = failure(cublasCreate(&native))) throw std::runtime_error("cublasCreate: " + *f);
  experiments::CublasFp64Emulation emulation(*backend, n);
  const auto time = [&](const std::function<std::optional<std::string>()>& run, std::string& note) {
    return experiments::median_seconds(runs, run, note);
  };
  std::vector<double> result(static_cast<std::size_t>(n * n));
  const auto fetch = [&] {
    backend->copy_out(c, result.data(), bytes);
    return result;
  };

  for (const double phi : phis) {
    std::fprintf(stderr, "phi %g, n %lld: inputs...\n", phi, static_cast<long long>(n));
    std::mt19937_64 rng(1);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    std::normal_distribution<double> normal;
    for (Buffer* x : {&a, &b}) {
      for (double& v : result) v = (uniform(rng) - 0.5) * std::exp(phi * normal(rng));
      backend->copy_in(result.data(), *x, bytes);
    }
    std::size_t free = 0, total = 0;
    check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    const std::size_t workspace = free / 10 * 8;
    const auto ozaki_run = [&](const std::string& method, const ozaki::Products& products,
                               ozaki::Mode mode) {
      std::fprintf(stderr, "  %s...\n", method.c_str());
      ozaki::Handle h(*backend, products, {.mode = mode, .workspace_bytes = workspace});
      Result r;
      r.method = method;
      r.seconds = time(
          [&]() -> std::optional<std::string> {
            h.gemm(1.0, am, bm, 0.0, cm);
            return std::nullopt;
          },
          r.note);
      r.report = h.report();
      return r;
    };
    // The correctly rounded product first: every other method is measured against it.
    Result cr = ozaki_run("DGEMM-TC-CR", tc, ozaki::Mode::cr);
    const std::vector<double> exact = fetch();
    cr.accuracy = accuracy(exact, exact);
    table.add(phi, n, cr);

    Result dgemm;
    dgemm.method = "cublasDgemm";
    dgemm.used_bits = -1;
    const double one = 1.0, zero = 0.0;
    std::fprintf(stderr, "  cublasDgemm...\n");
    dgemm.seconds = time(
        [&] {
          return failure(cublasDgemm(native, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one, da, ni, db,
                                     ni, &zero, dc, ni));
        },
        dgemm.note);
    dgemm.accuracy = accuracy(fetch(), exact);
    table.add(phi, n, dgemm);

    Result dp = ozaki_run("DGEMM-TC-DP", tc, ozaki::Mode::dp);
    dp.accuracy = accuracy(fetch(), exact);
    table.add(phi, n, dp);

    Result dpcr = ozaki_run("DGEMM-DP-CR", ozaki::Fp64Products{}, ozaki::Mode::cr);
    dpcr.accuracy = accuracy(fetch(), exact);
    table.add(phi, n, dpcr);

    std::vector<int> emulation_widths = {0};  // 0: dynamic mantissa control
    emulation_widths.insert(emulation_widths.end(), widths.begin(), widths.end());
    for (const int width : emulation_widths) {
      Result e;
      e.method = "cuBLAS FP64 emulation";
      e.mantissa_bits = width;
      std::fprintf(stderr, "  cuBLAS FP64 emulation, %s...\n",
                   width == 0 ? "dynamic" : (std::to_string(width) + " bits").c_str());
      if (auto f = emulation.use_width(width)) {
        e.note = "not available: " + *f;
      } else {
        e.seconds = time([&] { return emulation.gemm(ni, da, db, dc); }, e.note);
        if (e.note.empty()) {
          e.used_bits = emulation.used_bits();
          e.accuracy = accuracy(fetch(), exact);
          if (e.used_bits < 0) e.note = "cuBLAS ran native FP64";
        } else {
          e.note = "not available: " + e.note;
        }
      }
      table.add(phi, n, e);
    }
  }
  cublasDestroy(native);
  table.close();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tcemu::session::run_program(
      {"ozaki_gpu_table", kUsage, {"out", "n", "phis", "runs", "bits"}, {}}, argc, argv, run);
}
