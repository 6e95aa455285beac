// A program that multiplies matrices through cuBLAS only (cublas{D,S,Z,C}gemm, cublasGemmEx with
// FP64 and FP32, real and complex, and the batched forms cublas{D,Z}gemmBatched,
// cublas{D,Z}gemmStridedBatched, cublasGemmBatchedEx, cublasGemmStridedBatchedEx),
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
//                          (single precision: the handle in mode sp for dp; in mode cr the
//                          same oracle, correctly rounded to binary32)
//   --expect fallthrough=TEXT  every call fell through to cuBLAS, the log giving TEXT as reason
// Exit status 0 when every check holds, 1 otherwise, 77 (skipped) when there is no CUDA device.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <type_traits>
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

using Z = std::complex<double>;
using C = std::complex<float>;

// One ?GEMM of precision p (cuBLAS's D, S, Z, C), or a batch of them: C (ldc x n, column-major)
// := alpha op(A) op(B) + beta C. Real precisions take the real parts of alpha and beta.
struct Case {
  const char* name;
  enum Precision { d, s, z, c } p;
  char ta, tb;
  int m, n, k, lda, ldb, ldc;
  Z alpha, beta;
  enum Entry {
    gemm,  // cublas?gemm
    gemm_ex,
    gemm_ex_pedantic,
    gemm_batched,          // cublas?gemmBatched: device arrays of pointers (D, Z)
    gemm_strided_batched,  // the matrices a stride apart (with a gap between them; D, Z)
    gemm_batched_ex,
    gemm_strided_batched_ex,
  } entry;
  bool device_scalars;  // CUBLAS_POINTER_MODE_DEVICE
  bool own_stream;      // a stream of the program's, not the default one
  int batch = 1;
  bool single() const { return p == s || p == c; }
};

// cuBLAS's typed entry points and data types for each element type (complex ones through
// cuComplex.h's types, which have std::complex's layout).
template <class T>
auto cu(T* p) {
  if constexpr (std::is_same_v<std::remove_const_t<T>, Z>) {
    return reinterpret_cast<
        std::conditional_t<std::is_const_v<T>, const cuDoubleComplex, cuDoubleComplex>*>(p);
  } else if constexpr (std::is_same_v<std::remove_const_t<T>, C>) {
    return reinterpret_cast<std::conditional_t<std::is_const_v<T>, const cuComplex, cuComplex>*>(p);
  } else {
    return p;
  }
}
template <class T>
cublasStatus_t typed_gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                          int n, int k, const T* alpha, const T* a, int lda, const T* b, int ldb,
                          const T* beta, T* c, int ldc) {
  if constexpr (std::is_same_v<T, double>) {
    return cublasDgemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else if constexpr (std::is_same_v<T, float>) {
    return cublasSgemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else if constexpr (std::is_same_v<T, Z>) {
    return cublasZgemm(h, ta, tb, m, n, k, cu(alpha), cu(a), lda, cu(b), ldb, cu(beta), cu(c), ldc);
  } else {
    return cublasCgemm(h, ta, tb, m, n, k, cu(alpha), cu(a), lda, cu(b), ldb, cu(beta), cu(c), ldc);
  }
}
template <class T>
cublasStatus_t typed_batched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                             int n, int k, const T* alpha, const T** a, int lda, const T** b,
                             int ldb, const T* beta, T** c, int ldc, int count) {
  if constexpr (std::is_same_v<T, double>) {
    return cublasDgemmBatched(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, count);
  } else {
    static_assert(std::is_same_v<T, Z>, "cuBLAS's batched GEMMs routed: D and Z");
    return cublasZgemmBatched(h, ta, tb, m, n, k, cu(alpha),
                              reinterpret_cast<const cuDoubleComplex**>(a), lda,
                              reinterpret_cast<const cuDoubleComplex**>(b), ldb, cu(beta),
                              reinterpret_cast<cuDoubleComplex**>(c), ldc, count);
  }
}
template <class T>
cublasStatus_t typed_strided(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                             int n, int k, const T* alpha, const T* a, int lda, long long sa,
                             const T* b, int ldb, long long sb, const T* beta, T* c, int ldc,
                             long long sc, int count) {
  if constexpr (std::is_same_v<T, double>) {
    return cublasDgemmStridedBatched(h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c,
                                     ldc, sc, count);
  } else {
    static_assert(std::is_same_v<T, Z>, "cuBLAS's batched GEMMs routed: D and Z");
    return cublasZgemmStridedBatched(h, ta, tb, m, n, k, cu(alpha), cu(a), lda, sa, cu(b), ldb, sb,
                                     cu(beta), cu(c), ldc, sc, count);
  }
}
template <class T>
cudaDataType data_type() {
  if constexpr (std::is_same_v<T, double>) return CUDA_R_64F;
  if constexpr (std::is_same_v<T, float>) return CUDA_R_32F;
  if constexpr (std::is_same_v<T, Z>) return CUDA_C_64F;
  if constexpr (std::is_same_v<T, C>) return CUDA_C_32F;
}
template <class T>
cublasComputeType_t compute_type(bool pedantic) {
  constexpr bool fp64 = std::is_same_v<T, double> || std::is_same_v<T, Z>;
  if (fp64) return pedantic ? CUBLAS_COMPUTE_64F_PEDANTIC : CUBLAS_COMPUTE_64F;
  return pedantic ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F;
}

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
  return t == 'N' ? CUBLAS_OP_N : t == 'T' ? CUBLAS_OP_T : CUBLAS_OP_C;
}

