// Dot2 of Ogita, Rump and Oishi (SISC 26(6), 2005, Algorithm 5.3), for host and device: a dot
// product computed as if in twice the working precision and rounded back, with the error bound
//   |dot2 - x'y| <= u |x'y| + gamma_n^2 |x|'|y|,   gamma_n = n u / (1 - n u)
// (u = 2^-53 for binary64, 2^-24 for binary32; no underflow). Each term is split exactly by
// TwoProd, the running sum by TwoSum, and the errors are summed in working precision:
//   [h, r] = TwoProd(x_i, y_i); [s, q] = TwoSum(s, h); c = c + (q + r);  result s + c.
//
// The order of the operations is part of the definition, so that every backend gives the same
// bits: one inner product sums its terms in index order (GEMV and GEMM: one output element per
// thread); a DOT sums in kDot2Lanes interleaved lanes (lane l takes the terms l, l + L, l + 2L,
// ... in that order), which dot2_merge_lanes combines pairwise in a fixed tree.
#pragma once

#include <cmath>
#include <cstdint>

#include <tcemu/backend/error_free.hpp>

namespace tcemu {

template <RealType T>
struct Dot2 {
  T sum = 0;    // s: the working-precision sum of the rounded products
  T error = 0;  // c: the sum of every TwoProd and TwoSum error

  TCEMU_HOST_DEVICE void add(T x, T y) {
    const SumAndError<T> h = two_prod(x, y);
    const SumAndError<T> s = two_sum(sum, h.sum);
    sum = s.sum;
    error = add_rn(error, add_rn(s.error, h.error));
  }

  // Combines two partial sums: [s, q] = TwoSum(s1, s2); c = c1 + (c2 + q).
  TCEMU_HOST_DEVICE void merge(const Dot2& other) {
    const SumAndError<T> s = two_sum(sum, other.sum);
    sum = s.sum;
    error = add_rn(error, add_rn(other.error, s.error));
  }

  // s + c. When s is not finite (an Inf or NaN operand, 0 * Inf, or a sum or product that
  // overflowed) it is what plain recursive summation gives, and c (possibly Inf - Inf = NaN) is
  // left out: NaN and Inf propagate as in a BLAS.
  TCEMU_HOST_DEVICE T result() const {
#if defined(__CUDA_ARCH__)
    return isfinite(sum) ? add_rn(sum, error) : sum;
#else
    return std::isfinite(sum) ? add_rn(sum, error) : sum;
#endif
  }
};

// The lanes of a Dot2 DOT: a power of two, enough threads to keep a GPU's memory busy.
inline constexpr std::int64_t kDot2Lanes = 16384;

// The fixed tree over `count` lanes (a power of two): at stride s = 1, 2, 4, ..., lane l (a
// multiple of 2s) merges lane l + s. The result is in lanes[0].
template <RealType T>
TCEMU_HOST_DEVICE inline void dot2_merge_lanes(Dot2<T>* lanes, std::int64_t count) {
  for (std::int64_t s = 1; s < count; s *= 2) {
    for (std::int64_t l = 0; l + s < count; l += 2 * s) lanes[l].merge(lanes[l + s]);
  }
}

}  // namespace tcemu
