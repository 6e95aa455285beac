#include <cublas_v2.h>

#include <stdexcept>
#include <string>

#include <tcemu/gpu/cublas_baselines.hpp>
#include <tcemu/gpu/gpu_backend.hpp>

#include "gemm/cublas_gemm.hpp"

namespace tcemu::gpu {
const char* name_of(Baseline baseline) {
  switch (baseline) {
    case Baseline::sgemm:
      return "cublasSgemm";
    case Baseline::sgemm_fast_tf32:
      return "cublasGemmEx FAST_TF32";
    default:
      return "cublasDgemm";
  }
}

struct CublasBaselines::Handle {
  cublasHandle_t handle = nullptr;
};

CublasBaselines::CublasBaselines(const Backend& gpu) : gpu_(gpu), handle_(new Handle) {
  if (!is_gpu_backend(gpu)) {
    throw std::invalid_argument("CublasBaselines: " + gpu.name() + " is not a GPU backend");
  }
  TCEMU_CUBLAS_CHECK(cublasCreate(&handle_->handle));
  TCEMU_CUBLAS_CHECK(cublasSetMathMode(handle_->handle, CUBLAS_DEFAULT_MATH));
}

CublasBaselines::~CublasBaselines() {
  cublasDestroy(handle_->handle);
}

void CublasBaselines::gemm(Baseline baseline, const RealMatrix& a, const RealMatrix& b,
                           const RealMatrix& d) {
  gpu_.check(a, "A");
  gpu_.check(b, "B");
  gpu_.check(d, "D");
  const Real type = baseline == Baseline::dgemm ? Real::fp64 : Real::fp32;
  const std::string what = std::string(name_of(baseline)) + ": ";
  if (a.format != type || b.format != type || d.format != type) {
    throw std::invalid_argument(what + "A, B and D must be " +
                                (type == Real::fp64 ? "fp64" : "fp32"));
  }
  if (a.cols != b.rows || d.rows != a.rows || d.cols != b.cols) {
    throw std::invalid_argument(what + "A is " + std::to_string(a.rows) + " x " +
                                std::to_string(a.cols) + ", B " + std::to_string(b.rows) + " x " +
                                std::to_string(b.cols) + ", D " + std::to_string(d.rows) + " x " +
                                std::to_string(d.cols));
  }
  if (d.rows == 0 || d.cols == 0) return;
  const detail::DeviceReal dd = detail::device_real(d);
  const detail::ColumnMajorProduct p =
      detail::column_major_product(detail::device_real(a), detail::device_real(b), dd);
  const int ld = static_cast<int>(dd.ld);
  cublasHandle_t h = handle_->handle;
  if (baseline == Baseline::dgemm) {
    const double one = 1.0, zero = 0.0;
    TCEMU_CUBLAS_CHECK(cublasDgemm(h, p.first.op, p.second.op, p.rows, p.cols, p.k, &one,
                                   static_cast<const double*>(p.first.data), p.first.ld,
                                   static_cast<const double*>(p.second.data), p.second.ld, &zero,
                                   reinterpret_cast<double*>(dd.data), ld));
  } else if (baseline == Baseline::sgemm) {
    const float one = 1.0f, zero = 0.0f;
    TCEMU_CUBLAS_CHECK(cublasSgemm(h, p.first.op, p.second.op, p.rows, p.cols, p.k, &one,
                                   static_cast<const float*>(p.first.data), p.first.ld,
                                   static_cast<const float*>(p.second.data), p.second.ld, &zero,
                                   reinterpret_cast<float*>(dd.data), ld));
  } else {
    const float one = 1.0f, zero = 0.0f;
    TCEMU_CUBLAS_CHECK(cublasGemmEx(h, p.first.op, p.second.op, p.rows, p.cols, p.k, &one,
                                    p.first.data, CUDA_R_32F, p.first.ld, p.second.data, CUDA_R_32F,
                                    p.second.ld, &zero, dd.data, CUDA_R_32F, ld,
                                    CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
  }
}

}  // namespace tcemu::gpu
