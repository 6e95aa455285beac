// The GPU kernels of dp's bound steps (tcemu/backend/crt_steps.hpp: crt_magnitude_bound,
// crt_bound_need), on the default stream, running crt_bounds.hpp's element functions.
#pragma once

#include <cublas_v2.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include <tcemu/backend/backend.hpp>

namespace tcemu::gpu::detail {

// Device bytes crt_magnitude_bound needs in `scratch`.
std::size_t crt_magnitude_bound_scratch_bytes(const RealMatrix& x, SplitAxis axis);

// Backend::crt_magnitude_bound: the vectors' BoundVector from their VectorNorm (a thread per
// vector), then one thread per element of the quanta (through shared-memory tiles when x's
// layout differs from the quanta's).
void crt_magnitude_bound(const RealMatrix& x, SplitAxis axis, int depth, const VectorNorms& norms,
                         const IntegerMatrix& out, const BoundExponents& exponents, void* scratch);

// Device bytes crt_bound_need needs in `scratch` for `levels` m x n products over k.
std::size_t crt_bound_need_scratch_bytes(std::int64_t m, std::int64_t n, std::int64_t k,
                                         std::size_t levels);

// Backend::crt_bound_need: integer_gemm_sums (cublasGemmEx int8 -> int32 into scratch) of the
// first level, copied aside when there is a second, the second's; then each element's least
// bound_need over the levels, the maximum by a block reduction and atomicMax; synchronizes.
int crt_bound_need(cublasHandle_t handle, std::span<const BoundLevel> levels, int log2_k,
                   void* scratch);

}  // namespace tcemu::gpu::detail
