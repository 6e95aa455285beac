// The correctly rounded matrix product by the long accumulator (long_accumulator.hpp) instead of
// MPFR: the same contract as correctly_rounded_gemm (exact_gemm.hpp) and the same bits (the tests
// cross-check the two), several times faster. With to_fp32 the operands must be binary32 values.
#pragma once

#include <cstdint>
#include <vector>

namespace tcemu::reference {

std::vector<double> accumulator_gemm(std::int64_t m, std::int64_t n, std::int64_t k,
                                     const std::vector<double>& a, const std::vector<double>& b,
                                     bool to_fp32 = false, int threads = 0);

}  // namespace tcemu::reference
