// The emulated integer GEMM (s8 x s8 -> s32, sm90 mma.sync.m16n8k32, wrap and .satfinite)
// against Eigen's int32 GEMM on the same values, same run.
//
//   integer_gemm_benchmark [--benchmark_filter=...]    (Google Benchmark flags; kUsage)
//
// After the runs it prints a table: n, emulated multiply-adds per second on one thread (wrap and
// saturate), and the ratio of each to Eigen's single-thread time.
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <string_view>
#include <vector>

#include <tcemu/emulator/integer_gemm.hpp>
#include <tcemu/emulator/integer_presets.hpp>

#include "google_benchmark_main.hpp"

namespace {

using tcemu::integer_formats::s8;

// Uniform s8 values, the same for the emulator (bytes) and for Eigen (int32).
struct Problem {
  std::int64_t n;
  std::vector<std::uint8_t> a, b;
  Eigen::MatrixXi ea, eb;

  explicit Problem(std::int64_t size) : n(size), ea(size, size), eb(size, size) {
    std::mt19937 rng(static_cast<unsigned>(size));
    std::uniform_int_distribution<int> uniform(-128, 127);
    auto draw = [&](std::vector<std::uint8_t>& bytes, Eigen::MatrixXi& values) {
      bytes.resize(static_cast<std::size_t>(n * n));
      for (std::int64_t i = 0; i < n; ++i) {
        for (std::int64_t j = 0; j < n; ++j) {
          const int v = uniform(rng);
          bytes[static_cast<std::size_t>(i * n + j)] = static_cast<std::uint8_t>(v);
          values(i, j) = v;
        }
      }
    };
    draw(a, ea);
    draw(b, eb);
  }
};

const Problem& problem(std::int64_t n) {
  static std::map<std::int64_t, Problem> cache;
  auto it = cache.find(n);
  if (it == cache.end()) it = cache.emplace(n, Problem(n)).first;
  return it->second;
}

void set_rate(benchmark::State& state, std::int64_t n) {
  state.counters["MAC/s"] =
      benchmark::Counter(static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n),
                         benchmark::Counter::kIsIterationInvariantRate);
}

// range(1): 0 wrap, 1 .satfinite.
void BM_IntegerGemm(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const Problem& p = problem(n);
  const tcemu::IntegerDatapath dp =
      tcemu::integer_preset("sm90", s8, s8, "mma.sync", state.range(1) == 1);
  std::vector<std::int32_t> d(static_cast<std::size_t>(n * n));
  for (auto _ : state) {
    tcemu::emulated_integer_gemm(dp, {p.a.data(), s8, n, n, n, tcemu::Layout::row_major},
                                 {p.b.data(), s8, n, n, n, tcemu::Layout::row_major}, std::nullopt,
                                 {{d.data(), n, n, n, tcemu::Layout::row_major}}, 1);
    benchmark::DoNotOptimize(d.data());
  }
  set_rate(state, n);
}

void BM_EigenIntGemm(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const Problem& p = problem(n);
  Eigen::setNbThreads(1);
  Eigen::MatrixXi c(n, n);
  for (auto _ : state) {
    c.noalias() = p.ea * p.eb;
    benchmark::DoNotOptimize(c.data());
  }
  set_rate(state, n);
}

const std::vector<std::int64_t> kSizes = {256, 512, 1024, 2048};

BENCHMARK(BM_IntegerGemm)
    ->ArgsProduct({kSizes, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_EigenIntGemm)->ArgsProduct({kSizes})->Unit(benchmark::kMillisecond)->UseRealTime();

// Keeps the per-iteration real time of every run to print the ratio table at the end.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration || r.error_occurred) continue;
      seconds_[r.benchmark_name()] = r.GetAdjustedRealTime() / 1e3;  // ms -> s
    }
  }
  void print_table() const {
    std::printf(
        "\n| n | wrap: s, MAC/s (1 thread) | wrap / Eigen | .satfinite: s, MAC/s | "
        ".satfinite / Eigen |\n|---|---|---|---|---|\n");
    for (std::int64_t n : kSizes) {
      const std::string ns = std::to_string(n);
      const auto wrap = seconds_.find("BM_IntegerGemm/" + ns + "/0/real_time");
      const auto sat = seconds_.find("BM_IntegerGemm/" + ns + "/1/real_time");
      const auto eigen = seconds_.find("BM_EigenIntGemm/" + ns + "/real_time");
      if (wrap == seconds_.end() || sat == seconds_.end() || eigen == seconds_.end()) continue;
      const double macs = static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
      std::printf("| %lld | %.3g s, %.3g | %.2fx | %.3g s, %.3g | %.2fx |\n",
                  static_cast<long long>(n), wrap->second, macs / wrap->second,
                  wrap->second / eigen->second, sat->second, macs / sat->second,
                  sat->second / eigen->second);
    }
  }

 private:
  std::map<std::string, double> seconds_;
};

constexpr const char* kUsage = R"(usage: integer_gemm_benchmark [--benchmark_FLAG=VALUE ...]

The emulated integer GEMM (s8 x s8 -> s32 through the sm90 mma.sync.m16n8k32 preset, wrapping
and with .satfinite) against Eigen's int32 GEMM on the same values in the same run, one thread
each, by Google Benchmark. After the runs it prints a table: n, the emulator's time and
multiply-adds per second, and its time over Eigen's. Writes no file unless --benchmark_out asks.

Options: Google Benchmark's --benchmark_* flags, e.g. --benchmark_filter=REGEX,
--benchmark_repetitions=N, --benchmark_out=FILE, --benchmark_format=console|json|csv
(--benchmark_list_tests=true lists the benchmarks).
)";

}  // namespace

int main(int argc, char** argv) {
  return tcemu::bench::google_benchmark_main<RatioReporter>("integer_gemm_benchmark", kUsage, argc,
                                                            argv);
}
