// A program that multiplies matrices through cuBLAS only (cublasDgemm, cublasGemmEx with FP64),
// run by CTest under LD_PRELOAD=libtcemu_cublas_preload.so (preload/, docs/preload.md) with the
// TCEMU_PRELOAD_* variables of each test. It checks what the library did with each call:
//   --expect routed        every call was routed (the log says so) and C holds, bit for bit, the
//                          product the same scheme and mode compute on the host through the
//                          library's API (ozaki::Handle on the emulator backend: the schemes give
//                          the same bits on every backend); in CR mode the reference is the
//                          binary64-slice scheme on the cpu64 backend, an independent path to the
//                          correctly rounded product, and the inputs are checked to make a
//                          plain FP64 sum differ from it, so that a call that fell through fails
//   --expect fallthrough=TEXT  every call fell through to cuBLAS, the log giving TEXT as reason
// Exit status 0 when every check holds, 1 otherwise, 77 (skipped) when there is no CUDA device.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <tcemu/emulator/presets.hpp>
#include <tcemu/host/host_backends.hpp>
#include <tcemu/ozaki/handle.hpp>

namespace {

constexpr int kSkipped = 77;
int failures = 0;

void fail(const std::string& what) {
  std::fprintf(stderr, "FAIL: %s\n", what.c_str());
  ++failures;
}

void cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "FAIL: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

void blas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "FAIL: %s returned cuBLAS status %d\n", what, static_cast<int>(s));
    std::exit(1);
  }
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

// One DGEMM: C (ldc x n, column-major) := alpha op(A) op(B) + beta C.
struct Case {
  const char* name;
  char ta, tb;
  int m, n, k, lda, ldb, ldc;
  double alpha, beta;
  enum Entry { dgemm, gemm_ex, gemm_ex_pedantic } entry;
  bool device_scalars;  // CUBLAS_POINTER_MODE_DEVICE
  bool own_stream;      // a stream of the program's, not the default one
};

// Values m 2^e with m uniform in [-1, 1) (53 random bits) and e in [-12, 12]: sums of their
// products cancel and round, so a plain FP64 sum is often not the correctly rounded one.
std::vector<double> random_matrix(std::size_t count, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> exponent(-12, 12);
  std::vector<double> x(count);
  for (double& v : x) {
    const double mantissa =
        static_cast<double>(static_cast<std::int64_t>(rng() >> 10) - (std::int64_t{1} << 53)) /
        std::ldexp(1.0, 53);
    v = std::ldexp(mantissa, exponent(rng));
  }
  return x;
}

cublasOperation_t op(char t) {
  return t == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T;
}

// The scheme and mode the TCEMU_PRELOAD_* variables name, as a host handle on `backend`.
std::unique_ptr<tcemu::ozaki::Handle> reference_handle(tcemu::Backend& backend, bool cr_oracle,
                                                       const std::string& arch) {
  namespace oz = tcemu::ozaki;
  oz::Options options;
  options.mode = *oz::mode_by_name(env("TCEMU_PRELOAD_MODE").empty() ? "dp"
                                                                     : env("TCEMU_PRELOAD_MODE"));
  const std::string scheme = env("TCEMU_PRELOAD_SCHEME");
  const std::string count =
      env(scheme == "dgemm-crt" ? "TCEMU_PRELOAD_MODULI" : "TCEMU_PRELOAD_SPLITS");
  if (!count.empty()) options.splits = std::stoi(count);
  oz::Products products = oz::IntegerProducts{};
  if (cr_oracle) {
    products = oz::Fp64Products{};
  } else if (scheme == "dgemm-crt") {
    products = oz::CrtProducts{};
  } else if (scheme == "dgemm-tc") {
    products = oz::TensorCoreProducts{
        tcemu::preset(arch, tcemu::formats::fp16, tcemu::formats::fp32, "mma.sync")};
  }
  return std::make_unique<oz::Handle>(backend, products, options);
}

std::vector<std::string> log_lines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