void check(cublasStatus_t s, const char* what) {
  blas(s, what);
}

// Runs case `c` with T elements on `handle` and, with `reference`, checks every C of it (and
// that the gaps between a batch's Cs are untouched). Returns, for fp64 cases, the elements
// where a plain FP64 sum differs (check_routed).
template <class T>
int run(const Case& c, cublasHandle_t handle, cudaStream_t stream, std::mt19937_64& rng,
        tcemu::ozaki::Handle* reference) {
  const int a_cols = c.ta == 'N' ? c.k : c.m;
  const int b_cols = c.tb == 'N' ? c.n : c.k;
  // A batch's matrices lie `stride` elements apart, a gap of 5 between them.
  const std::size_t a_size = std::size_t(c.lda) * a_cols, b_size = std::size_t(c.ldb) * b_cols,
                    c_size = std::size_t(c.ldc) * c.n;
  const std::size_t a_stride = a_size + 5, b_stride = b_size + 5, c_stride = c_size + 5;
  const auto batch = std::size_t(c.batch);
  const std::vector<T> a = random_values<T>(a_stride * batch, rng);
  const std::vector<T> b = random_values<T>(b_stride * batch, rng);
  std::vector<T> c0 = random_values<T>(c_stride * batch, rng);
  if (c.beta == 0.0) std::fill(c0.begin(), c0.end(), scalar<T>({NAN, NAN}));  // must not be read

  T *da = nullptr, *db = nullptr, *dc = nullptr, *dscalars = nullptr;
  cuda(cudaMalloc(&da, a.size() * sizeof(T)), "cudaMalloc");
  cuda(cudaMalloc(&db, b.size() * sizeof(T)), "cudaMalloc");
  cuda(cudaMalloc(&dc, c0.size() * sizeof(T)), "cudaMalloc");
  cuda(cudaMalloc(&dscalars, 2 * sizeof(T)), "cudaMalloc");
  cuda(cudaMemcpy(da, a.data(), a.size() * sizeof(T), cudaMemcpyHostToDevice), "copy A");
  cuda(cudaMemcpy(db, b.data(), b.size() * sizeof(T), cudaMemcpyHostToDevice), "copy B");
  cuda(cudaMemcpy(dc, c0.data(), c0.size() * sizeof(T), cudaMemcpyHostToDevice), "copy C");
  const T scalars[2] = {scalar<T>(c.alpha), scalar<T>(c.beta)};
  cuda(cudaMemcpy(dscalars, scalars, sizeof scalars, cudaMemcpyHostToDevice), "copy scalars");
  const T** a_array = device_pointers<const T>(da, a_stride, c.batch);
  const T** b_array = device_pointers<const T>(db, b_stride, c.batch);
  T** c_array = device_pointers(dc, c_stride, c.batch);

  blas(cublasSetStream(handle, c.own_stream ? stream : nullptr), "cublasSetStream");
  blas(cublasSetPointerMode(
           handle, c.device_scalars ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST),
       "cublasSetPointerMode");
  const T* alpha = c.device_scalars ? dscalars : &scalars[0];
  const T* beta = c.device_scalars ? dscalars + 1 : &scalars[1];
  const cublasOperation_t ta = op(c.ta), tb = op(c.tb);
  const auto sa = static_cast<long long>(a_stride), sb = static_cast<long long>(b_stride),
             sc = static_cast<long long>(c_stride);
  const cudaDataType type = data_type<T>();
  switch (c.entry) {
    case Case::gemm:
      check(typed_gemm(handle, ta, tb, c.m, c.n, c.k, alpha, da, c.lda, db, c.ldb, beta, dc, c.ldc),
            "cublas?gemm");
      break;
    case Case::gemm_ex:
    case Case::gemm_ex_pedantic:
      check(cublasGemmEx(handle, ta, tb, c.m, c.n, c.k, alpha, da, type, c.lda, db, type, c.ldb,
                         beta, dc, type, c.ldc, compute_type<T>(c.entry == Case::gemm_ex_pedantic),
                         CUBLAS_GEMM_DEFAULT),
            "cublasGemmEx");
      break;
    case Case::gemm_batched:
      if constexpr (std::is_same_v<T, double> || std::is_same_v<T, Z>) {
        check(typed_batched(handle, ta, tb, c.m, c.n, c.k, alpha, a_array, c.lda, b_array, c.ldb,
                            beta, c_array, c.ldc, c.batch),
              "cublas?gemmBatched");
      }
      break;
    case Case::gemm_strided_batched:
      if constexpr (std::is_same_v<T, double> || std::is_same_v<T, Z>) {
        check(typed_strided(handle, ta, tb, c.m, c.n, c.k, alpha, da, c.lda, sa, db, c.ldb, sb,
                            beta, dc, c.ldc, sc, c.batch),
              "cublas?gemmStridedBatched");
      }
      break;
    case Case::gemm_batched_ex:
      check(cublasGemmBatchedEx(handle, ta, tb, c.m, c.n, c.k, alpha,
                                reinterpret_cast<const void* const*>(a_array), type, c.lda,
                                reinterpret_cast<const void* const*>(b_array), type, c.ldb, beta,
                                reinterpret_cast<void* const*>(c_array), type, c.ldc, c.batch,
                                compute_type<T>(false), CUBLAS_GEMM_DEFAULT),
            "cublasGemmBatchedEx");
      break;
    case Case::gemm_strided_batched_ex:
      check(cublasGemmStridedBatchedEx(handle, ta, tb, c.m, c.n, c.k, alpha, da, type, c.lda, sa,
                                       db, type, c.ldb, sb, beta, dc, type, c.ldc, sc, c.batch,
                                       compute_type<T>(false), CUBLAS_GEMM_DEFAULT),
            "cublasGemmStridedBatchedEx");
      break;
  }
  std::vector<T> got(c0.size());
  cuda(cudaStreamSynchronize(c.own_stream ? stream : nullptr), "cudaStreamSynchronize");
  cuda(cudaMemcpy(got.data(), dc, got.size() * sizeof(T), cudaMemcpyDeviceToHost), "copy C back");
  for (void* p : {static_cast<void*>(da), static_cast<void*>(db), static_cast<void*>(dc),
                  static_cast<void*>(dscalars), static_cast<void*>(a_array),
                  static_cast<void*>(b_array), static_cast<void*>(c_array)}) {
    cudaFree(p);
  }
  if (reference == nullptr) return 0;

  // Each product of a batch against the reference; the gaps between them are left as they were.
  const auto slice = [](const std::vector<T>& v, std::size_t at, std::size_t size) {
    return std::vector<T>(v.begin() + std::ptrdiff_t(at), v.begin() + std::ptrdiff_t(at + size));
  };
  int plain_differs = 0;
  for (std::size_t i = 0; i < batch; ++i) {
    const std::string name =
        c.batch == 1 ? c.name : std::string(c.name) + ", product " + std::to_string(i);
    const auto ai = slice(a, i * a_stride, a_size), bi = slice(b, i * b_stride, b_size),
               ci = slice(c0, i * c_stride, c_size), gi = slice(got, i * c_stride, c_size);
    if constexpr (std::is_same_v<T, double>) {
      plain_differs += check_routed(name.c_str(), c.ta, c.tb, c.m, c.n, c.k, scalars[0], ai, c.lda,
                                    bi, c.ldb, scalars[1], ci, c.ldc, gi, *reference);
    } else {
      check_routed_bits(name.c_str(), c.ta, c.tb, c.m, c.n, c.k, scalars[0], ai, c.lda, bi, c.ldb,
                        scalars[1], ci, c.ldc, gi, *reference);
    }
    if (i + 1 < batch &&
        !std::equal(got.begin() + std::ptrdiff_t(i * c_stride + c_size),
                    got.begin() + std::ptrdiff_t((i + 1) * c_stride),
                    c0.begin() + std::ptrdiff_t(i * c_stride + c_size),
                    [](const T& x, const T& y) { return std::memcmp(&x, &y, sizeof x) == 0; })) {
      fail(std::string(c.name) + ": the gap after product " + std::to_string(i) + " was written");
    }
  }
  return plain_differs;
}

