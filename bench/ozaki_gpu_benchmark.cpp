// DGEMM-TC on the GPU against its GEMM-bound time (issue 4), all figures from one run:
//
//   ozaki_gpu_benchmark [--phi PHI] [--runs R] [--workspace-gib G] [--batching n,n,...] [n ...]
//                       (default: phi 1, 3 runs, 8192 10240, 80% of the free device memory;
//                       kUsage)
//
// --batching: for each of those n, DP mode's products one cublasGemmEx each against one batch
// per stack of held products (cublasGemmBatchedEx, Backend::mma_gemm_batch), the median of R
// runs each, beside the choice the cuBLAS engine makes by default
// (gpu::kBatchedGemmMaxMultiplyAdds): a second table.
//
// For each n: A, B, C (n x n, column major, (rand - 0.5) exp(phi randn)) are put in device memory
// once; DP and CR modes run through Handle::gemm (device-resident, no host copies) on the GPU
// backend's cuBLAS engine with fp16 slices, the median of R runs after one warm-up, each timed
// with the backend synchronised before and after. The fp16 GEMM the scheme issues (the slices of
// A row major and of B column major, fp32 out, through the same engine) is timed on the block
// shape on slices like the scheme's (random integers of the report's slice width): after every
// run, as many GEMMs back to back as the run issued (that run's bound, taken under the clocks of
// the run), and once as single calls, for comparison. The table gives the time against the
// GEMM-bound time (GEMMs x that GEMM's time; the goal for DP: at most 1.11x) as the median of the
// runs' ratios and their range, TFLOP/s as 2 n^3 / time, CR's TFLOP/s over DP's (the goal: 0.3
// or more), and the phases (the scheme's Report of the last run).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/backend/ozaki_elements.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/gpu_backend.hpp>
#include <tcemu/ozaki/handle.hpp>
#include <tcemu/session/arguments.hpp>

namespace {

using namespace tcemu;

double seconds_of(Backend& backend, const auto& run) {
  backend.synchronize();
  const auto start = std::chrono::steady_clock::now();
  run();
  backend.synchronize();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  return x[x.size() / 2];
}

// The fp16 -> fp32 GEMM of an m x k by k x n slice pair, on slices like the scheme's (integers
// of `bits` bits, random signs and magnitudes, as the split makes them).
class SliceGemm {
 public:
  SliceGemm(Backend& backend, const Datapath& dp, std::int64_t m, std::int64_t n, std::int64_t k,
            int bits)
      : backend_(backend),
        dp_(dp),
        a_(backend.allocate(static_cast<std::size_t>(m * k) * 2)),
        b_(backend.allocate(static_cast<std::size_t>(k * n) * 2)),
        d_(backend.allocate(static_cast<std::size_t>(m * n) * 4)),
        am_{&a_, 0, formats::fp16, m, k, k, Layout::row_major},
        bm_{&b_, 0, formats::fp16, k, n, k, Layout::column_major},
        dm_{&d_, 0, formats::fp32, m, n, m, Layout::column_major} {
    std::vector<std::uint16_t> host(static_cast<std::size_t>(std::max(m, n) * k));
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<int> magnitude(0, (1 << bits) - 1), sign(0, 1);
    for (std::uint16_t& h : host) {
      const double q = magnitude(rng) * (sign(rng) ? -1.0 : 1.0);
      h = static_cast<std::uint16_t>(ozaki_elements::slice_bits(q, formats::fp16));
    }
    backend.copy_in(host.data(), a_, a_.bytes());
    backend.copy_in(host.data(), b_, b_.bytes());
    for (int i = 0; i < 3; ++i) run();  // warm-up
  }

  // Seconds per GEMM over `calls` GEMMs issued back to back, as the scheme issues its products
  // (the GPU's clocks settle lower under a long run than under one call).
  double back_to_back(std::int64_t calls) {
    return seconds_of(backend_,
                      [&] {
                        for (std::int64_t c = 0; c < calls; ++c) run();
                      }) /
           static_cast<double>(calls);
  }

