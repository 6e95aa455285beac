// The integer Ozaki schemes on the GPU beside cublasDgemm and cuBLAS's own FP64 emulation (issue
// 17): TFLOP/s at m = n = k = N for inputs (rand - 0.5) exp(phi randn), and the accuracy of each
// method on sampled elements against the exact product (each sampled element's exact sum of
// exact products in a long accumulator, rounded once: the correctly rounded value): the largest
// relative error and the sampled elements that are not correctly rounded. Methods: cublasDgemm;
// cuBLAS FP64 emulation (cublasGemmEx, CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT, strategy EAGER)
// with its dynamic mantissa and each fixed width of --bits; Ozaki-I on int8 slices
// (ozaki::IntegerProducts) in modes dp and cr and tunable with each --splits; Ozaki scheme II
// (ozaki::CrtProducts) in mode cr (moduli from the inputs, correctly rounded), dp (the norm
// scaling with the moduli its bound of |A||B| asks for, at least 15, or cr's when fewer; the
// CSV's slices_a is the count, gemms includes the bound's int8 GEMM) and tunable with each
// --moduli; DGEMM-TC-DP (fp16 slices) for N <= --fp16-max-n; GEMMul8 (fast and accurate mode, each
// --gemmul8-moduli) when built with TCEMU_GEMMUL8_DIR. One CSV row per (N, phi, method); progress
// on stderr; experiments/plot_int8_ozaki.py draws the figure, docs/results/int8-ozaki.md has the
// page. With --paired R, R pairs of one cublasDgemm run and one Ozaki-II dp run in turn after
// each (N, phi)'s table, into a second CSV: each pair's ratio is measured at one state of the
// GPU's clocks and temperature, which drift over the table's consecutive runs of one method.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <tcemu/backend/long_accumulator.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/gpu_backend.hpp>
#include <tcemu/ozaki/handle.hpp>
#include <tcemu/session/arguments.hpp>
#include <tcemu/session/output_file.hpp>

#include "accuracy.hpp"
#include "cublas_runs.hpp"

#if TCEMU_WITH_GEMMUL8
#include "gemmul8_adapter.hpp"
#endif

namespace {

using namespace tcemu;

using experiments::check;
using experiments::failure;

struct Sample {
  std::int64_t i, j;
  double exact;  // the correctly rounded value of sum_p A(i, p) B(p, j)
};

using experiments::Accuracy;

struct Result {
  std::string method;
  int mantissa_bits = 0;  // cuBLAS emulation: the width asked for (0: dynamic) and used
  int used_bits = 0;
  ozaki::Report report;
  double seconds = 0;
  Accuracy accuracy;
  std::string note;
};

constexpr const char* kUsage =
    R"(usage: int8_ozaki_table [--out FILE] [--n N,...] [--phis PHI,...] [--runs R] [--bits B,...]
                         [--splits D,...] [--moduli N,...] [--samples S] [--fp16-max-n N]
                         [--cr-max-n N] [--crt-cr-max-n N] [--int8-max-n N]
                         [--gemmul8-moduli N,...] [--paired R] [--paired-out FILE]

Ozaki-I on int8 slices (integer tensor cores, cublasGemmEx int8 -> int32) beside cublasDgemm and
cuBLAS's FP64 emulation on device 0: TFLOP/s at m = n = k = N (median of R runs after a
warm-up) and accuracy on S sampled elements against the exact product (long accumulator).

Options:
  --out FILE             the CSV written (default int8-ozaki.csv)
  --n N,...              the sizes (default 8192)
  --phis PHI,...         exponent spreads of the inputs (default 0.1,1,4,8)
  --runs R               timed runs per method (default 2)
  --bits B,...           cuBLAS emulation's fixed mantissa widths (default 55,79)
  --splits D,...         tunable-mode slice counts of the int8 scheme (default 7,9)
  --moduli N,...         tunable-mode moduli counts of the CRT scheme (default 14,18)
  --samples S            sampled elements for the accuracy (default 512)
  --fp16-max-n N         DGEMM-TC-DP (fp16 slices) only up to this size (default 8192)
  --cr-max-n N           the int8 CR mode only up to this size (default 16384)
  --crt-cr-max-n N       Ozaki-II's CR mode only up to this size (default 16384)
  --int8-max-n N         the int8 Ozaki-I scheme (every mode) only up to this size (default
                         16384)
  --gemmul8-moduli N,... GEMMul8's moduli counts, fast and accurate mode each (default
                         14,16,18; a build without TCEMU_GEMMUL8_DIR writes a row saying so)
  --paired R             after each (N, phi): R pairs of a cublasDgemm run then an Ozaki-II dp
                         run (after one pair not counted), each pair's times and ratio written
                         to --paired-out; the median ratio on stderr (default 0: none)
  --paired-out FILE      the pairs' CSV (default int8-ozaki-paired.csv)
)";

