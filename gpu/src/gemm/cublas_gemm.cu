#include <algorithm>
#include <span>

#include "cuda_check.hpp"
#include "gemm/cublas_gemm.hpp"
#include "gemm/gemm_epilogue.cuh"
#include "steps/tensor_core_steps.hpp"

namespace tcemu::gpu::detail {
namespace {

// The chunk products of one take-out batch are kept under this many bytes (at least one chunk).
constexpr std::size_t kChunkBytes = std::size_t{1} << 30;

// Adds `count` chunk products (column-major m x n planes, `plane` elements apart) to the fp32
// register in k order, one RN add each: the take-out adds of GemmOptions. The register starts at
// C (initial accumulator) or +0 on the first batch and lives in `reg` between batches; the last
// batch writes D through the epilogue of the tiled kernels (store_result).
__global__ void takeout_sum_kernel(const float* products, int count, std::int64_t plane, float* reg,
                                   bool first, bool last, const TiledGemmArguments args) {
  for (int j = static_cast<int>(blockIdx.y); j < args.n; j += static_cast<int>(gridDim.y)) {
    for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < args.m;
         i += static_cast<int>(gridDim.x * blockDim.x)) {
      const std::int64_t at = static_cast<std::int64_t>(j) * args.m + i;
      float r = !first ? reg[at]
                : args.c_is_initial_accumulator
                    ? __uint_as_float(load_accumulator<false>(args.c, i, j))
                    : 0.0f;
      for (int c = 0; c < count; ++c) r = __fadd_rn(r, products[c * plane + at]);
      if (last) {
        store_result<false>(args, i, j, __float_as_uint(r));
      } else {
        reg[at] = r;
      }
    }
  }
}

cudaDataType_t data_type(const FloatFormat& input) {
  return input == formats::fp16 ? CUDA_R_16F : input == formats::bf16 ? CUDA_R_16BF : CUDA_R_32F;
}

cublasComputeType_t compute_type(const FloatFormat& input) {
  return input == formats::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

// One cublasGemmEx: D = alpha A B + beta C (alpha = beta = 1 for C as the initial accumulator).
void single_call(cublasHandle_t handle, const Datapath& datapath, const GemmOptions& options,
                 const DeviceMatrix& a, const DeviceMatrix& b, const std::optional<DeviceMatrix>& c,
                 const DeviceMatrix& d) {
  const bool reads_c = options.beta != 0.0f;
  if (reads_c && c->data != d.data) copy_matrix(*c, d);
  if (reads_c && c->data == d.data && (c->ld != d.ld || c->row_major != d.row_major)) {
    throw std::invalid_argument("gpu (cublas): C and D share memory but not their layout");
  }
  const ColumnMajorProduct p = column_major_product(a, b, d);
  const cudaDataType_t input = data_type(datapath.input);
  const float alpha = options.alpha, beta = options.beta;
  TCEMU_CUBLAS_CHECK(cublasGemmEx(handle, p.first.op, p.second.op, p.rows, p.cols, p.k, &alpha,
                                  p.first.data, input, p.first.ld, p.second.data, input,
                                  p.second.ld, &beta, d.data, CUDA_R_32F, static_cast<int>(d.ld),
                                  compute_type(datapath.input), CUBLAS_GEMM_DEFAULT));
}

// Take-out composed: the products of the chunks of kb values of k by cuBLAS, `batch` chunks per
// cublasGemmStridedBatchedEx (the short last chunk by its own call), each batch summed into the
// register by takeout_sum_kernel.
void chunked(cublasHandle_t handle, const Datapath& datapath, const GemmOptions& options,
             const DeviceMatrix& a, const DeviceMatrix& b, const std::optional<DeviceMatrix>& c,
             const DeviceMatrix& d, const Scratch& scratch) {
  const std::int64_t m = d.rows, n = d.cols, k = a.cols, kb = options.takeout_every_k;
  const std::int64_t chunks = (k + kb - 1) / kb;
  const std::int64_t plane = m * n;
  const auto plane_bytes = static_cast<std::size_t>(plane) * sizeof(float);
  const std::int64_t batch = std::clamp<std::int64_t>(
      static_cast<std::int64_t>(kChunkBytes / plane_bytes), 1, std::max<std::int64_t>(chunks, 1));
  auto* reg = static_cast<float*>(scratch((static_cast<std::size_t>(batch) + 1) * plane_bytes));
  float* products = reg + plane;

  // Chunk q of A (m x kb) starts at column q kb, of B (kb x n) at row q kb; strides in elements.
  const std::int64_t a_stride = a.row_major ? kb : kb * a.ld;
  const std::int64_t b_stride = b.row_major ? kb * b.ld : kb;
  const auto at_chunk = [&](const DeviceMatrix& x, std::int64_t stride, std::int64_t q) {
    return static_cast<const void*>(x.data + q * stride * x.element_bytes);
  };
  const auto x = operand(a, false), y = operand(b, false);
  const cudaDataType_t input = data_type(datapath.input);
  const float one = 1.0f, zero = 0.0f;

  TiledGemmArguments args{};
  args.m = static_cast<int>(m);
  args.n = static_cast<int>(n);
  const bool reads_c = options.c_input == CInput::initial_accumulator || options.beta != 0.0f;
  args.c = reads_c ? AccumulatorMatrix{c->data, c->ld, c->row_major}
                   : AccumulatorMatrix{nullptr, 0, true};
  args.d = {d.data, d.ld, d.row_major};
  args.c_is_initial_accumulator = options.c_input == CInput::initial_accumulator;
  args.alpha = options.alpha;
  args.beta = options.beta;
  const dim3 threads(256);
  const dim3 blocks(static_cast<unsigned>(std::min<std::int64_t>((m + 255) / 256, 64)),
                    static_cast<unsigned>(std::min<std::int64_t>(n, 65535)));

  std::int64_t first = 0;
  do {  // at least once: with k = 0 the register (C or +0) still goes through the epilogue
    const std::int64_t count = std::min(batch, chunks - first);
    const bool short_tail = first + count == chunks && k % kb != 0;
    const std::int64_t whole = short_tail ? count - 1 : count;
    if (whole > 0) {
      TCEMU_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
          handle, x.op, y.op, static_cast<int>(m), static_cast<int>(n), static_cast<int>(kb), &one,
          at_chunk(a, a_stride, first), input, x.ld, a_stride, at_chunk(b, b_stride, first), input,
          y.ld, b_stride, &zero, products, CUDA_R_32F, static_cast<int>(m), plane,
          static_cast<int>(whole), compute_type(datapath.input), CUBLAS_GEMM_DEFAULT));
    }
    if (short_tail) {
      const std::int64_t q = chunks - 1;
      TCEMU_CUBLAS_CHECK(cublasGemmEx(handle, x.op, y.op, static_cast<int>(m), static_cast<int>(n),
                                      static_cast<int>(k - q * kb), &one, at_chunk(a, a_stride, q),
                                      input, x.ld, at_chunk(b, b_stride, q), input, y.ld, &zero,
                                      products + whole * plane, CUDA_R_32F, static_cast<int>(m),
                                      compute_type(datapath.input), CUBLAS_GEMM_DEFAULT));
    }
    const bool last = first + count >= chunks;
    takeout_sum_kernel<<<blocks, threads>>>(products, static_cast<int>(count), plane, reg,
                                            first == 0, last, args);
    TCEMU_CUDA_CHECK(cudaGetLastError());
    first += count;
  } while (first < chunks);
}

