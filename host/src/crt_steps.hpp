// The host implementations of the CRT steps (tcemu/backend/crt_steps.hpp has their semantics);
// arguments are already checked. `threads` as in parallel_for.hpp; the bits do not depend on it.
#pragma once

#include <span>

#include <tcemu/backend/backend.hpp>

namespace tcemu::detail {

ScaleSummary host_crt_scale(const RealMatrix& x, SplitAxis axis, int max_bits,
                            const ExponentVector& shifts, int threads);
void host_crt_norm_shifts(const RealMatrix& x, SplitAxis axis, int gamma,
                          const ExponentVector& shifts, const VectorNorms* norms, int threads);
void host_crt_residues(const RealMatrix& x, SplitAxis axis, const ExponentVector& shifts,
                       std::span<const IntegerMatrix> out, int threads);
void host_crt_product_residues(const IntegerMatrix& a, const IntegerMatrix& b, int modulus,
                               const IntegerMatrix& dst, int threads);
void host_crt_magnitude_bound(const RealMatrix& x, SplitAxis axis, int depth,
                              const VectorNorms& norms, const IntegerMatrix& out,
                              const BoundExponents& exponents, int threads);
int host_crt_bound_need(std::span<const BoundLevel> levels, int log2_k, int threads);
void host_crt_reconstruct(const IntegerMatrixStack& residues, const crt_elements::Table& table,
                          const OuterExponents& shifts, const RealMatrix& dst, int threads);

}  // namespace tcemu::detail
