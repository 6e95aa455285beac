// The element functions of dp's bound of |A||B| (crt_steps.hpp: crt_magnitude_bound,
// crt_bound_need): the criterion, with its proof, that the norm scaling's gamma_A keeps every
// element within DGEMM's classical error bound, a vector's quanta and exponents, and the need
// of one element, decided exactly.
#pragma once

#include <cstdint>

#include <tcemu/backend/crt_scaling.hpp>
#include <tcemu/emulator/fp64_bits.hpp>
#include <tcemu/emulator/host_device.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu::crt_elements {

// dp's count from a certified lower bound of |A||B| (crt_steps.hpp: crt_magnitude_bound,
// crt_bound_need). The norm scaling of rows of A to 2^gamma_a and columns of B to 2^gamma_b
// (gamma_a <= gamma_b, norm_gammas in ozaki/src/crt_scheme.cpp) scales row i by alpha_i =
// 2^(gamma_a + rho_i) and column j by beta_j = 2^(gamma_b + sigma_j) (VectorNorm: rho does not
// depend on gamma, 2^-rho_i >= ||a_i||_2). Each integer A'_ip = alpha_i a_ip + e_p, |e_p| <= 1/2
// (B' likewise, f_p), so the integer product C' (recovered exactly for every count) is
// alpha_i beta_j (A B)_ij + alpha_i sum_p a_ip f_p + beta_j sum_p e_p b_pj + sum_p e_p f_p, and
//   |C' / (alpha_i beta_j) - (A B)_ij| <= ||b_j||_1 / (2 alpha_i) + ||a_i||_1 / (2 beta_j)
//                                         + k / (4 alpha_i beta_j)                  (T1 + T2 + T3)
// before the final rounding. dp's criterion: T1 + T2 + T3 <= 3 2^-55 K L_ij with K =
// 2^floor(log2 k) <= k and L_ij <= (|A||B|)_ij the bound, so at most (3/4) k 2^-53 (|A||B|)_ij
// for every element, and with the final rounding the result meets the classical error bound of
// a recursive-summation DGEMM, |C^ - C| <= gamma_k (|A||B|)_ij (gamma_k = k u / (1 - k u), u =
// 2^-53; k >= 4; for k < 4 within (3/4 k + 1) u (|A||B|)_ij). In integers:
//   - u_v (quantum shift): the vector's elements as integers q_vp = min(127, floor(|x_vp|
//     2^u_v)) <= |x_vp| 2^u_v (magnitude_quanta), P_ij = sum_p q_ip q_pj the exact int32 sum,
//     L_ij = P_ij 2^-(u_i + v_j) <= (|A||B|)_ij;
//   - in units of the quantum 2^-u_v: 2^-rho_v = 2^(norm2_v - u_v), ||x_v||_1 <= 2^(norm1_v -
//     u_v) (BoundVector);
//   - T1 = 2^(-gamma_a - 1 - rho_i) ||b_j||_1 <= 2^(-g - 1 + norm2_i + norm1_j - u_i - v_j) for
//     g = gamma_a; T2 <= 2^(-g - 1 - sigma_j) ||a_i||_1 (gamma_b >= g) <= 2^(-g - 1 + norm1_i +
//     norm2_j - u_i - v_j); T3 <= k/4 2^(-2g - rho_i - sigma_j) <= 2^(log2 K - 1 - 2g + norm2_i +
//     norm2_j - u_i - v_j) (k < 2K). Divided by 2^(log2 K - 55 - u_i - v_j), the criterion is
//       2^(c1 - g) + 2^(c2 - g) + 2^(c3 - 2g) <= 3 P_ij,
//     c1 = 54 - log2 K + norm2_i + norm1_j, c2 = 54 - log2 K + norm1_i + norm2_j, c3 = 54 +
//     norm2_i + norm2_j: its left side falls as g grows, and bound_need is the least g meeting
//     it, decided exactly (dyadic_sum_at_most).
// P_ij = 0 certifies nothing (kBoundUncertified), an empty row or column (its integers all
// zero: C'_ij = 0 exactly) needs nothing (kNoNeed). Integer arithmetic throughout: the same need
// on every backend.
inline constexpr int kNoNeed = -(1 << 20);
inline constexpr int kBoundUncertified = 1 << 20;
inline constexpr int kQuantaMax = 127;

// A vector's exponents for dp's bound (above): quantum_shift = u, norm2 = u - rho, norm1 =
// log2_norm1 + u (VectorNorm); norm2 = kEmptyVector for an empty vector. u is any integer for
// the bound's soundness; this one clips at 2^-depth times about the mean magnitude (2^(log2
// ||x||_1 - log2_length - depth) maps to 2^7, so that the elements of a widely spread vector
// that meet the other side's are not all rounded to 0) or at the largest element when that is
// lower (7 - top: |x_p| 2^u < 2^7). A deeper clip keeps more small elements and loses more of
// the large ones. dp takes kShallowClip (four times the mean: measured in a NumPy model of
// these exponents at k = 8192 and 16384, it asks up to 2 bits less than depth 0 at phi <= 2),
// and where that leaves an element uncertified, the better of depths 0 and kDeepClip for every
// element.
inline constexpr int kShallowClip = -2;
inline constexpr int kDeepClip = 6;
struct BoundVector {
  int quantum_shift = 0;
  int norm2 = kEmptyVector;
  int norm1 = 0;
};

