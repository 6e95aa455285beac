// The tensor-core steps of a backend (backend.hpp): the low-precision GEMM through a datapath
// and format conversion, which every tensor-core scheme uses. Their checks are in
// tensor_core_steps.cpp; the host implementations in host/src/tensor_core_steps.cpp, the GPU's in
// gpu/src/gemm/ and gpu/src/steps/tensor_core_steps.cu.
#pragma once

#include <optional>
#include <span>

#include <tcemu/backend/buffer_matrix.hpp>
#include <tcemu/backend/memory.hpp>
#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu {

// One product of TensorCoreSteps::mma_gemm_batch: D = alpha * A B.
struct GemmProduct {
  BufferMatrix a, b, d;
};

// The scales of a block-scaled product (BlockScales, gemm.hpp), in buffers of the backend:
// a is m x s, b is s x n, s = scale_count(datapath, k) (mma.hpp).
struct ScaleBuffers {
  BufferMatrix a, b;
};

class TensorCoreSteps : public virtual MemorySpace {
 public:
  // D = alpha * A B + beta * C through `datapath` (the semantics of emulated_gemm, gemm.hpp),
  // with the scales of A and B for a block-scaled datapath (and only then). Every matrix lies in
  // a buffer of this backend; a view past a buffer's end is refused, and so is a request that
  // breaks the GEMM's operand contract (check_gemm_operands, gemm.hpp), here, once for every
  // backend.
  void mma_gemm(const Datapath& datapath, const GemmOptions& options, const BufferMatrix& a,
                const BufferMatrix& b, const std::optional<BufferMatrix>& c, const BufferMatrix& d,
                const std::optional<ScaleBuffers>& scales = std::nullopt);

  // The products of `batch` through `datapath`, as that many mma_gemm calls with these options
  // and no C: D_i = alpha * A_i B_i. The options must not read C (beta = 0, epilogue mode); every
  // product has the first's shapes, leading dimensions, layouts and formats; no D overlaps
  // another D or any A or B. Each is refused with std::invalid_argument naming the products. A
  // backend may run the products in any order or at once (the GPU's cuBLAS engine issues small
  // ones as one batched call, gpu_backend.hpp).
  void mma_gemm_batch(const Datapath& datapath, const GemmOptions& options,
                      std::span<const GemmProduct> batch);

  // dst = src converted elementwise from src.format to dst.format (convert.hpp), same shape.
  void convert(const BufferMatrix& src, const BufferMatrix& dst, Rounding rounding);

 protected:
  // What each backend implements; arguments are already checked.
  virtual void mma_gemm_checked(const Datapath& datapath, const GemmOptions& options,
                                const BufferMatrix& a, const BufferMatrix& b,
                                const std::optional<BufferMatrix>& c, const BufferMatrix& d,
                                const std::optional<ScaleBuffers>& scales) = 0;
  // One mma_gemm_checked per product, in order, unless a backend has a better way.
  virtual void mma_gemm_batch_checked(const Datapath& datapath, const GemmOptions& options,
                                      std::span<const GemmProduct> batch);
  virtual void convert_checked(const BufferMatrix& src, const BufferMatrix& dst,
                               Rounding rounding) = 0;

 private:
  void check_operands(const Datapath& datapath, const GemmOptions& options, const BufferMatrix& a,
                      const BufferMatrix& b, const std::optional<BufferMatrix>& c,
                      const BufferMatrix& d, const std::optional<ScaleBuffers>& scales) const;
};

}  // namespace tcemu
