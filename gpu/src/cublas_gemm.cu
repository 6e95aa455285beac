#include "cublas_gemm.hpp"
#include "matrix_kernels.hpp"

namespace tcemu::gpu::detail {
namespace {

// A matrix as cuBLAS's column-major operand of a product: the data, its leading dimension and
// whether cuBLAS must transpose it to get the matrix we mean.
struct ColumnMajorOperand {
  const void* data;
  int ld;
  cublasOperation_t op;
};

// x itself (transposed = false) or x^T, as a column-major cuBLAS operand.
template <class Matrix>
ColumnMajorOperand operand(const Matrix& x, bool transposed) {
  const bool stored_as_wanted = x.row_major == transposed;  // x^T row major is x column major
  return {x.data, static_cast<int>(x.ld), stored_as_wanted ? CUBLAS_OP_N : CUBLAS_OP_T};
}

// The operands of D = A B for cuBLAS, which writes a column-major D: a row-major D is D^T
// column major, D^T = B^T A^T.
struct ColumnMajorProduct {
  ColumnMajorOperand x, y;
  int rows, cols, k;
};

template <class Matrix>
ColumnMajorProduct column_major_product(const Matrix& a, const Matrix& b, const Matrix& d) {
  const bool transposed = d.row_major;
  const Matrix& first = transposed ? b : a;
  const Matrix& second = transposed ? a : b;
  return {operand(first, transposed), operand(second, transposed),
          static_cast<int>(transposed ? d.cols : d.rows),
          static_cast<int>(transposed ? d.rows : d.cols), static_cast<int>(a.cols)};
}

}  // namespace

void check_cublas_gemm(const Datapath& datapath, const GemmOptions& options) {
  const bool formats_offered = datapath.accumulator == formats::fp32 &&
                               (datapath.input == formats::fp16 ||
                                datapath.input == formats::bf16 || datapath.input == formats::tf32);
  if (!formats_offered) {
    throw std::invalid_argument(
        "gpu (cublas): cublasGemmEx takes fp16, bf16 or tf32 inputs with "
        "an fp32 accumulator, not " +
        std::string(datapath.input.name) + " -> " + std::string(datapath.accumulator.name));
  }
  if (options.c_input != CInput::epilogue) {
    throw std::invalid_argument(
        "gpu (cublas): C can only enter through the epilogue (alpha A B + beta C)");
  }
  if (options.takeout_every_k != 0) {
    throw std::invalid_argument(
        "gpu (cublas): cuBLAS cannot take results out of the tensor "
        "core; use the mma_sync engine for takeout_every_k");
  }
}

void cublas_gemm(cublasHandle_t handle, const Datapath& datapath, const GemmOptions& options,
                 const DeviceMatrix& a, const DeviceMatrix& b, const std::optional<DeviceMatrix>& c,
                 const DeviceMatrix& d) {
  const bool reads_c = options.beta != 0.0f;
  if (reads_c && c->data != d.data) copy_matrix(*c, d);
  if (reads_c && c->data == d.data && (c->ld != d.ld || c->row_major != d.row_major)) {
    throw std::invalid_argument("gpu (cublas): C and D share memory but not their layout");
  }
  const auto [x, y, rows, cols, k] = column_major_product(a, b, d);
  const cudaDataType_t input = datapath.input == formats::fp16   ? CUDA_R_16F
                               : datapath.input == formats::bf16 ? CUDA_R_16BF
                                                                 : CUDA_R_32F;
  const cublasComputeType_t compute =
      datapath.input == formats::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  const float alpha = options.alpha, beta = options.beta;
  TCEMU_CUBLAS_CHECK(cublasGemmEx(handle, x.op, y.op, rows, cols, k, &alpha, x.data, input, x.ld,
                                  y.data, input, y.ld, &beta, d.data, CUDA_R_32F,
                                  static_cast<int>(d.ld), compute, CUBLAS_GEMM_DEFAULT));
}

void cublas_fp64_gemm(cublasHandle_t handle, const DeviceReal& a, const DeviceReal& b,
                      const DeviceReal& c) {
  if (c.rows == 0 || c.cols == 0) return;
  const auto [x, y, rows, cols, k] = column_major_product(a, b, c);
  const double one = 1.0, zero = 0.0;
  TCEMU_CUBLAS_CHECK(cublasDgemm(handle, x.op, y.op, rows, cols, k, &one,
                                 static_cast<const double*>(x.data), x.ld,
                                 static_cast<const double*>(y.data), y.ld, &zero,
                                 reinterpret_cast<double*>(c.data), static_cast<int>(c.ld)));
}

}  // namespace tcemu::gpu::detail