  // The median of 10 single synchronised calls.
  double single() {
    std::vector<double> t;
    for (int i = 0; i < 10; ++i) t.push_back(seconds_of(backend_, [&] { run(); }));
    return median(t);
  }

 private:
  void run() { backend_.mma_gemm(dp_, {.alpha = 1.0f, .beta = 0.0f}, am_, bm_, std::nullopt, dm_); }

  Backend& backend_;
  Datapath dp_;
  Buffer a_, b_, d_;
  BufferMatrix am_, bm_, dm_;
};

// The inputs of every n: A and B (rand - 0.5) exp(phi randn), and C, n x n column major.
struct Operands {
  Operands(Backend& backend, std::int64_t n, double phi)
      : a(backend.allocate(bytes(n))),
        b(backend.allocate(bytes(n))),
        c(backend.allocate(bytes(n))) {
    std::mt19937_64 rng(1);
    std::uniform_real_distribution<double> uniform(-0.5, 0.5);
    std::normal_distribution<double> normal;
    std::vector<double> host(static_cast<std::size_t>(n * n));
    for (Buffer* x : {&a, &b}) {
      for (double& v : host) v = uniform(rng) * std::exp(phi * normal(rng));
      backend.copy_in(host.data(), *x, bytes(n));
    }
    am = {&a, 0, Real::fp64, n, n, n, Layout::column_major};
    bm = {&b, 0, Real::fp64, n, n, n, Layout::column_major};
    cm = {&c, 0, Real::fp64, n, n, n, Layout::column_major};
  }
  static std::size_t bytes(std::int64_t n) { return static_cast<std::size_t>(n * n) * 8; }

  Buffer a, b, c;
  RealMatrix am, bm, cm;
};

// `gib` GiB, or most of the free device memory, less room for cuBLAS and the backend's scratch.
std::size_t workspace_bytes(double gib) {
  std::size_t free = 0, total = 0;
  cudaMemGetInfo(&free, &total);
  return gib > 0 ? static_cast<std::size_t>(gib * (1 << 30)) : free / 10 * 8;
}

// DP mode at each n with its products one cublasGemmEx each and batched without the engine's
// limit, the median of `runs` runs after a warm-up each.
void batching_table(const std::vector<std::int64_t>& sizes, int runs, double phi,
                    double workspace_gib, const Datapath& dp) {
  const auto one_by_one = gpu::make_gpu_backend(
      {.engine = gpu::GemmEngine::cublas, .batched_gemm_max_multiply_adds = 0});
  const auto batched = gpu::make_gpu_backend(
      {.engine = gpu::GemmEngine::cublas,
       .batched_gemm_max_multiply_adds = std::numeric_limits<std::int64_t>::max()});
  std::printf(
      "\nDP mode: products one cublasGemmEx each against one cublasGemmBatchedEx per stack of held "
      "products (median of %d runs; by default the engine batches products of at most %lld "
      "multiply-adds)\n\n"
      "| n | GEMMs | products, one by one (s) | products, batched (s) | one by one / batched | DP "
      "time, one by one (s) | DP time, batched (s) | the engine's choice |\n"
      "| --- | --- | --- | --- | --- | --- | --- | --- |\n",
      runs, static_cast<long long>(gpu::kBatchedGemmMaxMultiplyAdds));
  for (const std::int64_t n : sizes) {
    double seconds[2], products[2];
    std::int64_t gemms = 0, block_rows = 0, block_cols = 0;
    Backend* backends[2] = {one_by_one.get(), batched.get()};
    for (int which = 0; which < 2; ++which) {
      Backend& backend = *backends[which];
      const Operands x(backend, n, phi);
      ozaki::Handle h(backend, ozaki::TensorCoreProducts{dp},
                      {.mode = ozaki::Mode::dp, .workspace_bytes = workspace_bytes(workspace_gib)});
      h.gemm(1.0, x.am, x.bm, 0.0, x.cm);
      std::vector<double> t, p;
      for (int r = 0; r < runs; ++r) {
        t.push_back(seconds_of(backend, [&] { h.gemm(1.0, x.am, x.bm, 0.0, x.cm); }));
        p.push_back(h.report().seconds_products);
      }
      seconds[which] = median(t);
      products[which] = median(p);
      gemms = h.report().gemms;
      block_rows = h.report().block_rows;
      block_cols = h.report().block_cols;
      std::fprintf(stderr, "  batching, n = %lld, %s: %.5f s\n", static_cast<long long>(n),
                   which == 0 ? "one by one" : "batched", seconds[which]);
    }
    const bool engine_batches = gpu::batches_gemms(block_rows, block_cols, n);
    std::printf("| %lld | %lld | %.5f | %.5f | %.2f | %.5f | %.5f | %s |\n",
                static_cast<long long>(n), static_cast<long long>(gemms), products[0], products[1],
                products[0] / products[1], seconds[0], seconds[1],
                engine_batches ? "batched" : "one by one");
  }
}

struct Row {
  std::int64_t n;
  std::string mode;
  ozaki::Report report;
  double seconds;       // the median run
  double gemm;          // the fp16 GEMM of a block, back to back: the median of the runs'
  double single;        // the same GEMM, single calls
  double ratio;         // time / GEMM-bound: the median of the runs'
  double ratio_lowest;  // and their range
  double ratio_highest;
};

constexpr const char* kUsage =
    R"(usage: ozaki_gpu_benchmark [--phi PHI] [--runs R] [--workspace-gib G] [--batching N,...]
                           [N ...]

DGEMM-TC on device 0 against its GEMM-bound time (issue 4): for each size N (default 8192 10240)
DP and CR modes run through the Ozaki handle on the GPU backend's cuBLAS engine with fp16 slices
on device-resident n x n operands ((rand - 0.5) exp(PHI randn)), the median of R runs after a
warm-up, each followed by as many fp16 slice GEMMs back to back as it issued (its GEMM bound).
The table gives the time against the GEMM-bound time (goal for DP: at most 1.11x), TFLOP/s, CR
over DP (goal: 0.3 or more) and the phases. Progress goes to stderr, the tables to stdout; writes
no file.

Options:
  --phi PHI              the exponent spread of the inputs (default 1)
  --runs R               timed runs per mode (default 3)
  --workspace-gib G      the handle's workspace in GiB (default: 80% of the free device memory)
  --batching N,...       for each N, DP mode's products one cublasGemmEx each against one batch
                         per stack of held products (cublasGemmBatchedEx): a second table
)";