// Products per cublasGemmBatchedEx: their pointers (3 KiB) fit the kernel parameters that
// carry them to the device.
constexpr int kBatchChunk = 128;

struct ChunkPointers {
  const void* first[kBatchChunk];
  const void* second[kBatchChunk];
  void* d[kBatchChunk];
};

// The chunk's pointer arrays, one after another at `out` (first, second, d).
__global__ void write_pointers_kernel(const ChunkPointers chunk, const int count, void** out) {
  for (int i = static_cast<int>(threadIdx.x); i < count; i += static_cast<int>(blockDim.x)) {
    out[i] = const_cast<void*>(chunk.first[i]);
    out[kBatchChunk + i] = const_cast<void*>(chunk.second[i]);
    out[2 * kBatchChunk + i] = chunk.d[i];
  }
}

}  // namespace

std::size_t batched_gemm_pointer_bytes() {
  return 3 * kBatchChunk * sizeof(void*);
}

void cublas_gemm_batch(cublasHandle_t handle, const Datapath& datapath, float alpha,
                       std::span<const DeviceProduct> batch, void* pointers) {
  if (batch.empty()) return;
  const DeviceProduct& front = batch.front();
  // Every product alike, so one column-major shape and operation for all.
  const ColumnMajorProduct shape = column_major_product(front.a, front.b, front.d);
  const cudaDataType_t input = data_type(datapath.input);
  const float zero = 0.0f;
  auto** arrays = static_cast<void**>(pointers);
  for (std::size_t c0 = 0; c0 < batch.size(); c0 += kBatchChunk) {
    const int count = static_cast<int>(std::min<std::size_t>(kBatchChunk, batch.size() - c0));
    ChunkPointers chunk{};
    for (int i = 0; i < count; ++i) {
      const DeviceProduct& p = batch[c0 + static_cast<std::size_t>(i)];
      const ColumnMajorProduct product = column_major_product(p.a, p.b, p.d);
      chunk.first[i] = product.first.data;
      chunk.second[i] = product.second.data;
      chunk.d[i] = p.d.data;
    }
    write_pointers_kernel<<<1, kBatchChunk>>>(chunk, count, arrays);
    TCEMU_CUDA_CHECK(cudaGetLastError());
    TCEMU_CUBLAS_CHECK(cublasGemmBatchedEx(
        handle, shape.first.op, shape.second.op, shape.rows, shape.cols, shape.k, &alpha, arrays,
        input, shape.first.ld, arrays + kBatchChunk, input, shape.second.ld, &zero,
        arrays + 2 * kBatchChunk, CUDA_R_32F, static_cast<int>(front.d.ld), count,
        compute_type(datapath.input), CUBLAS_GEMM_DEFAULT));
  }
}