int usage(int status) {
  std::printf(
      "usage: preload_cublas_program --expect routed|fallthrough=TEXT\n"
      "Run under LD_PRELOAD=libtcemu_cublas_preload.so with TCEMU_PRELOAD_SCHEME, _MODE,\n"
      "_SPLITS or _MODULI, _MIN_SIZE, _WORKSPACE_MIB and TCEMU_PRELOAD_LOG set to a file\n"
      "(docs/preload.md).\n"
      "Calls cublas{D,S,Z,C}gemm, cublasGemmEx (FP64, FP32, real and complex) and the batched\n"
      "forms on several shapes,\n"
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
      {"NN 160 x 150 x 170 (blocked in a 1 MiB workspace)", Case::d, 'N', 'N', 160, 150, 170, 160,
       170, 160, 1.0, 0.0, Case::gemm, false, false},
      {"NN", Case::d, 'N', 'N', 37, 29, 53, 37, 53, 37, 1.0, 0.0, Case::gemm, false, false},
      {"TN, lds > rows, alpha -2 beta 0.5, own stream", Case::d, 'T', 'N', 33, 41, 47, 50, 49, 40,
       -2.0, 0.5, Case::gemm, false, true},
      {"NT, device scalars, C NaN (beta 0)", Case::d, 'N', 'T', 24, 36, 61, 24, 36, 24, 1.0, 0.0,
       Case::gemm, true, false},
      {"GemmEx TT 64F", Case::d, 'T', 'T', 45, 27, 39, 39, 27, 45, 1.0, 0.0, Case::gemm_ex, false,
       true},
      {"GemmEx NN 64F_PEDANTIC, beta 1", Case::d, 'N', 'N', 31, 33, 35, 31, 35, 31, 1.0, 1.0,
       Case::gemm_ex_pedantic, false, false},
      {"DgemmBatched NT x 3, own stream", Case::d, 'N', 'T', 21, 26, 44, 21, 30, 23, 1.0, 0.0,
       Case::gemm_batched, false, true, 3},
      {"DgemmStridedBatched TN x 4, alpha 0.5 beta -1", Case::d, 'T', 'N', 19, 22, 37, 40, 37, 19,
       0.5, -1.0, Case::gemm_strided_batched, false, false, 4},
      {"GemmBatchedEx NN x 2, device scalars", Case::d, 'N', 'N', 25, 17, 52, 25, 52, 25, 1.0, 0.0,
       Case::gemm_batched_ex, true, false, 2},
      {"GemmStridedBatchedEx TT x 3", Case::d, 'T', 'T', 18, 20, 41, 41, 20, 18, 1.0, 0.0,
       Case::gemm_strided_batched_ex, false, true, 3},
      {"Zgemm CN", Case::z, 'C', 'N', 23, 19, 37, 37, 37, 23, 1.0, 0.0, Case::gemm, false, false},
      {"Zgemm NC, complex alpha and beta, device scalars", Case::z, 'N', 'C', 20, 24, 33, 22, 26,
       21, Z{0.5, -1.5}, Z{-0.25, 1.0}, Case::gemm, true, true},
      {"GemmEx C_64F TC", Case::z, 'T', 'C', 17, 21, 29, 29, 21, 17, 1.0, 0.0, Case::gemm_ex, false,
       false},
      {"ZgemmBatched NN x 2", Case::z, 'N', 'N', 14, 16, 27, 14, 27, 14, 1.0, 0.0,
       Case::gemm_batched, false, false, 2},
      {"ZgemmStridedBatched CT x 3, complex alpha", Case::z, 'C', 'T', 13, 15, 22, 22, 15, 13,
       Z{0.0, 2.0}, 0.0, Case::gemm_strided_batched, false, true, 3},
      {"GemmStridedBatchedEx C_64F NN x 2", Case::z, 'N', 'N', 12, 18, 25, 12, 25, 12, 1.0, 0.0,
       Case::gemm_strided_batched_ex, false, false, 2},
      {"Sgemm TN, alpha 1.5 beta -0.25", Case::s, 'T', 'N', 26, 31, 44, 44, 44, 26, 1.5, -0.25,
       Case::gemm, false, false},
      {"GemmEx R_32F NT 32F_PEDANTIC", Case::s, 'N', 'T', 22, 19, 38, 22, 19, 22, 1.0, 0.0,
       Case::gemm_ex_pedantic, false, true},
      {"Cgemm CN, complex alpha and beta", Case::c, 'C', 'N', 15, 19, 26, 26, 26, 15, Z{-0.75, 1.0},
       Z{0.5, 0.5}, Case::gemm, false, false},
      {"GemmBatchedEx C_32F NC x 2", Case::c, 'N', 'C', 16, 13, 30, 16, 13, 16, 1.0, 0.0,
       Case::gemm_batched_ex, false, false, 2},
  };
  const bool cr = env("TCEMU_PRELOAD_MODE") == "cr";
  std::unique_ptr<tcemu::Backend> host =
      cr ? tcemu::host::make_cpu64_backend() : tcemu::host::make_emulator_backend();
  const References references(*host, routed, cr, arch);

  cublasHandle_t handle = nullptr;
  blas(cublasCreate(&handle), "cublasCreate");
  cudaStream_t stream = nullptr;
  cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  std::mt19937_64 rng(20261124);
  int cases_where_plain_sum_differs = 0;
  std::vector<std::vector<std::string>> wanted;
  for (const Case& c : cases) {
    wanted.push_back(references.log("fell through to cuBLAS (", fallthrough_reason));
    tcemu::ozaki::Handle* reference = references.reference(c.single());
    int plain_differs = 0;
    switch (c.p) {
      case Case::d:
        plain_differs = run<double>(c, handle, stream, rng, reference);
        break;
      case Case::s:
        run<float>(c, handle, stream, rng, reference);
        break;
      case Case::z:
        run<Z>(c, handle, stream, rng, reference);
        break;
      case Case::c:
        run<C>(c, handle, stream, rng, reference);
        break;
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
  check_log_lines(log_path, wanted);
  std::printf("%s\n", failures == 0 ? "PASSED" : "FAILED");
  return failures == 0 ? 0 : 1;
}
