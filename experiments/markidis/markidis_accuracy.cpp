// Accuracy against k of the error-corrected SGEMM schemes (Ootomo and Yokota 2022, figure of
// relative residual versus k), on chosen datapaths and input distributions, next to a plain fp32
// CPU SGEMM (and, on the GPU backend, cublasSgemm on the same inputs).
//
//   markidis_accuracy [options]        (kUsage)
//
// Schemes are preset names or variants of them (scheme_variant: halfhalf/out=16, markidis/hi=rz);
// archs are preset names, optionally with the block rounding changed (sm90:rn).
//
// For every distribution and k it draws A (N x k) and B (k x N), computes the reference product
// in binary64 (every product of two floats is exact there; the k-term sums lose at most about
// k 2^-53 relative to the sum of magnitudes, far below the fp32 effects measured) and writes one
// CSV row per scheme and datapath with the relative residual ||C - Cref||_F / ||Cref||_F to
// DIR/NAME (default markidis-accuracy.csv). A scheme that refuses the input (a part overflow, e.g.
// halfhalf on values beyond fp16) gets status "refused" and no residual. Progress goes to stdout.
//
// Distributions (x = U(-1, 1) 2^e, e an integer drawn uniformly):
//   type1  A and B uniform in [-1, 1] (e = 0)
//   type2  A uniform, B with e in [-15, 15]
//   type3  A with e in [-15, 15], B uniform
//   type4  A and B with e in [-15, 15]
//   full   A and B with e in [-60, 60]: every product lies within fp32's normal range
#include <bit>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/backend/backend.hpp>
#if TCEMU_WITH_GPU
#include <tcemu/gpu/cublas_baselines.hpp>
#include <tcemu/gpu/gpu_backend.hpp>
#endif
#include <tcemu/markidis/gemm.hpp>
#include <tcemu/markidis/presets.hpp>
#include <tcemu/reference/relative_residual.hpp>
#include <tcemu/session/arguments.hpp>
#include <tcemu/session/backends.hpp>
#include <tcemu/session/output_file.hpp>

namespace {

using tcemu::reference::relative_residual;

using tcemu::session::UsageError;

// The backends this program can run on: the emulator, the GPU with our fastest kernels (they
// compute the device's own preset: --archs must name it, e.g. sm90 on an H100/H200), and the GPU
// with the products by cuBLAS (the scheme composed from cuBLAS calls; cuBLAS's bits).
std::unique_ptr<tcemu::Backend> make_backend(const std::string& name) {
  namespace session = tcemu::session;
  const bool cublas = name == "gpu-cublas";
  const session::BackendChoice* choice = session::find_backend_choice(cublas ? "gpu" : name);
  if (choice == nullptr || choice->products != session::SliceProducts::tensor_cores) {
    throw UsageError("unknown backend '" + name + "' (emulator, gpu, gpu-cublas)");
  }
  return session::make_backend(
      *choice, {.engine = cublas ? session::Engine::cublas : session::Engine::fastest});
}

// The scheme of a --schemes entry: a preset name, optionally followed by changes that compose a
// variant no paper tried: "/out=N" (every accumulator leaves the Tensor Core every N instructions,
// 0: never) and "/hi=rn" or "/hi=rz" (the rounding of the high part). Example: halfhalf/out=16.
tcemu::markidis::Scheme scheme_variant(const std::string& spec) {
  std::vector<std::string> fields;
  std::stringstream in(spec);
  for (std::string f; std::getline(in, f, '/');) fields.push_back(f);
  tcemu::markidis::Scheme scheme = tcemu::markidis::scheme_by_name(fields.at(0));
  scheme.name = spec;
  for (std::size_t i = 1; i < fields.size(); ++i) {
    const std::string& f = fields[i];
    if (f.rfind("out=", 0) == 0) {
      const auto every =
          tcemu::session::integer_in("scheme '" + spec + "': out=", f.substr(4), 0, INT_MAX);
      for (auto& group : scheme.groups) group.takeout_every_instructions = static_cast<int>(every);
    } else if (f == "hi=rn" || f == "hi=rz") {
      scheme.parts[0].rounding =
          f == "hi=rn" ? tcemu::Rounding::nearest_even : tcemu::Rounding::toward_zero;
    } else {
      throw std::invalid_argument("scheme '" + spec + "': unknown change '" + f +
                                  "' (out=N, hi=rn, hi=rz)");
    }
  }
  tcemu::markidis::validate(scheme);
  return scheme;
}

// The datapath of an --archs entry: a preset name (sm80, sm90, exact-rn, ...), optionally with
// ":rn" or ":rz" to change only the block rounding (the RZ-versus-RN comparison in isolation).
tcemu::Datapath datapath(const tcemu::markidis::Scheme& scheme, const std::string& spec) {
  const auto colon = spec.find(':');
  tcemu::Datapath dp = tcemu::markidis::scheme_datapath(scheme, spec.substr(0, colon));
  if (colon != std::string::npos) {
    const std::string rounding = spec.substr(colon + 1);
    if (rounding != "rn" && rounding != "rz") {
      throw std::invalid_argument("arch '" + spec + "': the block rounding is rn or rz");
    }
    dp.block_rounding =
        rounding == "rn" ? tcemu::Rounding::nearest_even : tcemu::Rounding::toward_zero;
  }
  return dp;
}

// Exponent spread of each operand per distribution.
struct Distribution {
  int a_spread, b_spread;
};
Distribution distribution(const std::string& name) {
  if (name == "type1") return {0, 0};
  if (name == "type2") return {0, 15};
  if (name == "type3") return {15, 0};
  if (name == "type4") return {15, 15};
  if (name == "full") return {60, 60};
  throw UsageError("unknown distribution '" + name + "' (type1, type2, type3, type4, full)");
}

std::vector<float> draw(std::int64_t count, int spread, std::mt19937& rng) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-spread, spread);
  std::vector<float> v(static_cast<std::size_t>(count));
  for (float& x : v) x = std::ldexp(uniform(rng), exponent(rng));
  return v;
}

