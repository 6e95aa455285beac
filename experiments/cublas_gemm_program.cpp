// An ordinary cuBLAS program, the unmodified caller of the LD_PRELOAD library's speed goals (issue
// 37, section 3; docs/preload.md): cublasDgemm, cublasZgemm, cublasSgemm and cublasCgemm, C := A B
// at m = n = k = N on inputs (rand - 0.5) exp(phi randn) (every real and imaginary part),
// column major, each timed (the median of R calls after a warm-up, each from a synchronised
// device to a synchronised device) and checked on S sampled elements against the exact product
// (each sampled part's exact sum of exact products in a long accumulator, rounded once to the
// routine's precision): the largest relative error and the parts that are not correctly rounded.
// It knows nothing of tcemu's schemes: run it plainly and under LD_PRELOAD (tcemu's library with
// each TCEMU_PRELOAD_SCHEME, or another library's hook) with the same arguments, and compare the
// CSVs (experiments/compare_preload_runs.py).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/backend/long_accumulator.hpp>
#include <tcemu/session/arguments.hpp>
#include <tcemu/session/output_file.hpp>

#include "accuracy.hpp"
#include "cublas_runs.hpp"

namespace {

using namespace tcemu;

using experiments::check;

// Throws std::runtime_error "WHAT: NAME (REASON)" unless `status` is success.
void check(cublasStatus_t status, const char* what) {
  if (auto f = experiments::failure(status))
    throw std::runtime_error(std::string(what) + ": " + *f);
}

// A routine of the table: its name, whether its elements are complex and whether they are
// binary32.
struct Routine {
  const char* name;
  bool complex;
  bool single;
  int parts() const { return complex ? 2 : 1; }
  std::size_t element_bytes() const { return static_cast<std::size_t>(parts()) * (single ? 4 : 8); }
};

constexpr Routine kRoutines[] = {
    {"dgemm", false, false}, {"zgemm", true, false}, {"sgemm", false, true}, {"cgemm", true, true}};

const Routine& routine_named(const std::string& name) {
  for (const Routine& r : kRoutines) {
    if (name == r.name) return r;
  }
  throw session::UsageError("--routines: '" + name + "' is not dgemm, zgemm, sgemm or cgemm");
}

// Device memory freed on every path.
struct DeviceBuffer {
  void* address = nullptr;
  explicit DeviceBuffer(std::size_t bytes) { check(cudaMalloc(&address, bytes), "cudaMalloc"); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(address); }
};

// C := A B by the routine, A, B and C n x n column major on the device (interleaved real and
// imaginary parts for the complex routines).
void call(cublasHandle_t handle, const Routine& r, int n, const void* a, const void* b, void* c) {
  const cublasOperation_t op = CUBLAS_OP_N;
  if (r.complex && r.single) {
    const cuComplex one{1, 0}, zero{0, 0};
    check(cublasCgemm(handle, op, op, n, n, n, &one, static_cast<const cuComplex*>(a), n,
                      static_cast<const cuComplex*>(b), n, &zero, static_cast<cuComplex*>(c), n),
          "cublasCgemm");
  } else if (r.complex) {
    const cuDoubleComplex one{1, 0}, zero{0, 0};
    check(cublasZgemm(handle, op, op, n, n, n, &one, static_cast<const cuDoubleComplex*>(a), n,
                      static_cast<const cuDoubleComplex*>(b), n, &zero,
                      static_cast<cuDoubleComplex*>(c), n),
          "cublasZgemm");
  } else if (r.single) {
    const float one = 1, zero = 0;
    check(cublasSgemm(handle, op, op, n, n, n, &one, static_cast<const float*>(a), n,
                      static_cast<const float*>(b), n, &zero, static_cast<float*>(c), n),
          "cublasSgemm");
  } else {
    const double one = 1, zero = 0;
    check(cublasDgemm(handle, op, op, n, n, n, &one, static_cast<const double*>(a), n,
                      static_cast<const double*>(b), n, &zero, static_cast<double*>(c), n),
          "cublasDgemm");
  }
}

// The routine's elements of n x n values (parts() per element), as the device holds them: the
// values rounded to binary32 for the single-precision routines.
std::vector<unsigned char> device_bytes(const Routine& r, const std::vector<double>& values) {
  std::vector<unsigned char> bytes(values.size() * (r.single ? 4 : 8));
  if (r.single) {
    std::vector<float> rounded(values.begin(), values.end());
    std::copy_n(reinterpret_cast<const unsigned char*>(rounded.data()), bytes.size(), bytes.data());
  } else {
    std::copy_n(reinterpret_cast<const unsigned char*>(values.data()), bytes.size(), bytes.data());
  }
  return bytes;
}

// Part `part` (0 real, 1 imaginary) of element (i, j) of the exact A B, rounded once to the
// routine's precision (as a double). a and b hold the values the device holds.
double exact_part(const Routine& r, const std::vector<double>& a, const std::vector<double>& b,
                  std::int64_t n, std::int64_t i, std::int64_t j, int part) {
  LongAccumulator sum;
  const auto at = [&](const std::vector<double>& x, std::int64_t row, std::int64_t col, int p) {
    return x[static_cast<std::size_t>((row + col * n) * r.parts() + p)];
  };
  for (std::int64_t p = 0; p < n; ++p) {
    if (!r.complex) {
      sum.add_product(at(a, i, p, 0), at(b, p, j, 0));
    } else if (part == 0) {  // ar br - ai bi
      sum.add_product(at(a, i, p, 0), at(b, p, j, 0));
      sum.add_product(-at(a, i, p, 1), at(b, p, j, 1));
    } else {  // ar bi + ai br
      sum.add_product(at(a, i, p, 0), at(b, p, j, 1));
      sum.add_product(at(a, i, p, 1), at(b, p, j, 0));
    }
  }
  return r.single ? static_cast<double>(sum.round_to_float()) : sum.round_to_double();
}

constexpr const char* kUsage =
    R"(usage: cublas_gemm_program [--out FILE] [--label L] [--routines R,...] [--n N,...]
                           [--phis PHI,...] [--runs R] [--samples S]

An ordinary cuBLAS program on device 0: C := A B by cublasDgemm, cublasZgemm, cublasSgemm and
cublasCgemm at m = n = k = N on inputs (rand - 0.5) exp(phi randn), each timed (median of R calls
after a warm-up, synchronised before and after each) and checked on S sampled elements against the
exact product rounded once to the routine's precision. Run it plainly and under an LD_PRELOAD
library with the same arguments and compare the CSVs (experiments/compare_preload_runs.py).

Options:
  --out FILE        the CSV written (default cublas-gemm.csv)
  --label L         the CSV's label column, naming the run (default plain)
  --routines R,...  any of dgemm, zgemm, sgemm, cgemm (default all four)
  --n N,...         the sizes (default 8192)
  --phis PHI,...    exponent spreads of the inputs (default 0.1,1)
  --runs R          timed calls per routine, size and phi (default 3)
  --samples S       sampled elements checked against the exact product (default 256)
)";

