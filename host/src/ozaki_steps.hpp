// The host implementations of the Ozaki steps (tcemu/backend/ozaki_steps.hpp has their
// exact semantics); arguments are already checked. `threads` as in parallel_for.hpp. The element
// arithmetic is ozaki_elements.hpp, shared with the GPU backend.
#pragma once

#include <span>

#include <tcemu/backend/backend.hpp>

namespace tcemu::detail {

void host_copy_real(const RealMatrix& src, const RealMatrix& dst, int threads);
int host_split(const RealMatrix& x, SplitAxis axis, int bits, int levels,
               std::span<const SliceMatrix> slices, std::span<const ExponentVector> exponents,
               int threads);
bool host_all_zero(const RealMatrix& x);
void host_accumulate_scaled(const RealMatrixStack& products, std::span<const OuterExponents> scales,
                            const OuterExponents& base, const RealMatrix& dst, bool overwrite,
                            int threads);
void host_exact_sum(const RealMatrixStack& stack, const OuterExponents& scale,
                    const RealMatrix& dst, fp64::Direction d, int threads);
void host_epilogue(const std::optional<RealMatrix>& v, const std::optional<OuterExponents>& v_scale,
                   double alpha, double beta, const std::optional<RealMatrix>& c,
                   const std::optional<RealMatrix>& a, const std::optional<RealMatrix>& b,
                   const RealMatrix& out, fp64::Direction d, int threads);
// A blocked, vectorised FP64 GEMM (the cpu64 backend's product step).
void host_fp64_gemm(const RealMatrix& a, const RealMatrix& b, const RealMatrix& c, int threads);

}  // namespace tcemu::detail