int usage(int status) {
  std::printf(
      "usage: preload_cublas_program --expect routed|fallthrough=TEXT\n"
      "Run under LD_PRELOAD=libtcemu_cublas_preload.so with TCEMU_PRELOAD_SCHEME, _MODE,\n"
      "_SPLITS or _MODULI, _MIN_SIZE and TCEMU_PRELOAD_LOG set to a file (docs/preload.md).\n"
      "Calls cublasDgemm and cublasGemmEx (FP64) on several shapes, transposes, leading\n"
      "dimensions, scalars and streams; with 'routed' checks every result bit for bit against\n"
      "the scheme on the host, with 'fallthrough=TEXT' that every call fell through for TEXT.\n"
      "Exit 0: all checks hold; 1: a check failed; 77: no CUDA device (skipped).\n");
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    return usage(0);
  }
  if (argc != 3 || std::strcmp(argv[1], "--expect") != 0) return usage(2);
  const std::string_view expect = argv[2];
  const bool routed = expect == "routed";
  const std::string fallthrough_reason =
      expect.starts_with("fallthrough=") ? std::string(expect.substr(12)) : "";
  if (!routed && fallthrough_reason.empty()) return usage(2);
  const std::string log_path = env("TCEMU_PRELOAD_LOG");
  if (log_path.empty() || log_path == "stderr") {
    std::fprintf(stderr, "FAIL: TCEMU_PRELOAD_LOG must name a file for this program\n");
    return 1;
  }
  std::remove(log_path.c_str());

  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no CUDA device; the LD_PRELOAD library was not exercised\n");
    return kSkipped;
  }
  cudaDeviceProp prop{};
  cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  const std::string arch = "sm" + std::to_string(prop.major) + std::to_string(prop.minor);

  const Case cases[] = {
      {"NN", 'N', 'N', 37, 29, 53, 37, 53, 37, 1.0, 0.0, Case::dgemm, false, false},
      {"TN, lds > rows, alpha -2 beta 0.5, own stream", 'T', 'N', 33, 41, 47, 50, 49, 40, -2.0,
       0.5, Case::dgemm, false, true},
      {"NT, device scalars, C NaN (beta 0)", 'N', 'T', 24, 36, 61, 24, 36, 24, 1.0, 0.0,
       Case::dgemm, true, false},
      {"GemmEx TT 64F", 'T', 'T', 45, 27, 39, 39, 27, 45, 1.0, 0.0, Case::gemm_ex, false, true},
      {"GemmEx NN 64F_PEDANTIC, beta 1", 'N', 'N', 31, 33, 35, 31, 35, 31, 1.0, 1.0,
       Case::gemm_ex_pedantic, false, false},
  };
  const bool cr = env("TCEMU_PRELOAD_MODE") == "cr";
  std::unique_ptr<tcemu::Backend> host =
      cr ? tcemu::host::make_cpu64_backend() : tcemu::host::make_emulator_backend();

  cublasHandle_t handle = nullptr;
  blas(cublasCreate(&handle), "cublasCreate");
  cudaStream_t stream = nullptr;
  cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  std::mt19937_64 rng(20261124);
  int cases_where_plain_sum_differs = 0;
  for (const Case& c : cases) {
    const int a_rows = c.ta == 'N' ? c.m : c.k, a_cols = c.ta == 'N' ? c.k : c.m;
    const int b_rows = c.tb == 'N' ? c.k : c.n, b_cols = c.tb == 'N' ? c.n : c.k;
    (void)a_rows;
    (void)b_rows;
    const std::vector<double> a = random_matrix(std::size_t(c.lda) * a_cols, rng);
    const std::vector<double> b = random_matrix(std::size_t(c.ldb) * b_cols, rng);
    std::vector<double> c0 = random_matrix(std::size_t(c.ldc) * c.n, rng);
    if (c.beta == 0.0) std::fill(c0.begin(), c0.end(), std::nan(""));  // must not be read

    double *da = nullptr, *db = nullptr, *dc = nullptr, *dscalars = nullptr;
    cuda(cudaMalloc(&da, a.size() * sizeof(double)), "cudaMalloc");
    cuda(cudaMalloc(&db, b.size() * sizeof(double)), "cudaMalloc");
    cuda(cudaMalloc(&dc, c0.size() * sizeof(double)), "cudaMalloc");
    cuda(cudaMalloc(&dscalars, 2 * sizeof(double)), "cudaMalloc");
    cuda(cudaMemcpy(da, a.data(), a.size() * sizeof(double), cudaMemcpyHostToDevice), "copy A");
    cuda(cudaMemcpy(db, b.data(), b.size() * sizeof(double), cudaMemcpyHostToDevice), "copy B");
    cuda(cudaMemcpy(dc, c0.data(), c0.size() * sizeof(double), cudaMemcpyHostToDevice), "copy C");
    const double scalars[2] = {c.alpha, c.beta};
    cuda(cudaMemcpy(dscalars, scalars, sizeof scalars, cudaMemcpyHostToDevice), "copy scalars");

    blas(cublasSetStream(handle, c.own_stream ? stream : nullptr), "cublasSetStream");
    blas(cublasSetPointerMode(handle, c.device_scalars ? CUBLAS_POINTER_MODE_DEVICE
                                                       : CUBLAS_POINTER_MODE_HOST),
         "cublasSetPointerMode");
    const double* alpha = c.device_scalars ? dscalars : &c.alpha;
    const double* beta = c.device_scalars ? dscalars + 1 : &c.beta;
    if (c.entry == Case::dgemm) {
      blas(cublasDgemm(handle, op(c.ta), op(c.tb), c.m, c.n, c.k, alpha, da, c.lda, db, c.ldb,
                       beta, dc, c.ldc),
           "cublasDgemm");
    } else {
      blas(cublasGemmEx(handle, op(c.ta), op(c.tb), c.m, c.n, c.k, alpha, da, CUDA_R_64F, c.lda,
                        db, CUDA_R_64F, c.ldb, beta, dc, CUDA_R_64F, c.ldc,
                        c.entry == Case::gemm_ex ? CUBLAS_COMPUTE_64F
                                                 : CUBLAS_COMPUTE_64F_PEDANTIC,
                        CUBLAS_GEMM_DEFAULT),
           "cublasGemmEx");
    }
    std::vector<double> got(c0.size());
    cuda(cudaStreamSynchronize(c.own_stream ? stream : nullptr), "cudaStreamSynchronize");
    cuda(cudaMemcpy(got.data(), dc, got.size() * sizeof(double), cudaMemcpyDeviceToHost),
         "copy C back");
    for (double* p : {da, db, dc, dscalars}) cudaFree(p);
    if (!routed) continue;

    std::vector<double> want = c0;
    reference_handle(*host, cr, arch)
        ->dgemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, a.data(), c.lda, b.data(), c.ldb, c.beta,
                want.data(), c.ldc);
    int wrong = 0, plain_differs = 0;
    for (int j = 0; j < c.n; ++j) {
      for (int i = 0; i < c.m; ++i) {
        const std::size_t at = std::size_t(j) * c.ldc + i;
        if (std::bit_cast<std::uint64_t>(got[at]) != std::bit_cast<std::uint64_t>(want[at])) {
          if (++wrong <= 3) {
            std::fprintf(stderr, "  %s: C(%d,%d) = %a, the host scheme gives %a\n", c.name, i, j,
                         got[at], want[at]);
          }
        }
        double plain = 0;  // the textbook FP64 sum, in k order
        for (int p = 0; p < c.k; ++p) {
          const double x = c.ta == 'N' ? a[std::size_t(p) * c.lda + i] : a[std::size_t(i) * c.lda + p];
          const double y = c.tb == 'N' ? b[std::size_t(j) * c.ldb + p] : b[std::size_t(p) * c.ldb + j];
          plain += x * y;
        }
        if (c.alpha == 1.0 && c.beta == 0.0 && plain != want[at]) ++plain_differs;
      }
    }
    if (plain_differs > 0) ++cases_where_plain_sum_differs;
    if (wrong > 0) {
      fail(std::string(c.name) + ": " + std::to_string(wrong) + " of " +
           std::to_string(c.m * c.n) + " elements differ from the host scheme");
    } else {
      std::printf("ok: %s (%d x %d x %d), bits equal to the host scheme; a plain FP64 sum "
                  "differs in %d elements\n",
                  c.name, c.m, c.n, c.k, plain_differs);
    }
  }
  cudaStreamDestroy(stream);
  cublasDestroy(handle);

  if (routed && cr && cases_where_plain_sum_differs < 3) {
    fail("the inputs should make the plain FP64 sum differ from the correctly rounded one in "
         "every alpha = 1, beta = 0 case; it did in " +
         std::to_string(cases_where_plain_sum_differs));
  }
  const std::vector<std::string> lines = log_lines(log_path);
  if (lines.size() != std::size(cases)) {
    fail("the log " + log_path + " has " + std::to_string(lines.size()) + " lines for " +
         std::to_string(std::size(cases)) + " calls");
  }
  const std::string wanted =
      routed ? "routed to " + env("TCEMU_PRELOAD_SCHEME") : "fell through to cuBLAS (";
  for (const std::string& line : lines) {
    std::printf("log: %s\n", line.c_str());
    if (line.find(wanted) == std::string::npos ||
        (!routed && line.find(fallthrough_reason) == std::string::npos)) {
      fail("log line without '" + wanted + "'" +
           (routed ? "" : " and '" + fallthrough_reason + "'") + ": " + line);
    }
  }
  std::printf("%s\n", failures == 0 ? "PASSED" : "FAILED");
  return failures == 0 ? 0 : 1;
}
