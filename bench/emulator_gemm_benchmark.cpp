// Emulated fp16 GEMM (sm90 preset) against Eigen's float GEMM on the same matrices, same run.
//
//   emulator_gemm_benchmark [--benchmark_filter=...]    (Google Benchmark flags; kUsage)
//
// After the runs it prints a table: n, emulated multiply-adds per second per thread, and the
// ratio of the emulator's single-thread time to Eigen's single-thread time, plus the speed-up of
// the emulator over one thread with 2, 4, 8, ... threads and with every hardware thread.
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/presets.hpp>

#include "google_benchmark_main.hpp"

namespace {

using tcemu::formats::fp16;
using tcemu::formats::fp32;

// (rand - 0.5) values rounded to fp16, the same for the emulator and for Eigen.
struct Problem {
  std::int64_t n;
  std::vector<std::uint16_t> a, b;
  Eigen::MatrixXf ea, eb;

  explicit Problem(std::int64_t size) : n(size), ea(size, size), eb(size, size) {
    std::mt19937 rng(static_cast<unsigned>(size));
    std::uniform_real_distribution<float> uniform(-0.5f, 0.5f);
    auto draw = [&](std::vector<std::uint16_t>& bits, Eigen::MatrixXf& values) {
      bits.resize(static_cast<std::size_t>(n * n));
      for (std::int64_t i = 0; i < n; ++i) {
        for (std::int64_t j = 0; j < n; ++j) {
          const std::uint32_t h =
              tcemu::convert(fp32, fp16, std::bit_cast<std::uint32_t>(uniform(rng)),
                             tcemu::Rounding::nearest_even);
          bits[static_cast<std::size_t>(i * n + j)] = static_cast<std::uint16_t>(h);
          values(i, j) =
              std::bit_cast<float>(tcemu::convert(fp16, fp32, h, tcemu::Rounding::nearest_even));
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

void BM_EmulatedGemm(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const int threads = static_cast<int>(state.range(1));
  const Problem& p = problem(n);
  const tcemu::Datapath dp = tcemu::preset("sm90", fp16, fp32);
  std::vector<std::uint32_t> d(static_cast<std::size_t>(n * n));
  const auto* a_bytes = reinterpret_cast<const unsigned char*>(p.a.data());
  const auto* b_bytes = reinterpret_cast<const unsigned char*>(p.b.data());
  state.SetLabel(std::string(tcemu::detail::fast_path_isa()));
  for (auto _ : state) {
    tcemu::emulated_gemm(
        dp, {.threads = threads}, {a_bytes, fp16, n, n, n, tcemu::Layout::row_major},
        {b_bytes, fp16, n, n, n, tcemu::Layout::row_major}, std::nullopt,
        {{reinterpret_cast<unsigned char*>(d.data()), fp32, n, n, n, tcemu::Layout::row_major}});
    benchmark::DoNotOptimize(d.data());
  }
  set_rate(state, n);
}

void BM_EigenSgemm(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const Problem& p = problem(n);
  Eigen::setNbThreads(1);
  Eigen::MatrixXf c(n, n);
  for (auto _ : state) {
    c.noalias() = p.ea * p.eb;
    benchmark::DoNotOptimize(c.data());
  }
  set_rate(state, n);
}

const std::vector<std::int64_t> kSizes = {256, 512, 1024, 2048};

// 1, 2, 4, ... threads below the hardware's count, then every hardware thread.
std::vector<std::int64_t> thread_counts() {
  const auto all = static_cast<std::int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::int64_t> counts;
  for (std::int64_t t = 1; t < all; t *= 2) counts.push_back(t);
  counts.push_back(all);
  return counts;
}

void sizes_and_threads(benchmark::internal::Benchmark* b) {
  for (std::int64_t n : kSizes) {
    for (std::int64_t t : thread_counts()) b->Args({n, t});
  }
}

BENCHMARK(BM_EmulatedGemm)->Apply(sizes_and_threads)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_EigenSgemm)->ArgsProduct({kSizes})->Unit(benchmark::kMillisecond)->UseRealTime();

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
    const std::vector<std::int64_t> counts = thread_counts();
    std::printf("\n| n | emulated MAC/s, 1 thread | emulator / Eigen (1 thread) |");
    for (std::size_t i = 1; i < counts.size(); ++i) {
      std::printf(" speed-up, %lld threads |", static_cast<long long>(counts[i]));
    }
    std::printf("\n|---|---|---|");
    for (std::size_t i = 1; i < counts.size(); ++i) std::printf("---|");
    std::printf("\n");
    for (std::int64_t n : kSizes) {
      const std::string ns = std::to_string(n);
      const auto time = [&](std::int64_t threads) {
        const auto it =
            seconds_.find("BM_EmulatedGemm/" + ns + "/" + std::to_string(threads) + "/real_time");
        return it == seconds_.end() ? 0.0 : it->second;
      };
      const auto eigen = seconds_.find("BM_EigenSgemm/" + ns + "/real_time");
      const double one = time(1);
      if (one == 0.0 || eigen == seconds_.end()) continue;
      const double macs = static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
      std::printf("| %lld | %.3g | %.1fx |", static_cast<long long>(n), macs / one,
                  one / eigen->second);
      for (std::size_t i = 1; i < counts.size(); ++i) {
        const double many = time(counts[i]);
        if (many == 0.0) {
          std::printf(" - |");
        } else {
          std::printf(" %.2fx |", one / many);
        }
      }
      std::printf("\n");
    }
  }

 private:
  std::map<std::string, double> seconds_;
};

constexpr const char* kUsage = R"(usage: emulator_gemm_benchmark [--benchmark_FLAG=VALUE ...]

The emulated fp16 GEMM (sm90 preset) against Eigen's float GEMM on the same matrices in the same
run, by Google Benchmark, on 1, 2, 4, ... threads and on every hardware thread. After the runs it
prints a table: n, emulated multiply-adds per second on one thread, the emulator's single-thread
time over Eigen's, and the speed-up of each thread count over one thread. Writes no file unless
--benchmark_out asks.

The emulator's runs are labelled with the instruction set of its fast path: the fastest this
build and CPU have, or the one the environment variable TCEMU_FAST_PATH_ISA names (avx512, avx2,
baseline).

Options: Google Benchmark's --benchmark_* flags, e.g. --benchmark_filter=REGEX,
--benchmark_repetitions=N, --benchmark_out=FILE, --benchmark_format=console|json|csv
(--benchmark_list_tests=true lists the benchmarks).
)";

}  // namespace

int main(int argc, char** argv) {
  return tcemu::bench::google_benchmark_main<RatioReporter>("emulator_gemm_benchmark", kUsage, argc,
                                                            argv);
}
