// Throughput and accuracy of the error-corrected SGEMM schemes on the GPU against cuBLAS's fp32
// GEMMs, on the same fp32 inputs in the same run (issue 5).
//
//   markidis_gpu_benchmark [--n N] [--schemes a,b,...] [--engines fastest,mma_sync,cublas]
//                          [--repeats R] [--takeout I] [--csv FILE]        (kUsage)
//
// Defaults: n = 8192; halfhalf, tf32tf32, 3xtf32, markidis, bf16x3; every engine; R = 10.
// --takeout I: every group that leaves the Tensor Core does so every I instructions instead of
// its preset's interval (markidis::with_takeout_interval; schemes without take-out run
// unchanged). A scheme that takes out is shown with the interval it ran,
// e.g. "tf32tf32 (take-out every 2)".
// A and B are n x n column major with entries (rand - 0.5) * exp(randn) (the papers' inputs, inside
// fp16's range so that halfhalf runs unscaled). Each row is one method computing D = A B:
// cublasSgemm, cublasGemmEx with FAST_TF32, and each scheme through the GPU backend with each GEMM
// engine (markidis::gemm on device buffers: summaries, splits, products, combination, with a
// workspace kept between calls). The time is the median of R calls after 2 warm-ups, wall clock
// from a synchronised device to a synchronised device (end to end, host synchronisations inside
// the call included); TFLOP/s = 2 n^3 / time. The residual is ||D - Dref||_F / ||Dref||_F with Dref
// from cublasDgemm on the same fp32 values widened to fp64 (products exact, sums with 2^-53
// roundings: far below every fp32 effect). "bits = mma_sync" says whether the fastest engine gave
// the same bits as the mma_sync engine (a hash of D; both must, computing the same datapath). The
// last column splits one more call into its phases (markidis::PhaseSeconds).
//
// The issue's goal, checked in the last lines: halfhalf and tf32tf32 at 1.5x or more of
// cublasSgemm's throughput with a relative residual no worse than cublasSgemm's.
#include <algorithm>
#include <bit>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/gpu/cublas_baselines.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/gpu_backend.hpp>
#include <tcemu/markidis/gemm.hpp>
#include <tcemu/markidis/presets.hpp>
#include <tcemu/reference/relative_residual.hpp>
#include <tcemu/session/arguments.hpp>
#include <tcemu/session/backends.hpp>
#include <tcemu/session/output_file.hpp>

