// Plain DGEMM, the papers' "DGEMM" column on a CPU: A (m x k) and B (k x n) column major, each
// element of A B summed in k order in binary64 with round to nearest and no FMA (the reference
// BLAS's loop; this library is built with -ffp-contract=off).
#pragma once

#include <cstdint>
#include <vector>

namespace tcemu::reference {

std::vector<double> plain_dgemm(std::int64_t m, std::int64_t n, std::int64_t k,
                                const std::vector<double>& a, const std::vector<double>& b);

}  // namespace tcemu::reference
