// The GPU backend's emulated engine (any datapath on the CUDA cores) against the CPU emulator on
// every hardware thread, in the same run: emulated multiply-adds per second and their ratio.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/mma.hpp>
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

// Scale codes of `f` within a binade or two of 1 (ue8m0 127 +- 2, ue4m3 0x38 +- 8), rows x cols
// row major, one byte each.
std::vector<unsigned char> random_scales(const FloatFormat& f, std::int64_t rows, std::int64_t cols,
                                         unsigned seed) {
  std::mt19937 rng(seed);
  const bool e8m0 = f == formats::ue8m0;
  const int one = e8m0 ? 127 : 0x38, spread = e8m0 ? 2 : 8;
  std::vector<unsigned char> out(static_cast<std::size_t>(rows * cols));
  for (unsigned char& x : out) {
    x = static_cast<unsigned char>(one - spread + static_cast<int>(rng() % (2 * spread + 1)));
  }
  return out;
}

// A, B (B in the datapath's b format) and, for a block-scaled datapath, the scales of both: n x n
// row major, the same on both engines.
struct Operands {
  std::vector<unsigned char> a, b, scale_a, scale_b;
  std::int64_t scales = 0;  // scales per row of A (and column of B)

  Operands(const Datapath& dp, std::int64_t n)
      : a(random_matrix(dp.input, n, 1)), b(random_matrix(dp.b_format(), n, 2)) {
    if (!dp.block_scaled()) return;
    scales = static_cast<std::int64_t>(scale_count(dp, static_cast<std::size_t>(n)));
    scale_a = random_scales(dp.block_scaling.scale_a, n, scales, 3);
    scale_b = random_scales(dp.block_scaling.scale_b, scales, n, 4);
  }
};

// Emulated multiply-adds per second of D = A B (n x n) on the GPU's emulated engine: the best of
// `repeats` runs after one warm-up, each timed to the end of the kernel (synchronize).
double gpu_rate(Backend& gpu, const Datapath& dp, std::int64_t n, int repeats) {
  const Operands x(dp, n);
  const auto put = [&](const std::vector<unsigned char>& bytes) {
    Buffer buffer = gpu.allocate(bytes.size());
    gpu.copy_in(bytes.data(), buffer, bytes.size());
    return buffer;
  };
  Buffer ba = put(x.a), bb = put(x.b);
  Buffer bd = gpu.allocate(static_cast<std::size_t>(n * n) * container_bytes(dp.accumulator));
  const BufferMatrix ma{&ba, 0, dp.input, n, n, n, Layout::row_major};
  const BufferMatrix mb{&bb, 0, dp.b_format(), n, n, n, Layout::row_major};
  const BufferMatrix md{&bd, 0, dp.accumulator, n, n, n, Layout::row_major};
  std::optional<Buffer> bsa, bsb;
  std::optional<ScaleBuffers> scales;
  if (dp.block_scaled()) {
    bsa = put(x.scale_a);
    bsb = put(x.scale_b);
    scales =
        ScaleBuffers{{&*bsa, 0, dp.block_scaling.scale_a, n, x.scales, x.scales, Layout::row_major},
                     {&*bsb, 0, dp.block_scaling.scale_b, x.scales, n, n, Layout::row_major}};
  }
  double best = 1e300;
  for (int r = 0; r <= repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    gpu.mma_gemm(dp, {}, ma, mb, std::nullopt, md, scales);
    gpu.synchronize();
    if (r > 0) best = std::min(best, seconds_since(start));
  }
  return std::pow(static_cast<double>(n), 3) / best;
}

// The same on the CPU emulator (emulated_gemm on every hardware thread), one timed run.
double cpu_rate(const Datapath& dp, std::int64_t n) {
  const Operands x(dp, n);
  std::vector<unsigned char> d(static_cast<std::size_t>(n * n) * container_bytes(dp.accumulator));
  const ConstMatrixView a{x.a.data(), dp.input, n, n, n, Layout::row_major};
  const ConstMatrixView b{x.b.data(), dp.b_format(), n, n, n, Layout::row_major};
  const MatrixView md{d.data(), dp.accumulator, n, n, n, Layout::row_major};
  const auto start = std::chrono::steady_clock::now();
  if (dp.block_scaled()) {
    const BlockScales scales{
        {x.scale_a.data(), dp.block_scaling.scale_a, n, x.scales, x.scales, Layout::row_major},
        {x.scale_b.data(), dp.block_scaling.scale_b, x.scales, n, n, Layout::row_major}};
    emulated_gemm(dp, {}, a, b, scales, std::nullopt, md);
  } else {
    emulated_gemm(dp, {}, a, b, std::nullopt, md);
  }
  return std::pow(static_cast<double>(n), 3) / seconds_since(start);
}

constexpr const char* kUsage =
    R"(usage: emulated_gpu_benchmark [--n N] [--exact-n N] [--cpu-n N] [--scaled-n LIST]
                              [--repeats R] [--only LIST]

