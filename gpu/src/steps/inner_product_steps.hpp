// Backend::inner_products on the device: the element functions of dot2.hpp, exact_dot.hpp and
// blas_epilogue.hpp (the ones the host backend runs) in CUDA kernels.
//   GEMM (n > 1): one output element per thread, 16 x 16 tiles of A and B staged in shared
//     memory, every thread summing its element in k order.
//   GEMV (n = 1, m > 1): one output element per thread, A read in place.
//   DOT (1 x 1): Dot2 in kDot2Lanes threads (lane = thread) and the fixed tree of dot2.hpp;
//     the exact sum in as many threads as keep the device busy, their accumulators merged limb
//     by limb (exact, so the split does not change the bits).
#pragma once

#include <cstddef>

#include <tcemu/backend/backend.hpp>

namespace tcemu::gpu::detail {

// Device scratch the DOT needs (0 for other shapes).
std::size_t inner_products_scratch_bytes(InnerProduct method, const RealMatrix& c,
                                         int multiprocessors);

void inner_products(InnerProduct method, const RealMatrix& a, const RealMatrix& b, double alpha,
                    double beta, const RealMatrix& c, void* scratch, int multiprocessors);

}  // namespace tcemu::gpu::detail
