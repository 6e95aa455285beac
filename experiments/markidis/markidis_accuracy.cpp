// Accuracy against k of the error-corrected SGEMM schemes (Ootomo and Yokota 2022, figure of
// relative residual versus k), on chosen datapaths and input distributions, next to a plain fp32
// CPU SGEMM (and, on the GPU backend, cublasSgemm on the same inputs).
//
//   markidis_accuracy [--backend emulator|gpu|gpu-cublas] [--size N] [--k 16,64,...] [--schemes
//   a,b,...]
//                     [--archs exact-rn,sm80,sm90:rn,...] [--dists d1,d2,...] [--threads T]
//                     [--seed S] [--out DIR] [--file NAME]
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
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
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
#include <tcemu/host/host_backends.hpp>
#include <tcemu/markidis/gemm.hpp>
#include <tcemu/markidis/presets.hpp>
#include <tcemu/reference/relative_residual.hpp>

#include "comma_list.hpp"

namespace {

using tcemu::reference::relative_residual;

using tcemu::experiments::comma_list;

// The backends this program can run on: the emulator, the GPU with our fastest kernels (they
// compute the device's own preset: --archs must name it, e.g. sm90 on an H100/H200), and the GPU
// with the products by cuBLAS (the scheme composed from cuBLAS calls; cuBLAS's bits).
std::unique_ptr<tcemu::Backend> make_backend(const std::string& name) {
  if (name == "emulator") return tcemu::host::make_emulator_backend();
#if TCEMU_WITH_GPU
  if (name == "gpu")
    return tcemu::gpu::make_gpu_backend({.engine = tcemu::gpu::GemmEngine::fastest});
  if (name == "gpu-cublas") {
    return tcemu::gpu::make_gpu_backend({.engine = tcemu::gpu::GemmEngine::cublas});
  }
  throw std::invalid_argument("unknown backend '" + name +
                              "' (this build has: emulator, gpu, gpu-cublas)");
#else
  throw std::invalid_argument("unknown backend '" + name + "' (this build has: emulator)");
#endif
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
      for (auto& group : scheme.groups) group.takeout_every_instructions = std::stoi(f.substr(4));
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
  throw std::invalid_argument("unknown distribution '" + name +
                              "' (type1, type2, type3, type4, full)");
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

}  // namespace

int main(int argc, char** argv) try {
  std::string backend_name = "emulator", out = ".", file = "markidis-accuracy.csv";
  std::int64_t n = 32;
  std::vector<std::string> ks = comma_list("16,64,256,1024,4096");
  std::vector<std::string> schemes =
      comma_list("markidis,halfhalf,halfhalf-scaled,tf32tf32,3xtf32,bf16x3,bf16x9");
  std::vector<std::string> archs = comma_list("exact-rn,exact-rz,sm80,sm90");
  std::vector<std::string> dists = comma_list("type1,type2,type3,type4,full");
  int threads = 0;
  unsigned seed = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument("missing value after " + arg);
    const std::string value = argv[++i];
    if (arg == "--backend")
      backend_name = value;
    else if (arg == "--size")
      n = std::stoll(value);
    else if (arg == "--k")
      ks = comma_list(value);
    else if (arg == "--schemes")
      schemes = comma_list(value);
    else if (arg == "--archs")
      archs = comma_list(value);
    else if (arg == "--dists")
      dists = comma_list(value);
    else if (arg == "--threads")
      threads = std::stoi(value);
    else if (arg == "--seed")
      seed = static_cast<unsigned>(std::stoul(value));
    else if (arg == "--file")
      file = value;
    else if (arg == "--out")
      out = value;
    else
      throw std::invalid_argument("unknown option " + arg);
  }
  const auto backend = make_backend(backend_name);
  std::filesystem::create_directories(out);
  const std::string path = out + "/" + file;
  FILE* csv = std::fopen(path.c_str(), "w");
  if (!csv) throw std::runtime_error("cannot write " + path);
  std::fprintf(csv, "distribution,k,n,scheme,arch,backend,relative_residual,status,seconds\n");

  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  for (const std::string& dist_name : dists) {
    const Distribution dist = distribution(dist_name);
    for (const std::string& k_text : ks) {
      const std::int64_t k = std::stoll(k_text);
      std::mt19937 rng(seed + static_cast<unsigned>(k));
      const std::vector<float> a = draw(n * k, dist.a_spread, rng);
      const std::vector<float> b = draw(k * n, dist.b_spread, rng);
      const std::vector<double> ref = reference(a, b, n, k);
      std::fprintf(csv, "%s,%lld,%lld,sgemm,fp32-cpu,host,%.6e,ok,0\n", dist_name.c_str(),
                   static_cast<long long>(k), static_cast<long long>(n),
                   relative_residual(float_sgemm(a, b, n, k), ref));
#if TCEMU_WITH_GPU
      if (tcemu::gpu::is_gpu_backend(*backend)) {
        std::fprintf(csv, "%s,%lld,%lld,cublasSgemm,cublas,%s,%.6e,ok,0\n", dist_name.c_str(),
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
          std::fprintf(csv, "%s,%lld,%lld,%s,%s,%s,%.6e,%s,%.3f\n", dist_name.c_str(),
                       static_cast<long long>(k), static_cast<long long>(n), scheme_name.c_str(),
                       arch.c_str(), backend->name().c_str(), residual, status.c_str(), seconds);
          std::fflush(csv);
        }
      }
      std::printf("[%7.1f s] %s k = %lld done\n", elapsed(), dist_name.c_str(),
                  static_cast<long long>(k));
      std::fflush(stdout);
    }
  }
  std::fclose(csv);
  std::printf("wrote %s\n", path.c_str());
} catch (const std::exception& e) {
  std::fprintf(stderr, "markidis_accuracy: %s\n", e.what());
  return 2;
}