namespace {

using namespace tcemu;
using reference::relative_residual;

// Median wall-clock seconds of `run` over `repeats` calls after 2 warm-ups, each from and to a
// synchronised device.
double median_seconds(Backend& backend, int repeats, const std::function<void()>& run) {
  for (int i = 0; i < 2; ++i) run();
  backend.synchronize();
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    backend.synchronize();
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

struct Row {
  std::string method, engine;
  std::string scheme = "";  // the preset's name (schemes only)
  double seconds = 0, residual = 0;
  std::uint64_t hash = 0;                                       // of D's bits (schemes only)
  std::optional<markidis::PhaseSeconds> phases = std::nullopt;  // one more call (schemes only)
};

// FNV-1a over the bits of `d`: equal results, equal hashes; a collision is out of reach.
std::uint64_t bits_hash(const std::vector<float>& d) {
  std::uint64_t h = 14695981039346656037ull;
  for (const float x : d) {
    h = (h ^ std::bit_cast<std::uint32_t>(x)) * 1099511628211ull;
  }
  return h;
}

// "yes"/"NO" when the fastest engine's D has the bits of the mma_sync engine's for the same
// scheme, "-" for other rows or when mma_sync did not run.
std::string same_bits(const Row& r, const std::vector<Row>& rows) {
  if (r.engine != "fastest") return "-";
  for (const Row& other : rows) {
    if (other.method == r.method && other.engine == "mma_sync") {
      return other.hash == r.hash ? "yes" : "NO";
    }
  }
  return "-";
}

// An n x n column-major matrix of `type` in a new buffer of `backend`, filled from `host`.
struct DeviceSquare {
  Buffer buffer;
  RealMatrix matrix;
};
DeviceSquare device_square(Backend& backend, Real type, std::int64_t n, const void* host) {
  const auto bytes = static_cast<std::size_t>(n * n) * real_bytes(type);
  DeviceSquare s{backend.allocate(bytes), {}};
  if (host != nullptr) backend.copy_in(host, s.buffer, bytes);
  s.matrix = {&s.buffer, 0, type, n, n, n, Layout::column_major};
  return s;
}

BufferMatrix fp32_view(const DeviceSquare& s) {
  return {&s.buffer,     0,           formats::fp32,       s.matrix.rows,
          s.matrix.cols, s.matrix.ld, Layout::column_major};
}

// `scheme` with every take-out every `takeout` instructions when takeout > 0 and it takes out.
markidis::Scheme with_takeout(const markidis::Scheme& scheme, int takeout) {
  const bool takes_out =
      std::any_of(scheme.groups.begin(), scheme.groups.end(),
                  [](const markidis::AccumulatorGroup& g) { return g.takeout_every_instructions; });
  return takeout > 0 && takes_out ? markidis::with_takeout_interval(scheme, takeout) : scheme;
}

// The scheme column: the name, with the take-out interval of the first group that takes out.
std::string method_name(const markidis::Scheme& scheme) {
  for (const markidis::AccumulatorGroup& g : scheme.groups) {
    if (g.takeout_every_instructions > 0) {
      return scheme.name + " (take-out every " + std::to_string(g.takeout_every_instructions) + ")";
    }
  }
  return scheme.name;
}

constexpr const char* kUsage =
    R"(usage: markidis_gpu_benchmark [--n N] [--schemes S,...] [--engines E,...] [--repeats R]
                              [--takeout I] [--csv FILE]

Throughput and accuracy of the error-corrected SGEMM schemes on device 0 against cuBLAS's fp32
GEMMs (cublasSgemm, cublasGemmEx with FAST_TF32), on the same n x n fp32 inputs in the same run:
the median time of R calls after 2 warm-ups, TFLOP/s, the relative residual against cublasDgemm
on the widened inputs, whether the fastest engine's bits equal the mma_sync engine's, and the
phases of one more call. Progress lines and the table go to stdout; the last lines check the
goal (halfhalf and tf32tf32 at 1.5x cublasSgemm's throughput or more, residual no worse).

Options:
  --n N                  the size (default 8192)
  --schemes S,...        scheme presets (default halfhalf,tf32tf32,3xtf32,markidis,bf16x3)
  --engines E,...        GEMM engines: fastest, mma_sync, wgmma, cublas, emulated (default
                         fastest,mma_sync,cublas)
  --repeats R            timed calls per method (default 10)
  --takeout I            every group that leaves the Tensor Core does so every I instructions
                         instead of its preset's interval
  --csv FILE             also write the table as CSV to FILE (default: no file)
)";

int run(const session::Arguments& args) {
  if (!args.positional().empty()) {
    throw session::UsageError("unexpected word '" + args.positional()[0] + "'");
  }
  const std::int64_t n = args.integer_or("n", 8192, 1, 1'000'000);
  const std::vector<std::string> schemes =
      args.list_or("schemes", "halfhalf,tf32tf32,3xtf32,markidis,bf16x3");
  const std::vector<std::string> engines = args.list_or("engines", "fastest,mma_sync,cublas");
  const int repeats = static_cast<int>(args.integer_or("repeats", 10, 1, 1'000'000));
  const int takeout = static_cast<int>(args.integer_or("takeout", 0, 1, INT_MAX));  // 0: presets'
  const std::string csv_path = args.value_or("csv", "");
  for (const std::string& engine : engines) session::engine_choice(engine);
  for (const std::string& scheme : schemes) {
    try {
      markidis::scheme_by_name(scheme);
    } catch (const std::invalid_argument& e) {
      throw session::UsageError(e.what());
    }
  }
  std::string why;
  const auto devices = gpu::list_devices(&why);
  if (devices.empty()) throw std::runtime_error("no CUDA device (" + why + ")");
  const std::string arch = devices.front().arch_preset();
  std::printf("device: %s (%s), n = %lld, median of %d\n", devices.front().name.c_str(),
              arch.c_str(), static_cast<long long>(n), repeats);

  std::mt19937 rng(1);
  std::uniform_real_distribution<float> uniform(-0.5f, 0.5f);
  std::normal_distribution<float> normal;
  const auto count = static_cast<std::size_t>(n * n);
  std::vector<float> a(count), b(count);
  for (float& x : a) x = uniform(rng) * std::exp(normal(rng));
  for (float& x : b) x = uniform(rng) * std::exp(normal(rng));
  std::vector<double> a64(a.begin(), a.end()), b64(b.begin(), b.end());

  // The reference and the baselines, on a backend of their own.
  const auto base = gpu::make_gpu_backend({.engine = gpu::GemmEngine::mma_sync});
  gpu::CublasBaselines blas(*base);
  std::vector<double> ref(count);
  {
    const DeviceSquare da = device_square(*base, Real::fp64, n, a64.data());
    const DeviceSquare db = device_square(*base, Real::fp64, n, b64.data());
    const DeviceSquare dd = device_square(*base, Real::fp64, n, nullptr);
    blas.gemm(gpu::Baseline::dgemm, da.matrix, db.matrix, dd.matrix);
    base->copy_out(dd.buffer, ref.data(), count * sizeof(double));
  }
  std::vector<Row> rows;
  std::vector<float> d(count);
  {
    const DeviceSquare da = device_square(*base, Real::fp32, n, a.data());
    const DeviceSquare db = device_square(*base, Real::fp32, n, b.data());
    const DeviceSquare dd = device_square(*base, Real::fp32, n, nullptr);
    for (const gpu::Baseline baseline : {gpu::Baseline::sgemm, gpu::Baseline::sgemm_fast_tf32}) {
      Row row{gpu::name_of(baseline), "cuBLAS"};
      row.seconds = median_seconds(*base, repeats,
                                   [&] { blas.gemm(baseline, da.matrix, db.matrix, dd.matrix); });
      base->copy_out(dd.buffer, d.data(), count * sizeof(float));
      row.residual = relative_residual(d, ref);
      rows.push_back(row);
      std::printf("done: %s\n", row.method.c_str());
      std::fflush(stdout);
    }
  }

  for (const std::string& engine_name : engines) {
    const auto backend = session::make_backend(
        session::backend_choice("gpu"), {.engine = session::engine_choice(engine_name).engine});
    const DeviceSquare da = device_square(*backend, Real::fp32, n, a.data());
    const DeviceSquare db = device_square(*backend, Real::fp32, n, b.data());
    const DeviceSquare dd = device_square(*backend, Real::fp32, n, nullptr);
    for (const std::string& scheme_name : schemes) {
      const markidis::Scheme scheme = with_takeout(markidis::scheme_by_name(scheme_name), takeout);
      const Datapath dp = markidis::scheme_datapath(scheme, arch);
      markidis::Workspace workspace;
      Row row{method_name(scheme), engine_name, scheme_name};
      row.seconds = median_seconds(*backend, repeats, [&] {
        markidis::gemm(*backend, scheme, dp, fp32_view(da), fp32_view(db), std::nullopt,
                       fp32_view(dd), {.workspace = &workspace});
      });
      row.phases.emplace();
      markidis::gemm(*backend, scheme, dp, fp32_view(da), fp32_view(db), std::nullopt,
                     fp32_view(dd), {.workspace = &workspace, .phases = &*row.phases});
      backend->copy_out(dd.buffer, d.data(), count * sizeof(float));
      row.residual = relative_residual(d, ref);
      row.hash = bits_hash(d);
      rows.push_back(row);
      std::printf("done: %s on %s\n", row.method.c_str(), engine_name.c_str());
      std::fflush(stdout);
    }
  }

  const double flops =
      2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  const Row& sgemm = rows.front();
  std::optional<tcemu::session::OutputFile> csv;  // with --csv
  if (!csv_path.empty()) {
    csv.emplace(csv_path);
    csv->print(
        "device,n,method,engine,seconds,tflops,ratio_to_sgemm,relative_residual,"
        "residual_ratio_to_sgemm,bits_equal_mma_sync\n");
  }
  std::printf(
      "\n| method | GEMM engine | time (ms) | TFLOP/s | / cublasSgemm | relative residual | "
      "residual / cublasSgemm's | bits = mma_sync | summaries, splits, products, combination "
      "(ms) |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (const Row& r : rows) {
    const double tflops = flops / r.seconds / 1e12;
    char phases[96] = "-";
    if (r.phases) {
      std::snprintf(phases, sizeof phases, "%.2f, %.2f, %.2f, %.2f", r.phases->summaries * 1e3,
                    r.phases->splits * 1e3, r.phases->products * 1e3, r.phases->combination * 1e3);
    }
    std::printf("| %s | %s | %.2f | %.1f | %.2f | %.2e | %.2f | %s | %s |\n", r.method.c_str(),
                r.engine.c_str(), r.seconds * 1e3, tflops, sgemm.seconds / r.seconds, r.residual,
                r.residual / sgemm.residual, same_bits(r, rows).c_str(), phases);
    if (csv) {
      csv->print("%s,%lld,%s,%s,%.6e,%.3f,%.4f,%.6e,%.4f,%s\n", devices.front().name.c_str(),
                 static_cast<long long>(n), r.method.c_str(), r.engine.c_str(), r.seconds, tflops,
                 sgemm.seconds / r.seconds, r.residual, r.residual / sgemm.residual,
                 same_bits(r, rows).c_str());
    }
  }
  if (csv) csv->close();
  std::printf(
      "\nGoal (issue 5): halfhalf and tf32tf32 at >= 1.5x cublasSgemm's throughput with a "
      "residual no worse than cublasSgemm's:\n");
  for (const Row& r : rows) {
    if (r.scheme != "halfhalf" && r.scheme != "tf32tf32") continue;
    const double speedup = sgemm.seconds / r.seconds;
    const bool met = speedup >= 1.5 && r.residual <= sgemm.residual;
    std::printf("  %s on %s: %.2fx, residual %.2e against %.2e: %s\n", r.method.c_str(),
                r.engine.c_str(), speedup, r.residual, sgemm.residual, met ? "met" : "NOT met");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tcemu::session::run_program({"markidis_gpu_benchmark",
                                      kUsage,
                                      {"n", "schemes", "engines", "repeats", "takeout", "csv"},
                                      {}},
                                     argc, argv, run);
}