int run(const session::Arguments& args) {
  if (!args.positional().empty()) {
    throw session::UsageError("unexpected word '" + args.positional()[0] + "'");
  }
  std::vector<std::int64_t> sizes;
  for (const std::string& n : args.list_or("n", "8192"))
    sizes.push_back(session::integer_in("--n", n, 1, 100000));
  std::vector<double> phis;
  for (const std::string& phi : args.list_or("phis", "0.1,1,4,8"))
    phis.push_back(session::number_in("--phis", phi));
  std::vector<int> widths, splits;
  for (const std::string& bits : args.list_or("bits", "55,79"))
    widths.push_back(static_cast<int>(session::integer_in("--bits", bits, 1, 1000)));
  for (const std::string& d : args.list_or("splits", "7,9"))
    splits.push_back(static_cast<int>(session::integer_in("--splits", d, 1, 64)));
  std::vector<int> moduli;
  for (const std::string& d : args.list_or("moduli", "14,18"))
    moduli.push_back(static_cast<int>(session::integer_in("--moduli", d, 1, 48)));
  const std::int64_t int8_max_n = args.integer_or("int8-max-n", 16384, 0, 1'000'000);
  const int runs = static_cast<int>(args.integer_or("runs", 2, 1, 1000));
  const std::int64_t samples = args.integer_or("samples", 512, 1, 1'000'000);
  const std::int64_t fp16_max_n = args.integer_or("fp16-max-n", 8192, 0, 1'000'000);
  const std::int64_t cr_max_n = args.integer_or("cr-max-n", 16384, 0, 1'000'000);
  const std::int64_t crt_cr_max_n = args.integer_or("crt-cr-max-n", 16384, 0, 1'000'000);
  const int pairs = static_cast<int>(args.integer_or("paired", 0, 0, 1000));
  std::vector<int> gemmul8_moduli;
  for (const std::string& d : args.list_or("gemmul8-moduli", "14,16,18"))
    gemmul8_moduli.push_back(static_cast<int>(session::integer_in("--gemmul8-moduli", d, 2, 20)));
  std::string why;
  const auto devices = gpu::list_devices(&why);
  if (devices.empty()) throw std::runtime_error("no CUDA device (" + why + ")");
  const std::string device = devices.front().name;
  const std::string arch = devices.front().arch_preset();
  session::OutputFile csv_file(args.value_or("out", "int8-ozaki.csv"));
  std::ostream& csv = csv_file.stream();
  csv << "device,n,phi,method,mantissa_bits,used_bits,slices_a,slices_b,slice_bits,gemms,blocks,"
         "seconds,tflops,seconds_split,seconds_products,seconds_summation,max_relative_error,"
         "not_correctly_rounded,samples,note\n";
  const std::string paired_path = args.value_or("paired-out", "int8-ozaki-paired.csv");
  // Written only with --paired.
  std::optional<session::OutputFile> paired_file;
  if (pairs > 0) {
    paired_file.emplace(paired_path);
    paired_file->stream() << "device,n,phi,pair,dgemm_seconds,dp_seconds,dgemm_over_dp,moduli\n";
  }
  const auto backend = gpu::make_gpu_backend({.engine = gpu::GemmEngine::cublas});
  cublasHandle_t native = nullptr;
  if (auto f = failure(cublasCreate(&native))) throw std::runtime_error("cublasCreate: " + *f);
  // GEMMul8 points its handle's workspace into its own: a handle of its own.
  cublasHandle_t gemmul8_handle = nullptr;
  if (auto f = failure(cublasCreate(&gemmul8_handle))) {
    throw std::runtime_error("cublasCreate: " + *f);
  }

  for (const std::int64_t n : sizes) {
    const std::size_t bytes = static_cast<std::size_t>(n * n) * 8;
    Buffer a = backend->allocate(bytes), b = backend->allocate(bytes), c = backend->allocate(bytes);
    const RealMatrix am{&a, 0, Real::fp64, n, n, n, Layout::column_major};
    const RealMatrix bm{&b, 0, Real::fp64, n, n, n, Layout::column_major};
    const RealMatrix cm{&c, 0, Real::fp64, n, n, n, Layout::column_major};
    const auto* da = static_cast<const double*>(a.address());
    const auto* db = static_cast<const double*>(b.address());
    auto* dc = static_cast<double*>(c.address());
    const int ni = static_cast<int>(n);
    experiments::CublasFp64Emulation emulation(*backend, n);

    for (const double phi : phis) {
      std::fprintf(stderr, "n %lld, phi %g: inputs and %lld exact samples...\n",
                   static_cast<long long>(n), phi, static_cast<long long>(samples));
      const std::vector<double> ha = experiments::parallel_phi_values(n * n, phi, 1000),
                                hb = experiments::parallel_phi_values(n * n, phi, 2000);
      backend->copy_in(ha.data(), a, bytes);
      backend->copy_in(hb.data(), b, bytes);
      std::vector<Sample> picked;
      std::mt19937_64 rng(7);
      std::uniform_int_distribution<std::int64_t> index(0, n - 1);
      for (std::int64_t s = 0; s < samples; ++s) picked.push_back({index(rng), index(rng), 0.0});
      for (Sample& s : picked) {
        LongAccumulator sum;
        for (std::int64_t p = 0; p < n; ++p) {
          sum.add_product(ha[static_cast<std::size_t>(p * n + s.i)],
                          hb[static_cast<std::size_t>(s.j * n + p)]);
        }
        s.exact = sum.round_to_double();
      }
      const auto accuracy = [&] {
        Accuracy acc;
        for (const Sample& s : picked) {
          double x = 0;
          backend->copy_out(c, &x, 8, static_cast<std::size_t>(s.j * n + s.i) * 8);
          if (x != s.exact) ++acc.not_correctly_rounded;
          if (s.exact != 0.0) {
            acc.max_relative_error =
                std::fmax(acc.max_relative_error, std::fabs(x - s.exact) / std::fabs(s.exact));
          }
        }
        return acc;
      };
      const auto time = [&](const std::function<std::optional<std::string>()>& body,
                            std::string& note) {
        return experiments::median_seconds(runs, body, note);
      };
      const auto add = [&](Result r) {
        if (r.note.empty()) r.accuracy = accuracy();
        const double tflops =
            r.seconds > 0 ? 2.0 * std::pow(static_cast<double>(n), 3) / r.seconds / 1e12 : 0.0;
        char line[1024];
        std::snprintf(
            line, sizeof line,
            "%s,%lld,%g,%s,%d,%d,%d,%d,%d,%lld,%lld,%.6f,%.2f,%.6f,%.6f,%.6f,%.3e,%lld,"
            "%lld,%s\n",
            device.c_str(), static_cast<long long>(n), phi, r.method.c_str(), r.mantissa_bits,
            r.used_bits, r.report.slices_a, r.report.slices_b, r.report.slice_bits,
            static_cast<long long>(r.report.gemms), static_cast<long long>(r.report.blocks),
            r.seconds, tflops, r.report.seconds_split_a + r.report.seconds_split_b,
            r.report.seconds_products, r.report.seconds_summation, r.accuracy.max_relative_error,
            static_cast<long long>(r.accuracy.not_correctly_rounded),
            static_cast<long long>(samples), r.note.c_str());
        csv << line;
        csv.flush();
        std::fprintf(stderr,
                     "  %-34s %7.2f TFLOP/s  max rel. error %.3e  not CR %lld/%lld  slices or "
                     "moduli %d, int8 GEMMs %lld%s %s\n",
                     r.method.c_str(), tflops, r.accuracy.max_relative_error,
                     static_cast<long long>(r.accuracy.not_correctly_rounded),
                     static_cast<long long>(samples), r.report.slices_a,
                     static_cast<long long>(r.report.gemms),
                     r.report.dp_bound_terms != 0
                         ? (", dp's bound " + std::to_string(r.report.dp_bound_bits) + " on " +
                            std::to_string(r.report.dp_bound_terms) + " terms" +
                            (r.report.dp_bound_met ? "" : " (not met)"))
                               .c_str()
                         : "",
                     r.note.c_str());
      };

      Result dgemm;
      dgemm.method = "cublasDgemm";
      dgemm.used_bits = -1;
      const double one = 1.0, zero = 0.0;
      // cublasDgemm into C; the failure it reports, if any (the table's row and the pairs).
      const auto run_dgemm = [&] {
        return failure(cublasDgemm(native, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one, da, ni, db,
                                   ni, &zero, dc, ni));
      };
      dgemm.seconds = time(run_dgemm, dgemm.note);
      add(dgemm);

      std::vector<int> emulation_widths = {0};  // 0: dynamic mantissa control
      emulation_widths.insert(emulation_widths.end(), widths.begin(), widths.end());
      for (const int width : emulation_widths) {
        Result e;
        e.method = width == 0 ? std::string("cuBLAS emulation dynamic")
                              : "cuBLAS emulation " + std::to_string(width) + " bits";
        e.mantissa_bits = width;
        if (auto setup = emulation.use_width(width)) {
          e.note = "not available: " + *setup;
        } else {
          e.seconds = time([&] { return emulation.gemm(ni, da, db, dc); }, e.note);
          e.used_bits = emulation.used_bits();
        }
        add(e);
      }

      for (const int count : gemmul8_moduli) {
        for (const bool fast : {true, false}) {
          Result g;
          g.method =
              std::string("GEMMul8 ") + (fast ? "fast " : "accurate ") + std::to_string(count);
          g.report.gemms = count;
#if TCEMU_WITH_GEMMUL8
          std::fprintf(stderr, "  %s...\n", g.method.c_str());
          Buffer work = backend->allocate(experiments::gemmul8_workspace_bytes(n, count));
          g.seconds = time(
              [&]() -> std::optional<std::string> {
                experiments::gemmul8_dgemm(gemmul8_handle, n, da, db, dc, count, fast,
                                           work.address());
                return std::nullopt;
              },
              g.note);
#else
          g.note = "not built: cmake -DTCEMU_GEMMUL8_DIR";
#endif
          add(g);
        }
      }

      std::size_t free = 0, total = 0;
      check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
      const std::size_t workspace = free / 10 * 8;
      const auto ozaki_run = [&](const std::string& method, const ozaki::Products& products,
                                 ozaki::Options options) {
        std::fprintf(stderr, "  %s...\n", method.c_str());
        options.workspace_bytes = workspace;
        Result r;
        r.method = method;
        try {
          ozaki::Handle h(*backend, products, options);
          r.seconds = time(
              [&]() -> std::optional<std::string> {
                h.gemm(1.0, am, bm, 0.0, cm);
                return std::nullopt;
              },
              r.note);
          r.report = h.report();
        } catch (const std::exception& e) {
          r.note = e.what();
        }
        add(r);
      };
      const ozaki::Products crt = ozaki::CrtProducts{};
      if (n <= crt_cr_max_n) ozaki_run("Ozaki-II CRT cr", crt, {.mode = ozaki::Mode::cr});
      ozaki_run("Ozaki-II CRT dp", crt, {.mode = ozaki::Mode::dp});
      for (const int count : moduli) {
        ozaki_run("Ozaki-II CRT tunable " + std::to_string(count), crt,
                  {.mode = ozaki::Mode::tunable, .splits = count});
      }
      const ozaki::Products int8 = ozaki::IntegerProducts{};
      if (n <= int8_max_n) {
        ozaki_run("int8 Ozaki-I dp", int8, {.mode = ozaki::Mode::dp});
        for (const int d : splits) {
          ozaki_run("int8 Ozaki-I tunable " + std::to_string(d), int8,
                    {.mode = ozaki::Mode::tunable, .splits = d});
        }
        if (n <= cr_max_n) ozaki_run("int8 Ozaki-I cr", int8, {.mode = ozaki::Mode::cr});
      }
      if (n <= fp16_max_n) {
        ozaki_run("DGEMM-TC-DP (fp16 slices)",
                  ozaki::TensorCoreProducts{preset(arch, formats::fp16, formats::fp32)},
                  {.mode = ozaki::Mode::dp});
      }
      if (pairs > 0) {
        std::fprintf(stderr, "  %d pairs of cublasDgemm and Ozaki-II CRT dp...\n", pairs);
        ozaki::Handle h(*backend, crt, {.mode = ozaki::Mode::dp, .workspace_bytes = workspace});
        const auto seconds = [&](const std::function<void()>& body) {
          check(cudaDeviceSynchronize(), "synchronize");
          const auto start = std::chrono::steady_clock::now();
          body();
          check(cudaDeviceSynchronize(), "synchronize");
          return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        };
        std::vector<double> ratios;
        for (int p = 0; p <= pairs; ++p) {
          const double d = seconds([&] {
            if (auto f = run_dgemm()) throw std::runtime_error("cublasDgemm: " + *f);
          });
          const double o = seconds([&] { h.gemm(1.0, am, bm, 0.0, cm); });
          if (p == 0) continue;  // the warm-up pair
          ratios.push_back(d / o);
          char line[256];
          std::snprintf(line, sizeof line, "%s,%lld,%g,%d,%.6f,%.6f,%.4f,%d\n", device.c_str(),
                        static_cast<long long>(n), phi, p, d, o, d / o, h.report().slices_a);
          paired_file->stream() << line << std::flush;
        }
        std::sort(ratios.begin(), ratios.end());
        std::fprintf(stderr, "  paired: cublasDgemm / dp median %.3f (%.3f to %.3f) over %d\n",
                     ratios[ratios.size() / 2], ratios.front(), ratios.back(), pairs);
      }
    }
  }
  cublasDestroy(native);
  cublasDestroy(gemmul8_handle);
  csv_file.close();
  if (paired_file) paired_file->close();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tcemu::session::run_program(
      {"int8_ozaki_table",
       kUsage,
       {"out", "n", "phis", "runs", "bits", "splits", "moduli", "samples", "fp16-max-n", "cr-max-n",
        "crt-cr-max-n", "int8-max-n", "gemmul8-moduli", "paired", "paired-out"},
       {}},
      argc, argv, run);
}
