// The host implementation of Backend::integer_gemm (tcemu/backend/integer_gemm_steps.hpp has its
// semantics); arguments are already checked. `threads` as in parallel_for.hpp; the bits do not
// depend on it.
#pragma once

#include <tcemu/backend/backend.hpp>

namespace tcemu::detail {

void host_integer_gemm(const IntegerMatrix& a, const IntegerMatrix& b, const RealMatrix& c,
                       int threads);

}  // namespace tcemu::detail