// Column-major n x n result of A (n x k) B (k x n).
std::vector<double> reference(const std::vector<float>& a, const std::vector<float>& b,
                              std::int64_t n, std::int64_t k) {
  std::vector<double> c(static_cast<std::size_t>(n * n), 0.0);
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t p = 0; p < k; ++p) {
      const double bv = b[j * k + p];
      for (std::int64_t i = 0; i < n; ++i) c[j * n + i] += a[p * n + i] * bv;
    }
  }
  return c;
}

// A CPU's plain SGEMM: each element a float sum in k order, no fused multiply-add.
std::vector<float> float_sgemm(const std::vector<float>& a, const std::vector<float>& b,
                               std::int64_t n, std::int64_t k) {
  std::vector<float> c(static_cast<std::size_t>(n * n));
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = 0; i < n; ++i) {
      float sum = 0.0f;
      for (std::int64_t p = 0; p < k; ++p) {
        const float product = a[p * n + i] * b[j * k + p];
        sum += product;
      }
      c[j * n + i] = sum;
    }
  }
  return c;
}

#if TCEMU_WITH_GPU
// A B by cublasSgemm on the GPU backend's device (column major, A n x k, B k x n).
std::vector<float> cublas_sgemm(tcemu::Backend& gpu, const std::vector<float>& a,
                                const std::vector<float>& b, std::int64_t n, std::int64_t k) {
  const auto on_device = [&](const std::vector<float>& host) {
    tcemu::Buffer buffer = gpu.allocate(host.size() * sizeof(float));
    gpu.copy_in(host.data(), buffer, host.size() * sizeof(float));
    return buffer;
  };
  const tcemu::Buffer da = on_device(a), db = on_device(b);
  tcemu::Buffer dc = gpu.allocate(static_cast<std::size_t>(n * n) * sizeof(float));
  const auto view = [](const tcemu::Buffer& buffer, std::int64_t rows, std::int64_t cols) {
    return tcemu::RealMatrix{&buffer, 0,    tcemu::Real::fp32,          rows,
                             cols,    rows, tcemu::Layout::column_major};
  };
  tcemu::gpu::CublasBaselines(gpu).gemm(tcemu::gpu::Baseline::sgemm, view(da, n, k), view(db, k, n),
                                        view(dc, n, n));
  std::vector<float> c(static_cast<std::size_t>(n * n));
  gpu.copy_out(dc, c.data(), c.size() * sizeof(float));
  return c;
}
#endif

constexpr const char* kUsage = R"(usage: markidis_accuracy [options]

Accuracy against k of the error-corrected SGEMM schemes (Ootomo and Yokota 2022), on chosen
datapaths and input distributions, next to a plain fp32 CPU SGEMM (and, on a GPU backend,
cublasSgemm). For every distribution and k it draws A (N x k) and B (k x N) and writes one CSV row
per scheme and datapath with the relative residual ||C - Cref||_F / ||Cref||_F against a binary64
reference to DIR/NAME; a scheme that refuses the input (a part overflow) gets status "refused".
Progress goes to stdout; experiments/markidis/plot_accuracy.py draws the figures.

Options:
  --backend NAME         emulator (default), gpu (our fastest kernels: --archs must name the
                         device's preset, e.g. sm90), gpu-cublas (products by cuBLAS)
  --size N               rows of A and columns of B (default 32)
  --k K,...              the inner dimensions (default 16,64,256,1024,4096)
  --schemes S,...        preset names or variants: /out=N (take-out every N instructions, 0:
                         never), /hi=rn or /hi=rz (rounding of the high part), e.g.
                         halfhalf/out=16 (default markidis,halfhalf,halfhalf-scaled,tf32tf32,
                         3xtf32,bf16x3,bf16x9)
  --archs A,...          datapath presets, optionally with the block rounding changed: sm90:rn
                         (default exact-rn,exact-rz,sm80,sm90)
  --dists D,...          input distributions, x = U(-1, 1) 2^e with e uniform: type1 (e = 0),
                         type2 (B's e in [-15, 15]), type3 (A's), type4 (both), full (both in
                         [-60, 60]) (default all five)
  --threads T            host threads (default 0: all)
  --seed S               random seed (default 1)
  --out DIR              the folder written, created if missing (default .)
  --file NAME            the CSV's name (default markidis-accuracy.csv)
)";

