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
ColumnMajorOperand operand(const DeviceMatrix& x, bool transposed) {
  const bool stored_as_wanted = x.row_major == transposed;  // x^T row major is x column major
  return {x.data, static_cast<int>(x.ld), stored_as_wanted ? CUBLAS_OP_N : CUBLAS_OP_T};
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
  // cuBLAS writes a column-major D. A row-major D is D^T column major: D^T = B^T A^T.
  const bool transposed = d.row_major;
  const DeviceMatrix& first = transposed ? b : a;
  const DeviceMatrix& second = transposed ? a : b;
  const auto x = operand(first, transposed), y = operand(second, transposed);
  const int rows = static_cast<int>(transposed ? d.cols : d.rows);
  const int cols = static_cast<int>(transposed ? d.rows : d.cols);
  const int k = static_cast<int>(a.cols);
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

}  // namespace tcemu::gpu::detail