void check_cublas_gemm(const Datapath& datapath, const GemmOptions& options) {
  const bool formats_offered = datapath.accumulator == formats::fp32 && !datapath.has_input_b &&
                               !datapath.block_scaled() &&
                               (datapath.input == formats::fp16 ||
                                datapath.input == formats::bf16 || datapath.input == formats::tf32);
  if (!formats_offered) {
    throw std::invalid_argument(
        "gpu (cublas): cublasGemmEx takes fp16, bf16 or tf32 inputs with "
        "an fp32 accumulator, not " +
        std::string(datapath.input.name) + " -> " + std::string(datapath.accumulator.name));
  }
  if (options.takeout_every_k < 0 || options.takeout_every_k % datapath.instruction_k != 0) {
    throw std::invalid_argument(
        "gpu (cublas): takeout_every_k = " + std::to_string(options.takeout_every_k) +
        " is not a non-negative multiple of the instruction's k = " +
        std::to_string(datapath.instruction_k));
  }
}

void cublas_gemm(cublasHandle_t handle, const Datapath& datapath, const GemmOptions& options,
                 const DeviceMatrix& a, const DeviceMatrix& b, const std::optional<DeviceMatrix>& c,
                 const DeviceMatrix& d, const Scratch& scratch) {
  if (options.takeout_every_k > 0) {
    chunked(handle, datapath, options, a, b, c, d, scratch);
  } else {
    single_call(handle, datapath, options, a, b, c, d);
  }
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
