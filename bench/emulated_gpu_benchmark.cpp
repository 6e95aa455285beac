// The GPU backend's emulated engine (any datapath on the CUDA cores) against the CPU emulator on
// every hardware thread, in the same run: emulated multiply-adds per second and their ratio.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/gpu_backend.hpp>
#include <tcemu/session/arguments.hpp>

namespace {

using namespace tcemu;

// The papers' (rand - 0.5) * exp(randn) values rounded to the format, row major n x n.
std::vector<unsigned char> random_matrix(const FloatFormat& f, std::int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-0.5f, 0.5f);
  std::normal_distribution<float> normal;
  const std::size_t bytes = container_bytes(f);
  std::vector<unsigned char> out(static_cast<std::size_t>(n * n) * bytes);
  for (std::int64_t i = 0; i < n * n; ++i) {
    const float value = uniform(rng) * std::exp(normal(rng));
    const std::uint32_t bits =
        convert(formats::fp32, f, std::bit_cast<std::uint32_t>(value), Rounding::nearest_even);
    std::memcpy(out.data() + i * bytes, &bits, bytes);
  }
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Emulated multiply-adds per second of D = A B (n x n) on the GPU's emulated engine: the best of
// `repeats` runs after one warm-up, each timed to the end of the kernel (synchronize).
double gpu_rate(Backend& gpu, const Datapath& dp, std::int64_t n, int repeats) {
  const auto a = random_matrix(dp.input, n, 1), b = random_matrix(dp.input, n, 2);
  Buffer ba = gpu.allocate(a.size()), bb = gpu.allocate(b.size());
  Buffer bd = gpu.allocate(static_cast<std::size_t>(n * n) * container_bytes(dp.accumulator));
  gpu.copy_in(a.data(), ba, a.size());
  gpu.copy_in(b.data(), bb, b.size());
  const BufferMatrix ma{&ba, 0, dp.input, n, n, n, Layout::row_major};
  const BufferMatrix mb{&bb, 0, dp.input, n, n, n, Layout::row_major};
  const BufferMatrix md{&bd, 0, dp.accumulator, n, n, n, Layout::row_major};
  double best = 1e300;
  for (int r = 0; r <= repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    gpu.mma_gemm(dp, {}, ma, mb, std::nullopt, md);
    gpu.synchronize();
    if (r > 0) best = std::min(best, seconds_since(start));
  }
  return std::pow(static_cast<double>(n), 3) / best;
}

// The same on the CPU emulator (emulated_gemm on every hardware thread), one timed run.
double cpu_rate(const Datapath& dp, std::int64_t n) {
  const auto a = random_matrix(dp.input, n, 1), b = random_matrix(dp.input, n, 2);
  std::vector<unsigned char> d(static_cast<std::size_t>(n * n) * container_bytes(dp.accumulator));
  const auto start = std::chrono::steady_clock::now();
  emulated_gemm(dp, {}, {a.data(), dp.input, n, n, n, Layout::row_major},
                {b.data(), dp.input, n, n, n, Layout::row_major}, std::nullopt,
                {{d.data(), dp.accumulator, n, n, n, Layout::row_major}});
  return std::pow(static_cast<double>(n), 3) / seconds_since(start);
}

constexpr const char* kUsage =
    R"(usage: emulated_gpu_benchmark [--n N] [--exact-n N] [--cpu-n N] [--repeats R] [--only LIST]

The GPU backend's emulated engine (GemmEngine::emulated: any datapath, the emulator's bits) on
device 0 against the CPU emulator (emulated_gemm) on every hardware thread of this machine, in
the same run: D = A B with A, B n x n random of each input format and an fp32 accumulator, for the
sm70, sm80 and sm90 mma.sync presets and the sm90 fp16 preset with exact alignment. The GPU runs
at --n (default 8192; --exact-n, default 2048, for the exact-alignment datapath, whose exact kernel
is far slower), the best of --repeats (default 2) runs after a warm-up; the CPU at --cpu-n
(default 2048), one run. --only runs the rows named in a comma-separated list of ARCH-INPUT
words (sm70-fp16, sm80-fp16, sm80-bf16, sm80-tf32, sm90-fp16, sm90-bf16, sm90-tf32,
sm90-fp16-exact). Prints a table of emulated multiply-adds per second and GPU / CPU.
)";

int run(const session::Arguments& args) {
  const std::int64_t n = args.integer_or("n", 8192, 1, 65536);
  const std::int64_t exact_n = args.integer_or("exact-n", 2048, 1, 65536);
  const std::int64_t cpu_n = args.integer_or("cpu-n", 2048, 1, 65536);
  const int repeats = static_cast<int>(args.integer_or("repeats", 2, 1, 100));
  const std::string only = args.value_or("only", "");
  std::string why;
  const auto devices = gpu::list_devices(&why);
  if (devices.empty()) throw std::runtime_error("no CUDA device (" + why + ")");
  std::printf("device: %s; CPU emulator on %u hardware threads\n", devices.front().name.c_str(),
              std::max(1u, std::thread::hardware_concurrency()));
  const auto gpu = gpu::make_gpu_backend({.engine = gpu::GemmEngine::emulated});
  struct Case {
    const char* arch;
    FloatFormat input;
    bool exact;
  };
  const std::vector<Case> cases = {{"sm70", formats::fp16, false}, {"sm80", formats::fp16, false},
                                   {"sm80", formats::bf16, false}, {"sm80", formats::tf32, false},
                                   {"sm90", formats::fp16, false}, {"sm90", formats::bf16, false},
                                   {"sm90", formats::tf32, false}, {"sm90", formats::fp16, true}};
  std::printf(
      "\n| datapath | GPU n | GPU (emulated MAC/s) | CPU n | CPU (emulated MAC/s) | GPU / CPU "
      "|\n|---|---|---|---|---|---|\n");
  for (const Case& c : cases) {
    const std::string word =
        std::string(c.arch) + "-" + std::string(c.input.name) + (c.exact ? "-exact" : "");
    if (!only.empty() && ("," + only + ",").find("," + word + ",") == std::string::npos) continue;
    Datapath dp = preset(c.arch, c.input, formats::fp32, "mma.sync");
    if (c.exact) dp.alignment_fraction_bits = std::nullopt;
    const std::int64_t gpu_n = c.exact ? exact_n : n;
    const double on_gpu = gpu_rate(*gpu, dp, gpu_n, repeats);
    const double on_cpu = cpu_rate(dp, c.exact ? std::min(cpu_n, exact_n / 4) : cpu_n);
    std::printf("| %s %s -> fp32%s | %lld | %.3g | %lld | %.3g | %.0fx |\n", c.arch,
                std::string(c.input.name).c_str(), c.exact ? ", exact alignment" : "",
                static_cast<long long>(gpu_n), on_gpu,
                static_cast<long long>(c.exact ? std::min(cpu_n, exact_n / 4) : cpu_n), on_cpu,
                on_gpu / on_cpu);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tcemu::session::run_program(
      {"emulated_gpu_benchmark", kUsage, {"n", "exact-n", "cpu-n", "repeats", "only"}, {}}, argc,
      argv, run);
}