int run(const tcemu::session::Arguments& args) {
  if (!args.positional().empty()) {
    throw UsageError("unexpected word '" + args.positional()[0] + "'");
  }
  const std::string backend_name = args.value_or("backend", "emulator");
  const std::string out = args.value_or("out", "."),
                    file = args.value_or("file", "markidis-accuracy.csv");
  const std::int64_t n = args.integer_or("size", 32, 1, 100000);
  std::vector<std::int64_t> ks;
  for (const std::string& k : args.list_or("k", "16,64,256,1024,4096")) {
    ks.push_back(tcemu::session::integer_in("--k", k, 1, 100'000'000));
  }
  const std::vector<std::string> schemes =
      args.list_or("schemes", "markidis,halfhalf,halfhalf-scaled,tf32tf32,3xtf32,bf16x3,bf16x9");
  const std::vector<std::string> archs = args.list_or("archs", "exact-rn,exact-rz,sm80,sm90");
  const std::vector<std::string> dists = args.list_or("dists", "type1,type2,type3,type4,full");
  const int threads = static_cast<int>(args.integer_or("threads", 0, 0, 4096));
  const auto seed = static_cast<unsigned>(args.integer_or("seed", 1, 0, UINT_MAX));
  // Every name is checked before anything is computed or written.
  for (const std::string& dist : dists) distribution(dist);
  for (const std::string& scheme : schemes) {
    try {
      for (const std::string& arch : archs) datapath(scheme_variant(scheme), arch);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  const auto backend = make_backend(backend_name);
  std::filesystem::create_directories(out);
  const std::string path = out + "/" + file;
  tcemu::session::OutputFile csv(path);
  csv.print("distribution,k,n,scheme,arch,backend,relative_residual,status,seconds\n");

  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  for (const std::string& dist_name : dists) {
    const Distribution dist = distribution(dist_name);
    for (const std::int64_t k : ks) {
      std::mt19937 rng(seed + static_cast<unsigned>(k));
      const std::vector<float> a = draw(n * k, dist.a_spread, rng);
      const std::vector<float> b = draw(k * n, dist.b_spread, rng);
      const std::vector<double> ref = reference(a, b, n, k);
      csv.print("%s,%lld,%lld,sgemm,fp32-cpu,host,%.6e,ok,0\n", dist_name.c_str(),
                static_cast<long long>(k), static_cast<long long>(n),
                relative_residual(float_sgemm(a, b, n, k), ref));
#if TCEMU_WITH_GPU
      if (tcemu::gpu::is_gpu_backend(*backend)) {
        csv.print("%s,%lld,%lld,cublasSgemm,cublas,%s,%.6e,ok,0\n", dist_name.c_str(),
                  static_cast<long long>(k), static_cast<long long>(n), backend->name().c_str(),
                  relative_residual(cublas_sgemm(*backend, a, b, n, k), ref));
      }
#endif
      for (const std::string& scheme_name : schemes) {
        const tcemu::markidis::Scheme scheme = scheme_variant(scheme_name);
        for (const std::string& arch : archs) {
          const tcemu::Datapath dp = datapath(scheme, arch);
          std::vector<float> c(static_cast<std::size_t>(n * n));
          const double t0 = elapsed();
          std::string status = "ok";
          double residual = NAN;
          try {
            tcemu::markidis::sgemm(*backend, scheme, dp, 'N', 'N', n, n, k, 1.0f, a.data(), n,
                                   b.data(), k, 0.0f, c.data(), n, threads);
            residual = relative_residual(c, ref);
          } catch (const std::invalid_argument&) {
            status = "refused";
          }
          const double seconds = elapsed() - t0;
          csv.print("%s,%lld,%lld,%s,%s,%s,%.6e,%s,%.3f\n", dist_name.c_str(),
                    static_cast<long long>(k), static_cast<long long>(n), scheme_name.c_str(),
                    arch.c_str(), backend->name().c_str(), residual, status.c_str(), seconds);
          csv.stream().flush();
        }
      }
      std::printf("[%7.1f s] %s k = %lld done\n", elapsed(), dist_name.c_str(),
                  static_cast<long long>(k));
      std::fflush(stdout);
    }
  }
  csv.close();
  std::printf("wrote %s\n", path.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tcemu::session::run_program(
      {"markidis_accuracy",
       kUsage,
       {"backend", "size", "k", "schemes", "archs", "dists", "threads", "seed", "file", "out"},
       {}},
      argc, argv, run);
}
