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

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <tcemu/host/host_backends.hpp>

#include "preload_checks.hpp"

namespace {

using namespace tcemu_preload_test;

constexpr int kSkipped = 77;
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

cublasOperation_t op(char t) {
  return t == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T;
}

int usage(int status) {
  std::printf(
      "usage: preload_cublas_program --expect routed|fallthrough=TEXT\n"
      "Run under LD_PRELOAD=libtcemu_cublas_preload.so with TCEMU_PRELOAD_SCHEME, _MODE,\n"
      "_SPLITS or _MODULI, _MIN_SIZE, _WORKSPACE_MIB and TCEMU_PRELOAD_LOG set to a file\n"
      "(docs/preload.md).\n"
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
      {"NN 160 x 150 x 170 (blocked in a 1 MiB workspace)", 'N', 'N', 160, 150, 170, 160, 170, 160,
       1.0, 0.0, Case::dgemm, false, false},
      {"NN", 'N', 'N', 37, 29, 53, 37, 53, 37, 1.0, 0.0, Case::dgemm, false, false},
      {"TN, lds > rows, alpha -2 beta 0.5, own stream", 'T', 'N', 33, 41, 47, 50, 49, 40, -2.0, 0.5,
       Case::dgemm, false, true},
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
    const int a_cols = c.ta == 'N' ? c.k : c.m;
    const int b_cols = c.tb == 'N' ? c.n : c.k;
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
    blas(cublasSetPointerMode(
             handle, c.device_scalars ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST),
         "cublasSetPointerMode");
    const double* alpha = c.device_scalars ? dscalars : &c.alpha;
    const double* beta = c.device_scalars ? dscalars + 1 : &c.beta;
    if (c.entry == Case::dgemm) {
      blas(cublasDgemm(handle, op(c.ta), op(c.tb), c.m, c.n, c.k, alpha, da, c.lda, db, c.ldb, beta,
                       dc, c.ldc),
           "cublasDgemm");
    } else {
      blas(cublasGemmEx(handle, op(c.ta), op(c.tb), c.m, c.n, c.k, alpha, da, CUDA_R_64F, c.lda, db,
                        CUDA_R_64F, c.ldb, beta, dc, CUDA_R_64F, c.ldc,
                        c.entry == Case::gemm_ex ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_64F_PEDANTIC,
                        CUBLAS_GEMM_DEFAULT),
           "cublasGemmEx");
    }
    std::vector<double> got(c0.size());
    cuda(cudaStreamSynchronize(c.own_stream ? stream : nullptr), "cudaStreamSynchronize");
    cuda(cudaMemcpy(got.data(), dc, got.size() * sizeof(double), cudaMemcpyDeviceToHost),
         "copy C back");
    for (double* p : {da, db, dc, dscalars}) cudaFree(p);
    if (!routed) continue;

    const int plain_differs =
        check_routed(c.name, c.ta, c.tb, c.m, c.n, c.k, c.alpha, a, c.lda, b, c.ldb, c.beta, c0,
                     c.ldc, got, *reference_handle(*host, cr, arch));
    if (plain_differs > 0) ++cases_where_plain_sum_differs;
  }
  cudaStreamDestroy(stream);
  cublasDestroy(handle);

  if (routed && cr && cases_where_plain_sum_differs < 3) {
    fail(
        "the inputs should make the plain FP64 sum differ from the correctly rounded one in "
        "every alpha = 1, beta = 0 case; it did in " +
        std::to_string(cases_where_plain_sum_differs));
  }
  check_log(log_path, std::size(cases), routed, "fell through to cuBLAS (", fallthrough_reason);
  std::printf("%s\n", failures == 0 ? "PASSED" : "FAILED");
  return failures == 0 ? 0 : 1;
}
