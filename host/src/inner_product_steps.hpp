// The host implementation of Backend::inner_products (tcemu/backend/inner_product_steps.hpp has its
// semantics); arguments are already checked. `threads` as in parallel_for.hpp; the bits do not
// depend on it.
#pragma once

#include <tcemu/backend/backend.hpp>

namespace tcemu::detail {

void host_inner_products(InnerProduct method, const RealMatrix& a, const RealMatrix& b,
                         double alpha, double beta, const RealMatrix& c, int threads);

}  // namespace tcemu::detail