TCEMU_HOST_DEVICE inline BoundVector bound_vector(const VectorNorm& n, int log2_length, int depth) {
  BoundVector v;
  if (n.empty()) return v;
  const int by_largest = 7 - n.top, by_mean = 7 - n.log2_norm1 + log2_length + depth;
  v.quantum_shift = by_largest > by_mean ? by_largest : by_mean;
  v.norm2 = v.quantum_shift - n.rho;
  v.norm1 = n.log2_norm1 + v.quantum_shift;
  return v;
}

// min(127, floor(|x| 2^shift)) for finite x (0 for Inf and NaN), exactly: |x| = s 2^f, s < 2^53.
TCEMU_HOST_DEVICE inline int magnitude_quanta(double x, int shift) {
  const std::uint64_t b = fp64::bits(x);
  if (!fp64::is_finite(b) || fp64::is_zero(b)) return 0;
  const fp64::Fields f = fp64::fields(x);
  const int g = f.exponent + shift;
  if (g >= 7) return kQuantaMax;  // s >= 1: at least 2^7
  const std::uint64_t q = g >= 0 ? f.significand << g : (g > -64 ? f.significand >> -g : 0);
  return q > kQuantaMax ? kQuantaMax : static_cast<int>(q);
}

// Whether 2^e1 + 2^e2 + 2^e3 <= limit, exactly, for limit < 2^40. The terms with e >= 0 are
// integers (false at once for e >= 40); the others sum to f in (0, 3/2], and for an integer
// limit, whole + f <= limit iff whole + ceil(f) <= limit, ceil(f) = 2 only for 1/2 + 1/2 + a
// third fraction (any other three fractions sum to at most 1).
TCEMU_HOST_DEVICE inline bool dyadic_sum_at_most(int e1, int e2, int e3, std::uint64_t limit) {
  const int e[3] = {e1, e2, e3};
  std::uint64_t whole = 0;
  int fractions = 0, halves = 0;
  for (const int x : e) {
    if (x >= 40) return false;
    if (x >= 0) {
      whole += std::uint64_t{1} << x;
    } else {
      ++fractions;
      halves += x == -1 ? 1 : 0;
    }
  }
  const std::uint64_t up = fractions == 0 ? 0 : (halves >= 2 && fractions == 3) ? 2 : 1;
  return whole + up <= limit;
}

// The need's candidates for element (i, j) (above): with bw = bit_width(p), 2^(bw - 1) <= p <
// 2^bw, at t = max(c1 - bw + 1, c2 - bw + 1, ceil((c3 - bw + 1) / 2)) each term is at most
// 2^(bw - 1) <= p, and at t - 3 the largest is at least 2^(bw + 2) > 3p, so the least g is t -
// 2, t - 1 or t. p > 0, both vectors nonempty.
struct NeedTerms {
  int c1, c2, c3, t;
};

TCEMU_HOST_DEVICE inline NeedTerms need_terms(std::int32_t p, int norm2_i, int norm1_i, int norm2_j,
                                              int norm1_j, int log2_k) {
  const int bw = tcemu::detail::bit_width(static_cast<std::uint64_t>(p));
  NeedTerms n{54 - log2_k + norm2_i + norm1_j, 54 - log2_k + norm1_i + norm2_j,
              54 + norm2_i + norm2_j, 0};
  const int half = n.c3 - bw + 1;
  const int t3 = half > 0 ? (half + 1) / 2 : -(-half / 2);  // ceil(half / 2)
  const int t12 = (n.c1 > n.c2 ? n.c1 : n.c2) - bw + 1;
  n.t = t12 > t3 ? t12 : t3;
  return n;
}

// An upper bound of bound_need below (its t), cheaper: a caller after the largest need may skip
// bound_need where this is no more than the largest so far.
TCEMU_HOST_DEVICE inline int bound_need_at_most(std::int32_t p, int norm2_i, int norm1_i,
                                                int norm2_j, int norm1_j, int log2_k) {
  if (norm2_i == kEmptyVector || norm2_j == kEmptyVector) return kNoNeed;
  if (p <= 0) return kBoundUncertified;
  return need_terms(p, norm2_i, norm1_i, norm2_j, norm1_j, log2_k).t;
}

// The gamma_a that element (i, j) needs (above): the least g with 2^(c1 - g) + 2^(c2 - g) +
// 2^(c3 - 2g) <= 3p, p = P_ij >= 0, from a row's and a column's BoundVector exponents, log2_k =
// floor(log2 k): the first of need_terms' candidates that meets it.
TCEMU_HOST_DEVICE inline int bound_need(std::int32_t p, int norm2_i, int norm1_i, int norm2_j,
                                        int norm1_j, int log2_k) {
  if (norm2_i == kEmptyVector || norm2_j == kEmptyVector) return kNoNeed;
  if (p <= 0) return kBoundUncertified;
  const NeedTerms n = need_terms(p, norm2_i, norm1_i, norm2_j, norm1_j, log2_k);
  const std::uint64_t limit = 3 * static_cast<std::uint64_t>(p);
  for (int g = n.t - 2; g < n.t; ++g) {
    if (dyadic_sum_at_most(n.c1 - g, n.c2 - g, n.c3 - 2 * g, limit)) return g;
  }
  return n.t;
}

}  // namespace tcemu::crt_elements