int run(const session::Arguments& args) {
  if (!args.positional().empty()) {
    throw session::UsageError("unexpected word '" + args.positional()[0] + "'");
  }
  std::vector<const Routine*> routines;
  for (const std::string& name : args.list_or("routines", "dgemm,zgemm,sgemm,cgemm")) {
    routines.push_back(&routine_named(name));
  }
  std::vector<int> sizes;
  for (const std::string& n : args.list_or("n", "8192")) {
    sizes.push_back(static_cast<int>(session::integer_in("--n", n, 1, 65536)));
  }
  std::vector<double> phis;
  for (const std::string& phi : args.list_or("phis", "0.1,1")) {
    phis.push_back(session::number_in("--phis", phi));
  }
  const int runs = static_cast<int>(args.integer_or("runs", 3, 1, 10000));
  const std::int64_t samples = args.integer_or("samples", 256, 1, 1'000'000);
  const std::string label = args.value_or("label", "plain");
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    throw std::runtime_error("no CUDA device");
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::fprintf(stderr, "device: %s\n", prop.name);
  session::OutputFile csv(args.value_or("out", "cublas-gemm.csv"));
  csv.stream() << "label,device,routine,n,phi,seconds,tflops,max_relative_error,"
                  "not_correctly_rounded,parts_checked\n";
  cublasHandle_t handle = nullptr;
  check(cublasCreate(&handle), "cublasCreate");
  for (const int n : sizes) {
    for (const double phi : phis) {
      for (const Routine* r : routines) {
        const std::int64_t count = std::int64_t{n} * n * r->parts();
        std::fprintf(stderr, "%s n %d phi %g: inputs...\n", r->name, n, phi);
        std::vector<double> a = experiments::parallel_phi_values(count, phi, 1000),
                            b = experiments::parallel_phi_values(count, phi, 2000);
        if (r->single) {  // the values the device holds
          for (double& v : a) v = static_cast<float>(v);
          for (double& v : b) v = static_cast<float>(v);
        }
        const std::size_t bytes = static_cast<std::size_t>(n) * n * r->element_bytes();
        const DeviceBuffer da(bytes), db(bytes), dc(bytes);
        check(cudaMemcpy(da.address, device_bytes(*r, a).data(), bytes, cudaMemcpyHostToDevice),
              "cudaMemcpy");
        check(cudaMemcpy(db.address, device_bytes(*r, b).data(), bytes, cudaMemcpyHostToDevice),
              "cudaMemcpy");
        std::string note;
        const double median = experiments::median_seconds(
            runs,
            [&]() -> std::optional<std::string> {
              call(handle, *r, n, da.address, db.address, dc.address);
              return std::nullopt;
            },
            note);
        std::vector<unsigned char> c(bytes);
        check(cudaMemcpy(c.data(), dc.address, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
        experiments::Accuracy accuracy;
        std::int64_t checked = 0;
        std::mt19937_64 rng(7);
        std::uniform_int_distribution<std::int64_t> index(0, n - 1);
        for (std::int64_t s = 0; s < samples; ++s) {
          const std::int64_t i = index(rng), j = index(rng);
          for (int part = 0; part < r->parts(); ++part) {
            const double exact = exact_part(*r, a, b, n, i, j, part);
            const std::size_t at = static_cast<std::size_t>((i + j * n) * r->parts() + part);
            double got = 0;
            if (r->single) {
              float x = 0;
              std::copy_n(c.data() + at * 4, 4, reinterpret_cast<unsigned char*>(&x));
              got = x;
            } else {
              std::copy_n(c.data() + at * 8, 8, reinterpret_cast<unsigned char*>(&got));
            }
            const experiments::Accuracy one = experiments::accuracy({got}, {exact});
            accuracy.max_relative_error =
                std::fmax(accuracy.max_relative_error, one.max_relative_error);
            accuracy.not_correctly_rounded += one.not_correctly_rounded;
            ++checked;
          }
        }
        // Real flops: 2 n^3 for the real routines, 8 n^3 for the complex ones.
        const double flops = (r->complex ? 8.0 : 2.0) * n * double(n) * n;
        csv.print("%s,%s,%s,%d,%g,%.6f,%.2f,%.3e,%lld,%lld\n", label.c_str(), prop.name, r->name, n,
                  phi, median, flops / median / 1e12, accuracy.max_relative_error,
                  static_cast<long long>(accuracy.not_correctly_rounded),
                  static_cast<long long>(checked));
        std::fprintf(stderr,
                     "  %s: %.4f s, %.2f TFLOP/s, max rel. error %.3e, not CR %lld of %lld\n",
                     r->name, median, flops / median / 1e12, accuracy.max_relative_error,
                     static_cast<long long>(accuracy.not_correctly_rounded),
                     static_cast<long long>(checked));
      }
    }
  }
  check(cublasDestroy(handle), "cublasDestroy");
  csv.close();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return session::run_program({"cublas_gemm_program",
                               kUsage,
                               {"out", "label", "routines", "n", "phis", "runs", "samples"},
                               {}},
                              argc, argv, run);
}