The GPU backend's emulated engine (GemmEngine::emulated: any datapath, the emulator's bits) on
device 0 against the CPU emulator (emulated_gemm) on every hardware thread of this machine, in
the same run: D = A B with A, B n x n random of each input format and an fp32 accumulator, for the
sm70, sm80 and sm90 mma.sync presets, the sm90 fp16 preset with exact alignment, and Blackwell's
block-scaled tcgen05 datapaths with scales within a binade or two of 1: NVFP4
(tcgen05.mxf4nvf4.block16.ue4m3) and MXFP4 (tcgen05.mxf4.block32), which the group kernel runs,
and MXFP8 (tcgen05.mxf8f6f4.block32, e4m3 x e4m3), which the binary64 kernel runs. The GPU runs
at --n (default 8192; --exact-n, default 2048, for the exact-alignment datapath, whose exact kernel
is far slower; the block-scaled rows at each size of --scaled-n, default 2048,4096,8192), the best
of --repeats (default 2) runs after a warm-up; the CPU at --cpu-n (default 2048), one run.
--only runs the rows named in a comma-separated list of words (sm70-fp16, sm80-fp16, sm80-bf16,
sm80-tf32, sm90-fp16, sm90-bf16, sm90-tf32, sm90-fp16-exact, sm100-nvfp4, sm100-mxfp4,
sm100-mxfp8). Prints a table of emulated multiply-adds per second and GPU / CPU.
)";

int run(const session::Arguments& args) {
  const std::int64_t n = args.integer_or("n", 8192, 1, 65536);
  const std::int64_t exact_n = args.integer_or("exact-n", 2048, 1, 65536);
  const std::int64_t cpu_n = args.integer_or("cpu-n", 2048, 1, 65536);
  const int repeats = static_cast<int>(args.integer_or("repeats", 2, 1, 100));
  const std::string only = args.value_or("only", "");
  std::vector<std::int64_t> scaled_n;
  for (const std::string& item : args.list_or("scaled-n", "2048,4096,8192")) {
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 1 || v > 65536) {
      throw session::UsageError("--scaled-n: '" + item + "' is not a size in [1, 65536]");
    }
    scaled_n.push_back(v);
  }
  std::string why;
  const auto devices = gpu::list_devices(&why);
  if (devices.empty()) throw std::runtime_error("no CUDA device (" + why + ")");
  std::printf("device: %s; CPU emulator on %u hardware threads\n", devices.front().name.c_str(),
              std::max(1u, std::thread::hardware_concurrency()));
  const auto gpu = gpu::make_gpu_backend({.engine = gpu::GemmEngine::emulated});
  struct Case {
    std::string word;   // --only's name of the row
    std::string label;  // the table's
    Datapath datapath;
    std::vector<std::int64_t> gpu_n;
    std::int64_t cpu_n;
  };
  std::vector<Case> cases;
  for (const auto& [arch, input] : {std::pair{"sm70", formats::fp16},
                                    {"sm80", formats::fp16},
                                    {"sm80", formats::bf16},
                                    {"sm80", formats::tf32},
                                    {"sm90", formats::fp16},
                                    {"sm90", formats::bf16},
                                    {"sm90", formats::tf32}}) {
    const std::string name = std::string(arch) + " " + std::string(input.name);
    cases.push_back({std::string(arch) + "-" + std::string(input.name),
                     name + " -> fp32",
                     preset(arch, input, formats::fp32, "mma.sync"),
                     {n},
                     cpu_n});
  }
  Datapath exact = preset("sm90", formats::fp16, formats::fp32, "mma.sync");
  exact.alignment_fraction_bits = std::nullopt;
  cases.push_back({"sm90-fp16-exact",
                   "sm90 fp16 -> fp32, exact alignment",
                   exact,
                   {exact_n},
                   std::min(cpu_n, exact_n / 4)});
  cases.push_back({"sm100-nvfp4", "NVFP4: sm100 tcgen05.mxf4nvf4.block16.ue4m3",
                   preset("sm100", formats::e2m1, formats::fp32, "tcgen05.mxf4nvf4.block16.ue4m3"),
                   scaled_n, cpu_n});
  cases.push_back({"sm100-mxfp4", "MXFP4: sm100 tcgen05.mxf4.block32",
                   preset("sm100", formats::e2m1, formats::fp32, "tcgen05.mxf4.block32"), scaled_n,
                   cpu_n});
  cases.push_back(
      {"sm100-mxfp8", "MXFP8: sm100 tcgen05.mxf8f6f4.block32 e4m3 x e4m3",
       preset("sm100", formats::e4m3, formats::e4m3, formats::fp32, "tcgen05.mxf8f6f4.block32"),
       scaled_n, cpu_n});
  std::printf(
      "\n| datapath | GPU n | GPU (emulated MAC/s) | CPU n | CPU (emulated MAC/s) | GPU / CPU "
      "|\n|---|---|---|---|---|---|\n");
  for (const Case& c : cases) {
    if (!only.empty() && ("," + only + ",").find("," + c.word + ",") == std::string::npos) continue;
    const double on_cpu = cpu_rate(c.datapath, c.cpu_n);
    for (const std::int64_t gpu_n : c.gpu_n) {
      const double on_gpu = gpu_rate(*gpu, c.datapath, gpu_n, repeats);
      std::printf("| %s | %lld | %.3g | %lld | %.3g | %.0fx |\n", c.label.c_str(),
                  static_cast<long long>(gpu_n), on_gpu, static_cast<long long>(c.cpu_n), on_cpu,
                  on_gpu / on_cpu);
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tcemu::session::run_program({"emulated_gpu_benchmark",
                                      kUsage,
                                      {"n", "exact-n", "cpu-n", "scaled-n", "repeats", "only"},
                                      {}},
                                     argc, argv, run);
}
