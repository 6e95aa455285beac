// The caller's floating-point state through libtcemu_cublas_preload.so (caller_state_checks.hpp):
// cublasDgemm, C := A B of 64 x 64 x 64, cublasDgemmStridedBatched, the batch {A B, (-A) B}, and
// cublasZgemm (each part), under each rounding mode of the calling host thread, FTZ and DAZ, and
// from several threads (each its own cuBLAS handle), against the bits of the products correctly
// rounded in the caller's direction on the device. Run by CTest with TCEMU_PRELOAD_SCHEME and
// TCEMU_PRELOAD_MODE set. Exit status 0 when every check holds, 1 otherwise, 77 (skipped) when
// there is no CUDA device.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "caller_state_checks.hpp"

namespace {

void cuda(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  std::printf("FAILED: %s: %s\n", what, cudaGetErrorString(status));
  std::exit(1);
}

void blas(cublasStatus_t status, const char* what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  std::printf("FAILED: %s: status %d\n", what, static_cast<int>(status));
  std::exit(1);
}

}  // namespace

int main() {
  using namespace tcemu_preload_test;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no CUDA device; the LD_PRELOAD library was not exercised\n");
    return 77;
  }
  clear_log();
  constexpr int n = 64;
  std::vector<double> a, b;
  caller_state_inputs(a, b, n);
  // The batch's operands: A and -A one after the other, B twice (the products are then each
  // other's negation, so a direction that rounds both the same way gives different magnitudes).
  std::vector<double> a2(a), b2(b);
  for (const double v : a) a2.push_back(-v);
  b2.insert(b2.end(), b.begin(), b.end());
  // The complex product's operands: A - i A / 4 and B - i B / 4, interleaved (the subnormal row
  // and column stay whole rows and columns of the real form).
  std::vector<double> za, zb;
  for (const double v : a) za.insert(za.end(), {v, -0.25 * v});
  for (const double v : b) zb.insert(zb.end(), {v, -0.25 * v});
  // C := A B by cublasDgemm (batch 1), the batch by cublasDgemmStridedBatched (batch 2), or the
  // complex product by cublasZgemm (batch 0).
  const auto product = [&](const std::vector<double>& as, const std::vector<double>& bs,
                           int batch) {
    const std::size_t bytes = as.size() * sizeof(double);
    std::vector<double> c(as.size(), 0.25);
    double *da = nullptr, *db = nullptr, *dc = nullptr;
    cuda(cudaMalloc(&da, bytes), "cudaMalloc");
    cuda(cudaMalloc(&db, bytes), "cudaMalloc");
    cuda(cudaMalloc(&dc, bytes), "cudaMalloc");
    cuda(cudaMemcpy(da, as.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    cuda(cudaMemcpy(db, bs.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    cuda(cudaMemcpy(dc, c.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    cublasHandle_t handle = nullptr;
    blas(cublasCreate(&handle), "cublasCreate");
    const double alpha = 1, beta = 0;
    // Not transposed, as the BLAS program calls dgemm_: B's column of subnormals then lies across
    // the columns of the product, which cr's moduli hold; transposed it lies along k, and cr needs
    // more moduli than the scheme has (the call falls through, by design).
    if (batch == 0) {
      const cuDoubleComplex one{1, 0}, zero{0, 0};
      blas(cublasZgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one,
                       reinterpret_cast<const cuDoubleComplex*>(da), n,
                       reinterpret_cast<const cuDoubleComplex*>(db), n, &zero,
                       reinterpret_cast<cuDoubleComplex*>(dc), n),
           "cublasZgemm");
    } else if (batch == 1) {
      blas(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, da, n, db, n, &beta, dc,
                       n),
           "cublasDgemm");
    } else {
      const long long stride = static_cast<long long>(n) * n;
      blas(cublasDgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, da, n,
                                     stride, db, n, stride, &beta, dc, n, stride, batch),
           "cublasDgemmStridedBatched");
    }
    cuda(cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    blas(cublasDestroy(handle), "cublasDestroy");
    cuda(cudaFree(da), "cudaFree");
    cuda(cudaFree(db), "cudaFree");
    cuda(cudaFree(dc), "cudaFree");
    return c;
  };
  const int failures = check_caller_states<double>([&] { return product(a, b, 1); }) +
                       check_caller_states<double>([&] { return product(a2, b2, 2); }) +
                       check_caller_states<double>([&] { return product(za, zb, 0); });
  return failures + calls_fell_through() == 0 ? 0 : 1;
}
