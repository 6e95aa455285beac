// A program that multiplies matrices through cuBLAS only (cublasDgemm, cublasGemmEx with FP64 and
// the batched forms cublasDgemmBatched, cublasDgemmStridedBatched, cublasGemmBatchedEx,
// cublasGemmStridedBatchedEx),
// run by CTest under LD_PRELOAD=libtcemu_cublas_preload.so (preload/, docs/preload.md) with the
// TCEMU_PRELOAD_* variables of each test. It checks what the library did with each call:
//   --expect routed        every call was routed (the log says so) and C (each C of a batch) holds,
//                          bit for bit, the
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

#include <algorithm>
#include <cmath>
#include <cstddef>
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

// One DGEMM, or a batch of them: C (ldc x n, column-major) := alpha op(A) op(B) + beta C.
struct Case {
  const char* name;
  char ta, tb;
  int m, n, k, lda, ldb, ldc;
  double alpha, beta;
  enum Entry {
    dgemm,
    gemm_ex,
    gemm_ex_pedantic,
    dgemm_batched,          // device arrays of pointers
    dgemm_strided_batched,  // the matrices a stride apart (with a gap between them)
    gemm_batched_ex,
    gemm_strided_batched_ex,
  } entry;
  bool device_scalars;  // CUBLAS_POINTER_MODE_DEVICE
  bool own_stream;      // a stream of the program's, not the default one
  int batch = 1;
};

// A device array holding the addresses base, base + stride, ... (count of them).
template <class T>
T** device_pointers(T* base, std::size_t stride, int count) {
  std::vector<T*> host(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) host[std::size_t(i)] = base + stride * std::size_t(i);
  T** device = nullptr;
  cuda(cudaMalloc(&device, host.size() * sizeof(T*)), "cudaMalloc");
  cuda(cudaMemcpy(device, host.data(), host.size() * sizeof(T*), cudaMemcpyHostToDevice),
       "copy the pointer array");
  return device;
}

cublasOperation_t op(char t) {
  return t == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T;
}