int run(const session::Arguments& args) {
  const double phi = args.number_or("phi", 1.0);
  const int runs = static_cast<int>(args.integer_or("runs", 3, 1, 1'000'000));
  const double workspace_gib = args.number_or("workspace-gib", 0);  // 0: most of the free memory
  if (!(workspace_gib >= 0)) throw session::UsageError("--workspace-gib must be >= 0");
  std::vector<std::int64_t> sizes, batching_sizes;
  for (const std::string& n : args.positional())
    sizes.push_back(session::integer_in("N", n, 1, 1'000'000));
  for (const std::string& n : args.list_or("batching", "")) {
    batching_sizes.push_back(session::integer_in("--batching", n, 1, 1'000'000));
  }
  if (sizes.empty()) sizes = {8192, 10240};
  std::string why;
  const auto devices = gpu::list_devices(&why);
  if (devices.empty()) throw std::runtime_error("no CUDA device (" + why + ")");
  const std::string arch = devices.front().arch_preset();
  std::printf("device: %s (%s), inputs (rand - 0.5) exp(%g randn), cuBLAS engine, fp16 slices\n",
              devices.front().name.c_str(), arch.c_str(), phi);
  const auto backend = gpu::make_gpu_backend({.engine = gpu::GemmEngine::cublas});
  const Datapath dp = preset(arch, formats::fp16, formats::fp32);
  std::vector<Row> rows;
  for (const std::int64_t n : sizes) {
    const Operands x(*backend, n, phi);
    for (const ozaki::Mode mode : {ozaki::Mode::dp, ozaki::Mode::cr}) {
      ozaki::Handle h(*backend, ozaki::TensorCoreProducts{dp},
                      {.mode = mode, .workspace_bytes = workspace_bytes(workspace_gib)});
      std::fprintf(stderr, "n = %lld, %s: warm-up...\n", static_cast<long long>(n),
                   mode == ozaki::Mode::dp ? "DP" : "CR");
      h.gemm(1.0, x.am, x.bm, 0.0, x.cm);
      const ozaki::Report& warm = h.report();
      SliceGemm gemm(*backend, dp, warm.block_rows, warm.block_cols, n, warm.slice_bits);
      // Each run is followed by its bound, as many GEMMs back to back as the run issued, so that
      // each ratio compares times taken under the same clocks.
      std::vector<double> t, per_gemm, ratio;
      for (int r = 0; r < runs; ++r) {
        t.push_back(seconds_of(*backend, [&] { h.gemm(1.0, x.am, x.bm, 0.0, x.cm); }));
        const auto gemms = h.report().gemms;
        per_gemm.push_back(gemm.back_to_back(gemms));
        ratio.push_back(t.back() / (static_cast<double>(gemms) * per_gemm.back()));
        std::fprintf(stderr, "  run %d: %.4f s, GEMM-bound %.4f s, ratio %.3f\n", r + 1, t.back(),
                     static_cast<double>(gemms) * per_gemm.back(), ratio.back());
      }
      rows.push_back({n, mode == ozaki::Mode::dp ? "DP" : "CR", h.report(), median(t),
                      median(per_gemm), gemm.single(), median(ratio),
                      *std::min_element(ratio.begin(), ratio.end()),
                      *std::max_element(ratio.begin(), ratio.end())});
    }
  }
  std::printf(
      "\n| n | mode | slices A / B | GEMMs | blocks | time (s) | TFLOP/s | fp16 GEMM of a block, "
      "back to back / single call (ms) | GEMM-bound (s) | time / GEMM-bound (range) | split A, "
      "split B, products, summation (s) |\n"
      "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (const Row& r : rows) {
    const double size = static_cast<double>(r.n);
    const double bound = static_cast<double>(r.report.gemms) * r.gemm;
    std::printf(
        "| %lld | %s | %d / %d | %lld | %lld | %.4f | %.2f | %.3f / %.3f | %.4f | %.3f (%.3f-%.3f) "
        "| %.4f, %.4f, %.4f, %.4f |\n",
        static_cast<long long>(r.n), r.mode.c_str(), r.report.slices_a, r.report.slices_b,
        static_cast<long long>(r.report.gemms), static_cast<long long>(r.report.blocks), r.seconds,
        2.0 * size * size * size / r.seconds / 1e12, r.gemm * 1e3, r.single * 1e3, bound, r.ratio,
        r.ratio_lowest, r.ratio_highest, r.report.seconds_split_a, r.report.seconds_split_b,
        r.report.seconds_products, r.report.seconds_summation);
  }
  std::printf("\n");
  for (std::size_t i = 0; i + 1 < rows.size(); i += 2) {
    const Row& dp_row = rows[i];
    const double gemms = static_cast<double>(dp_row.report.gemms);
    std::printf(
        "n = %lld: CR TFLOP/s / DP TFLOP/s = %.3f (goal >= 0.3); DP time / GEMM-bound = %.3f, "
        "%.3f-%.3f over %d runs (goal <= 1.11; %.3f against single-call GEMMs); DP products / "
        "GEMM-bound = %.3f\n",
        static_cast<long long>(dp_row.n), dp_row.seconds / rows[i + 1].seconds, dp_row.ratio,
        dp_row.ratio_lowest, dp_row.ratio_highest, runs, dp_row.seconds / (gemms * dp_row.single),
        dp_row.report.seconds_products / (gemms * dp_row.gemm));
  }
  if (!batching_sizes.empty()) batching_table(batching_sizes, runs, phi, workspace_gib, dp);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tcemu::session::run_program(
      {"ozaki_gpu_benchmark", kUsage, {"phi", "runs", "workspace-gib", "batching"}, {}}, argc, argv,
      run);
}
