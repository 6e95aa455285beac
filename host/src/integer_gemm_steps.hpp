// The host implementation of Backend::integer_gemm (tcemu/backend/integer_gemm_steps.hpp has its
// semantics); arguments are already checked. `threads` as in parallel_for.hpp; the bits do not
// depend on it.
#pragma once

#include <cstdint>
#include <vector>

#include <tcemu/backend/backend.hpp>

namespace tcemu::detail {

// The int32 sums of a b (m x n, column major, leading dimension m), exact.
std::vector<std::int32_t> host_integer_sums(const IntegerMatrix& a, const IntegerMatrix& b,
                                            int threads);

void host_integer_gemm(const IntegerMatrix& a, const IntegerMatrix& b, const RealMatrix& c,
                       int threads);

}  // namespace tcemu::detail
