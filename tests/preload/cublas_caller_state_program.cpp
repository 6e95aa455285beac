// The caller's floating-point state through libtcemu_cublas_preload.so (caller_state_checks.hpp):
// cublasDgemm, C := A B of 64 x 64 x 64, under each rounding mode of the calling host thread,
// FTZ and DAZ, and from several threads (each its own cuBLAS handle), against the bits of the
// product correctly rounded in the caller's direction on the device. Run by CTest with
// TCEMU_PRELOAD_SCHEME and TCEMU_PRELOAD_MODE set. Exit status 0 when every check holds, 1
// otherwise, 77 (skipped) when there is no CUDA device.
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
  const std::size_t bytes = a.size() * sizeof(double);
  const int failures = check_caller_states([&] {
    std::vector<double> c(a.size(), 0.25);
    double *da = nullptr, *db = nullptr, *dc = nullptr;
    cuda(cudaMalloc(&da, bytes), "cudaMalloc");
    cuda(cudaMalloc(&db, bytes), "cudaMalloc");
    cuda(cudaMalloc(&dc, bytes), "cudaMalloc");
    cuda(cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    cuda(cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    cuda(cudaMemcpy(dc, c.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    cublasHandle_t handle = nullptr;
    blas(cublasCreate(&handle), "cublasCreate");
    const double alpha = 1, beta = 0;
    // Not transposed, as the BLAS program calls dgemm_: B's column of subnormals then lies across
    // the columns of the product, which cr's moduli hold; transposed it lies along k, and cr needs
    // more moduli than the scheme has (the call falls through, by design).
    blas(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, da, n, db, n, &beta, dc, n),
         "cublasDgemm");
    cuda(cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    blas(cublasDestroy(handle), "cublasDestroy");
    cuda(cudaFree(da), "cudaFree");
    cuda(cudaFree(db), "cudaFree");
    cuda(cudaFree(dc), "cudaFree");
    return c;
  });
  return failures + calls_fell_through() == 0 ? 0 : 1;
}
