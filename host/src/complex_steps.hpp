// The host implementations of the complex steps (tcemu/backend/complex_steps.hpp has their
// semantics); arguments are already checked. `threads` as in parallel_for.hpp; the bits do not
// depend on it.
#pragma once

#include <complex>
#include <optional>

#include <tcemu/backend/backend.hpp>

namespace tcemu::detail {

void host_complex_real_form(const ComplexMatrix& x, bool conjugate, const RealMatrix& dst,
                            int threads);

void host_complex_epilogue(const std::optional<RealMatrix>& v, Real arithmetic,
                           std::complex<double> alpha, std::complex<double> beta,
                           const ComplexMatrix& c, fp64::Direction d, int threads);

}  // namespace tcemu::detail