int usage(int status) {
  std::printf(
      "usage: preload_cublas_program --expect routed|fallthrough=TEXT\n"
      "Run under LD_PRELOAD=libtcemu_cublas_preload.so with TCEMU_PRELOAD_SCHEME, _MODE,\n"
      "_SPLITS or _MODULI, _MIN_SIZE, _WORKSPACE_MIB and TCEMU_PRELOAD_LOG set to a file\n"
      "(docs/preload.md).\n"
      "Calls cublasDgemm, cublasGemmEx (FP64) and their batched forms on several shapes,\n"
      "transposes, leading dimensions, scalars and streams; with 'routed' checks every result\n"
      "bit for bit against\n"
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
      {"DgemmBatched NT x 3, own stream", 'N', 'T', 21, 26, 44, 21, 30, 23, 1.0, 0.0,
       Case::dgemm_batched, false, true, 3},
      {"DgemmStridedBatched TN x 4, alpha 0.5 beta -1", 'T', 'N', 19, 22, 37, 40, 37, 19, 0.5, -1.0,
       Case::dgemm_strided_batched, false, false, 4},
      {"GemmBatchedEx NN x 2, device scalars", 'N', 'N', 25, 17, 52, 25, 52, 25, 1.0, 0.0,
       Case::gemm_batched_ex, true, false, 2},
      {"GemmStridedBatchedEx TT x 3", 'T', 'T', 18, 20, 41, 41, 20, 18, 1.0, 0.0,
       Case::gemm_strided_batched_ex, false, true, 3},
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
    // A batch's matrices lie `stride` elements apart, a gap of 5 between them.
    const std::size_t a_size = std::size_t(c.lda) * a_cols, b_size = std::size_t(c.ldb) * b_cols,
                      c_size = std::size_t(c.ldc) * c.n;
    const std::size_t a_stride = a_size + 5, b_stride = b_size + 5, c_stride = c_size + 5;
    const auto batch = std::size_t(c.batch);
    const std::vector<double> a = random_matrix(a_stride * batch, rng);
    const std::vector<double> b = random_matrix(b_stride * batch, rng);
    std::vector<double> c0 = random_matrix(c_stride * batch, rng);
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
    const double** a_array = device_pointers<const double>(da, a_stride, c.batch);
    const double** b_array = device_pointers<const double>(db, b_stride, c.batch);
    double** c_array = device_pointers(dc, c_stride, c.batch);

    blas(cublasSetStream(handle, c.own_stream ? stream : nullptr), "cublasSetStream");
    blas(cublasSetPointerMode(
             handle, c.device_scalars ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST),
         "cublasSetPointerMode");
    const double* alpha = c.device_scalars ? dscalars : &c.alpha;
    const double* beta = c.device_scalars ? dscalars + 1 : &c.beta;
    const cublasOperation_t ta = op(c.ta), tb = op(c.tb);
    const auto sa = static_cast<long long>(a_stride), sb = static_cast<long long>(b_stride),
               sc = static_cast<long long>(c_stride);
    switch (c.entry) {
      case Case::dgemm:
        blas(cublasDgemm(handle, ta, tb, c.m, c.n, c.k, alpha, da, c.lda, db, c.ldb, beta, dc,
                         c.ldc),
             "cublasDgemm");
        break;
      case Case::gemm_ex:
      case Case::gemm_ex_pedantic:
        blas(cublasGemmEx(
                 handle, ta, tb, c.m, c.n, c.k, alpha, da, CUDA_R_64F, c.lda, db, CUDA_R_64F, c.ldb,
                 beta, dc, CUDA_R_64F, c.ldc,
                 c.entry == Case::gemm_ex ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_64F_PEDANTIC,
                 CUBLAS_GEMM_DEFAULT),
             "cublasGemmEx");
        break;
      case Case::dgemm_batched:
        blas(cublasDgemmBatched(handle, ta, tb, c.m, c.n, c.k, alpha, a_array, c.lda, b_array,
                                c.ldb, beta, c_array, c.ldc, c.batch),
             "cublasDgemmBatched");
        break;
      case Case::dgemm_strided_batched:
        blas(cublasDgemmStridedBatched(handle, ta, tb, c.m, c.n, c.k, alpha, da, c.lda, sa, db,
                                       c.ldb, sb, beta, dc, c.ldc, sc, c.batch),
             "cublasDgemmStridedBatched");
        break;
      case Case::gemm_batched_ex:
        blas(cublasGemmBatchedEx(handle, ta, tb, c.m, c.n, c.k, alpha,
                                 reinterpret_cast<const void* const*>(a_array), CUDA_R_64F, c.lda,
                                 reinterpret_cast<const void* const*>(b_array), CUDA_R_64F, c.ldb,
                                 beta, reinterpret_cast<void* const*>(c_array), CUDA_R_64F, c.ldc,
                                 c.batch, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT),
             "cublasGemmBatchedEx");
        break;
      case Case::gemm_strided_batched_ex:
        blas(cublasGemmStridedBatchedEx(handle, ta, tb, c.m, c.n, c.k, alpha, da, CUDA_R_64F, c.lda,
                                        sa, db, CUDA_R_64F, c.ldb, sb, beta, dc, CUDA_R_64F, c.ldc,
                                        sc, c.batch, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT),
             "cublasGemmStridedBatchedEx");
        break;
    }
    std::vector<double> got(c0.size());
    cuda(cudaStreamSynchronize(c.own_stream ? stream : nullptr), "cudaStreamSynchronize");
    cuda(cudaMemcpy(got.data(), dc, got.size() * sizeof(double), cudaMemcpyDeviceToHost),
         "copy C back");
    for (void* p : {static_cast<void*>(da), static_cast<void*>(db), static_cast<void*>(dc),
                    static_cast<void*>(dscalars), static_cast<void*>(a_array),
                    static_cast<void*>(b_array), static_cast<void*>(c_array)}) {
      cudaFree(p);
    }
    if (!routed) continue;

    // Each product of a batch against the reference; the gaps between them are left as they were.
    const auto slice = [](const std::vector<double>& v, std::size_t at, std::size_t size) {
      return std::vector<double>(v.begin() + std::ptrdiff_t(at),
                                 v.begin() + std::ptrdiff_t(at + size));
    };
    int plain_differs = 0;
    for (std::size_t i = 0; i < batch; ++i) {
      const std::string name =
          c.batch == 1 ? c.name : std::string(c.name) + ", product " + std::to_string(i);
      plain_differs += check_routed(
          name.c_str(), c.ta, c.tb, c.m, c.n, c.k, c.alpha, slice(a, i * a_stride, a_size), c.lda,
          slice(b, i * b_stride, b_size), c.ldb, c.beta, slice(c0, i * c_stride, c_size), c.ldc,
          slice(got, i * c_stride, c_size), *reference_handle(*host, cr, arch));
      if (i + 1 < batch &&
          !std::equal(got.begin() + std::ptrdiff_t(i * c_stride + c_size),
                      got.begin() + std::ptrdiff_t((i + 1) * c_stride),
                      c0.begin() + std::ptrdiff_t(i * c_stride + c_size),
                      [](double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0; })) {
        fail(std::string(c.name) + ": the gap after product " + std::to_string(i) + " was written");
      }
    }
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
