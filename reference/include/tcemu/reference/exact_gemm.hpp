// The correctly rounded matrix product, by MPFR: the oracle of the Ozaki scheme's tests, the
// `tcemu gemm` accuracy report and the experiments.
#pragma once

#include <cstdint>
#include <vector>

#include <tcemu/emulator/fp64_bits.hpp>

namespace tcemu::reference {

// op(A) op(B) for column-major A (m x k) and B (k x n) with lda = m, ldb = k: every element is
// the exact sum of the exact products, rounded once to nearest even to binary64 (to binary32
// when `to_fp32`, values returned widened) by MPFR. The exact sum is formed in a fixed-point
// integer spanning the products' exponents and handed to MPFR exactly; on `threads` threads
// (0: every hardware thread). A NaN or Inf operand gives what IEEE gives.
std::vector<double> correctly_rounded_gemm(std::int64_t m, std::int64_t n, std::int64_t k,
                                           const std::vector<double>& a,
                                           const std::vector<double>& b, bool to_fp32 = false,
                                           int threads = 0);

// The same with every element rounded once in direction d (not to_odd) by MPFR (MPFR_RNDN,
// RNDU, RNDD, RNDZ), to binary64 or, when `to_fp32`, to binary32 (mpfr_get_flt, its subnormals
// and overflow included; values returned widened): the oracle of the Ozaki scheme's directed cr
// (ozaki::Options::rounding). An exact zero is +0 in every direction; a NaN or Inf operand gives
// what IEEE gives.
std::vector<double> correctly_rounded_gemm(std::int64_t m, std::int64_t n, std::int64_t k,
                                           const std::vector<double>& a,
                                           const std::vector<double>& b, fp64::Direction d,
                                           bool to_fp32 = false, int threads = 0);

}  // namespace tcemu::reference
