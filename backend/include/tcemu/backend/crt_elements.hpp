// The element functions of the CRT steps (crt_steps.hpp): Ozaki scheme II (Ozaki, Uchino,
// Imamura 2025) on int8 integer tensor cores. Shared by the host and the GPU backends, so both
// compute the same bits.
//
// The scheme: each row i of A is scaled by 2^sA_i and each column j of B by 2^sB_j and rounded
// to integers A', B' (|A'| <= 2^PA, |B'| <= 2^PB); then C' = A' B' is an integer with
// |C'_ij| <= k 2^(PA + PB). For pairwise coprime moduli m_1..m_N with product M >= 2^(PA + PB +
// ceil(log2 k) + 2) > 2 k 2^(PA + PB) >= 2 |C'_ij|, C' is the unique integer of [-M/2, M/2)
// congruent to c_l = (A' mod m_l)(B' mod m_l) summed over k, modulo m_l, for every l (Chinese
// remainder theorem). Each residue product is one int8 GEMM: the residues lie in [-128, 127],
// so every partial sum is below k 2^14 < 2^31 (integer_gemm_steps.hpp), and its int32 result is
// reduced modulo m_l at once (sum_residue). C' is rebuilt exactly from the reduced residues by
// the CRT sum with precomputed weights in multi-word integers (reconstruct), and C_ij = C'_ij
// 2^-(sA_i + sB_j) rounded once to binary64: when A' and B' hold A and B exactly (the shift of
// every vector at least minus the exponent of its lowest set bit) that is the correctly rounded
// product.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include <tcemu/emulator/fp32_bits.hpp>
#include <tcemu/emulator/fp64_bits.hpp>
#include <tcemu/emulator/host_device.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu::crt_elements {

// The moduli, in the order the scheme takes them (N moduli: the first N): 2^8, then odd numbers
// below 256 chosen pairwise coprime (255 = 3 5 17, 253 = 11 23, 247 = 13 19, 217 = 7 31 and
// primes other than those factors); crt_elements_test checks every gcd.
inline constexpr int kMaxModuli = 48;
inline constexpr int kModuli[kMaxModuli] = {
    256, 255, 253, 251, 247, 241, 239, 233, 229, 227, 223, 217, 211, 199, 197, 193,
    191, 181, 179, 173, 167, 163, 157, 151, 149, 139, 137, 131, 127, 113, 109, 107,
    103, 101, 97,  89,  83,  79,  73,  71,  67,  61,  59,  53,  47,  43,  41,  37};

// The number of trailing zero bits of x != 0.
TCEMU_HOST_DEVICE inline int trailing_zeros(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __ffsll(static_cast<long long>(x)) - 1;
#else
  return std::countr_zero(x);
#endif
}

// The round-to-integer constants: 1.5 2^23 in binary32 and 1.5 2^52 in binary64. For a real y
// with |y| < 2^22 (binary32) or |y| < 2^51 (binary64), y + 1.5 2^p lies in [2^p, 2^(p+1)), where
// the spacing is 1: the rounded sum is 1.5 2^p + q with q an integer nearest y (whatever the
// rounding of y itself), and q is the low bits of the sum's encoding minus those of 1.5 2^p
// (two's complement: the fraction field is linear in q). Conversely 1.5 2^23 + t for an integer
// |t| < 2^22, encoded as its bits plus t, minus 1.5 2^23 is t exactly: a binary32 t without a
// conversion instruction (the CUDA programming guide's throughput table: 16 conversions per
// clock and multiprocessor on compute capability 9.0, 128 binary32 additions).
inline constexpr float kRound32 = 12582912.0f;
inline constexpr std::uint32_t kRound32Bits = 0x4B400000u;
inline constexpr double kRound64 = 6755399441055744.0;

// A modulus m of kModuli (256, or odd and at least 37: the reductions' proofs take both) with
// what the reductions need, computed once rather than per reduction (a division is slow on a
// GPU): 1/m rounded to binary32 and to binary64 (correctly rounded divisions: the same values on
// every machine), the symmetric residue (in [-(m / 2), (m - 1) / 2], symmetric_small) of 2^17,
// 2^22 mod m and 2^44 mod m.
struct Modulus {
  int m;
  float reciprocal;
  double reciprocal64;
  int chunk17;
  int chunk22;
  int chunk44;
};

// x mod m for 0 <= x < 2^22, without an integer division: q = trunc(x * float(1/m)) is
// floor(x / m) or off by one (float(1/m) and the product each carry a relative error below
// 2^-24, so q is within x / m 2^-23 < 1 of x / m), and one correction each way makes the
// remainder exact; the result is the integer x mod m on every machine.
TCEMU_HOST_DEVICE inline int mod_small(int x, const Modulus& d) {
  const int q = static_cast<int>(static_cast<float>(x) * d.reciprocal);
  int r = x - q * d.m;
  if (r < 0) r += d.m;
  if (r >= d.m) r -= d.m;
  return r;
}

// s mod m for s < 2^52 in binary64 arithmetic (one multiplication instead of a mod_small per
// 16 bits): q = floor(s * (1/m)) is floor(s / m) or off by one (1/m and the product each carry a
// relative error below 2^-53, so q is within s / m 2^-52 < 1 of s / m), q m < 2^52 + m is held
// exactly, s - q m is an exact integer in [-m, 2m), and one correction each way makes it s mod m.
TCEMU_HOST_DEVICE inline int mod_u52(std::uint64_t s, const Modulus& d) {
  const auto x = static_cast<double>(s);
  const double q = floor(x * d.reciprocal64);
  auto r = static_cast<int>(x - q * d.m);
  if (r < 0) r += d.m;
  if (r >= d.m) r -= d.m;
  return r;
}

// The integer nearest t / m (ties to even) for an integer |t| < 2^22, by binary32 arithmetic
// without conversions: x = t exactly (kRound32), q an integer nearest x * float(1/m)
// (kRound32). For m = 256 every step is exact. For odd m, float(1/m) and the product carry
// relative errors below 2^-24 each (the product none when it is fused with the addition), so
// x * float(1/m) is within |t / m| (2^-23 + 2^-48) < 1/(2m) of t / m (|t| <= 2^22 - 1), while
// t / m = Q + s / m with |s| <= (m - 1) / 2 lies at least 1/(2m) from every half-integer: q = Q.
// Either way t - q m lies in [-m/2, m/2].
TCEMU_HOST_DEVICE inline int nearest_quotient(int t, const Modulus& d) {
  const float x = tcemu::detail::as_float(kRound32Bits + static_cast<std::uint32_t>(t)) - kRound32;
  return static_cast<int>(tcemu::detail::as_bits(x * d.reciprocal + kRound32) - kRound32Bits);
}

// The symmetric residue of an integer |t| < 2^22: t - q m itself for odd m (nearest_quotient
// is exact, |s| <= (m - 1) / 2), t's low byte read as a signed byte for 256 (t - q m may be
// +128 after a tie there).
TCEMU_HOST_DEVICE inline int symmetric_small(int t, const Modulus& d) {
  if (d.m == 256) return static_cast<std::int8_t>(t);
  return t - nearest_quotient(t, d) * d.m;
}

TCEMU_HOST_DEVICE inline Modulus modulus(int m) {
  Modulus d{.m = m,
            .reciprocal = 1.0f / static_cast<float>(m),
            .reciprocal64 = 1.0 / m,
            .chunk17 = 0,
            .chunk22 = 0,
            .chunk44 = 0};
  d.chunk17 = symmetric_small(1 << 17, d);
  d.chunk22 = mod_u52(std::uint64_t{1} << 22, d);
  d.chunk44 = mod_u52(std::uint64_t{1} << 44, d);
  return d;
}

// 2^e mod m for e >= 0: 2^e = (2^50)^q 2^(e - 50 q) with e - 50 q < 50; each factor reduced
// (mod_u52) and the product of two residues (below 2^16) by mod_small.
TCEMU_HOST_DEVICE inline int power_of_two_mod(int e, const Modulus& d) {
  const int step = mod_u52(std::uint64_t{1} << 50, d);
  int result = 1;
  while (e >= 50) {
    result = mod_small(result * step, d);
    e -= 50;
  }
  return mod_small(result * mod_u52(std::uint64_t{1} << e, d), d);
}

// 2^e mod m of the l-th modulus of kModuli, symmetric (in [-(m / 2), (m - 1) / 2], so at most
// 128 in magnitude), for every 0 <= e < kPowerResidueCount, by doubling modulo m at compile time
// (crt_scheme_test checks each against power_of_two_mod): the chunk weights of an integer with a
// power (chunk_sum), which kernels look up instead of computing 2^e mod m for every element and
// modulus. Every element the scheme gives a power (scaled_integer: power >= 11, magnitude >=
// 2^52) is below M < 2^384, so its power is below 384 - 52 = 332 < kTablePowers, where the
// weights of all three chunks (powers e, e + 22, e + 44) are in the table; a larger power (an
// arbitrary shift) takes power_of_two_mod.
inline constexpr int kPowerResidueCount = 384;
inline constexpr int kTablePowers = kPowerResidueCount - 44;

struct PowerResidues {
  std::int8_t of[kMaxModuli][kPowerResidueCount];
};

constexpr PowerResidues power_residues() {
  PowerResidues t{};
  for (int l = 0; l < kMaxModuli; ++l) {
    const int m = kModuli[l];
    int r = 1 % m;
    for (int e = 0; e < kPowerResidueCount; ++e) {
      t.of[l][e] = static_cast<std::int8_t>(2 * r >= m + 1 ? r - m : r);
      r = 2 * r % m;
    }
  }
  return t;
}

// 32-bit limbs of M = the product of all 48 moduli (< 2^384) with room to spare.
inline constexpr int kLimbs = 13;
// Added to every value v_l (|v_l| < 2^22) that the reconstruction takes for modulus l (CrtSum):
// u_l = v_l + kCrtOffset in [1, 2^23).
inline constexpr int kCrtOffset = 1 << 22;

// What the reconstruction needs about the first `count` moduli (the moduli are pairwise
// coprime): the moduli (a copy that device code can read, with what the reductions need),
// cofactor_inverse[l] = (M / m_l)^-1 mod m_l, the CRT weights weight[l] = cofactor_inverse[l] M /
// m_l (< M; 1 modulo m_l, 0 modulo every other modulus), fraction[l] = 2^32 weight[l] / M =
// 2^32 cofactor_inverse[l] / m_l rounded to the nearest integer, offset_fraction = 2^32
// kCrtOffset / M rounded likewise, M and M / 2 (M is even: 256 is the first modulus), all
// little-endian 32-bit limbs, and `limbs`, the limbs that hold M (M < 2^(32 limbs)).
struct Table {
  int count = 0;
  int limbs = 0;
  Modulus moduli[kMaxModuli] = {};
  std::uint8_t cofactor_inverse[kMaxModuli] = {};
  std::uint32_t fraction[kMaxModuli] = {};
  std::uint64_t offset_fraction = 0;
  std::uint32_t weight[kMaxModuli][kLimbs] = {};
  std::uint32_t product[kLimbs] = {};
  std::uint32_t half[kLimbs] = {};
};

// The table of the first `count` (1..kMaxModuli) moduli.
Table table(int count);
// floor(log2 M) for the first `count` moduli.
int product_bits(int count);

// The vector summary of crt_scale: |v_p| < 2^top for every finite v_p, and every finite v_p is
// a multiple of 2^low (the exponent of its lowest set bit); empty when no element is nonzero;
// nonfinite when some v_p is an Inf or a NaN.
struct VectorBits {
  int top = -100000;
  int low = 100000;
  bool nonfinite = false;
  TCEMU_HOST_DEVICE bool empty() const { return top == -100000; }
  TCEMU_HOST_DEVICE void add(double x) {
    const std::uint64_t b = fp64::bits(x);
    if (!fp64::is_finite(b)) {
      nonfinite = true;
      return;
    }
    if (fp64::is_zero(b)) return;
    const fp64::Fields f = fp64::fields(x);
    const int trailing = trailing_zeros(f.significand);
    const int lead = fp64::leading_exponent(b & ~fp64::kSignBit) + 1;
    top = lead > top ? lead : top;
    low = f.exponent + trailing < low ? f.exponent + trailing : low;
  }
  // The shift of the vector: the least that holds every element exactly (-low), or fewer so
  // that |v 2^shift| < 2^max_bits; 0 for an empty vector.
  TCEMU_HOST_DEVICE int shift(int max_bits) const {
    if (empty()) return 0;
    return -low < max_bits - top ? -low : max_bits - top;
  }
  // Bits of the largest scaled integer when held exactly: top - low (0 when empty).
  TCEMU_HOST_DEVICE int exact_bits() const { return empty() ? 0 : top - low; }
};

// The norm scaling (crt_steps.hpp, crt_norm_scale): a bound on |x| 2^shift by an integer,
// ceil(|x| 2^shift) for finite nonzero x (0 for zeros, Inf and NaN), given |x| 2^shift < 2^20
// (VectorBits::shift(bits) with bits <= 20 gives it): |x| = s 2^f (fields), so it is s 2^g for
// g = f + shift >= 0 and s shifted right by -g, plus one when a nonzero bit is shifted out.
inline constexpr int kNormBoundBits = 20;

TCEMU_HOST_DEVICE inline std::uint64_t bound_magnitude(double x, int shift) {
  const std::uint64_t b = fp64::bits(x);
  if (!fp64::is_finite(b) || fp64::is_zero(b)) return 0;
  const fp64::Fields f = fp64::fields(x);
  const int g = f.exponent + shift;
  if (g >= 0) return f.significand << g;
  if (g <= -64) return 1;
  const std::uint64_t q = f.significand >> -g;
  return (f.significand & ((std::uint64_t{1} << -g) - 1)) != 0 ? q + 1 : q;
}

// The sums of a vector's bound magnitudes X_p = bound_magnitude(x_p, bound_shift) (X_p <=
// 2^20, fewer than 2^24 elements: exact in uint64 in any order): sum X_p, sum X_p^2, max X_p.
struct MagnitudeSums {
  std::uint64_t sum = 0;
  std::uint64_t squares = 0;
  std::uint64_t largest = 0;
  TCEMU_HOST_DEVICE void add(double x, int bound_shift) {
    const std::uint64_t b = bound_magnitude(x, bound_shift);
    sum += b;
    squares += b * b;
    largest = b > largest ? b : largest;
  }
};

// What the norm scaling learns of a vector (its MagnitudeSums at bound_shift), as exponents of
// x's own scale: ||x||_2 <= 2^-rho, ||x||_1 <= 2^log2_norm1 and |x_p| < 2^top. |x_p| <= X_p
// 2^-bound_shift (bound_magnitude rounds up), so rho = bound_shift - ceil(log2(N) / 2) with N =
// sum X_p^2 (ceil(log2(N) / 2) = ceil(bit_width(N - 1) / 2)), log2_norm1 = ceil(log2 sum X_p) -
// bound_shift and top = bit_width(max X_p) - bound_shift. A vector without a nonzero finite
// element (N = 0) is kEmptyVector in every field.
inline constexpr int kEmptyVector = -(1 << 30);
struct VectorNorm {
  int rho = kEmptyVector;
  int log2_norm1 = kEmptyVector;
  int top = kEmptyVector;
  TCEMU_HOST_DEVICE bool empty() const { return rho == kEmptyVector; }
};

TCEMU_HOST_DEVICE inline VectorNorm vector_norm(const MagnitudeSums& s, int bound_shift) {
  VectorNorm v;
  if (s.squares == 0) return v;
  v.rho = bound_shift - (tcemu::detail::bit_width(s.squares - 1) + 1) / 2;
  v.log2_norm1 = tcemu::detail::bit_width(s.sum - 1) - bound_shift;  // sum >= 1
  v.top = tcemu::detail::bit_width(s.largest) - bound_shift;
  return v;
}

// The shift of a vector under the norm scaling, gamma + rho (0 for an empty vector): with the
// bound shift s and t = gamma - ceil(log2(N) / 2) >= 0 (the largest integer with N 4^t <=
// 4^gamma), every integer x_p 2^(s + t) rounded to nearest has magnitude at most 2^t X_p (an
// integer at least |x_p| 2^(s + t)), so the vector's integers have Euclidean norm at most 2^t
// sqrt(N) <= 2^gamma.
TCEMU_HOST_DEVICE inline int norm_shift(const VectorNorm& v, int gamma) {
  return v.empty() ? 0 : gamma + v.rho;
}

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

// The integer a = x 2^shift rounded to nearest even (x finite; Inf, NaN and zeros give 0: the
// epilogue puts their special values in), as (-1)^negative magnitude 2^power, computed once per
// element so that its residue modulo each modulus costs a few mod_small. Exact: |x| = s 2^f
// (fields), so a = s 2^(f + shift) when f + shift >= 0 (magnitude s 2^g while that is below 2^64,
// otherwise s with power g), and otherwise s shifted right with round half to even (s < 2^53: a
// shift of 54 or more rounds every s to 0).
struct ScaledInteger {
  std::uint64_t magnitude = 0;
  int power = 0;
  bool negative = false;
};

TCEMU_HOST_DEVICE inline ScaledInteger scaled_integer(double x, int shift) {
  ScaledInteger a;
  const std::uint64_t b = fp64::bits(x);
  if (!fp64::is_finite(b) || fp64::is_zero(b)) return a;
  const fp64::Fields f = fp64::fields(x);
  a.negative = f.negative;
  const int g = f.exponent + shift;
  if (g >= 0) {
    if (g < 11) {
      a.magnitude = f.significand << g;  // s 2^g < 2^64
    } else {
      a.magnitude = f.significand;
      a.power = g;
    }
  } else if (g > -54) {
    const int down = -g;
    std::uint64_t q = f.significand >> down;
    const std::uint64_t rest = f.significand & ((std::uint64_t{1} << down) - 1);
    const std::uint64_t half = std::uint64_t{1} << (down - 1);
    if (rest > half || (rest == half && (q & 1) != 0)) ++q;
    a.magnitude = q;
  }
  return a;
}

// The residues of a ScaledInteger a = (-1)^negative magnitude 2^power, prepared once per element
// for every modulus: the signed magnitude in chunks of 22 bits, t = chunk[0] + chunk[1] 2^22 +
// chunk[2] 2^44 (|chunk[0]|, |chunk[1]| < 2^22, |chunk[2]| < 2^20: 64 bits).
struct ResidueChunks {
  int chunk[3] = {};
  int power = 0;
};

TCEMU_HOST_DEVICE inline ResidueChunks residue_chunks(const ScaledInteger& a) {
  ResidueChunks c;
  constexpr std::uint64_t kMask = (std::uint64_t{1} << 22) - 1;
  const int sign = a.negative ? -1 : 1;
  c.chunk[0] = sign * static_cast<int>(a.magnitude & kMask);
  c.chunk[1] = sign * static_cast<int>((a.magnitude >> 22) & kMask);
  c.chunk[2] = sign * static_cast<int>(a.magnitude >> 44);
  c.power = a.power;
  return c;
}

// The residue modulo m (symmetric) of a, in three parts that a caller taking many elements and
// moduli at once can hoist: residue_256 and residue_odd of the signed magnitude, then
// with_power (or, for a power below kTablePowers, table_chunk_sum's weights from the table). The
// signed magnitude t = chunk[0] + chunk[1] 2^22 + chunk[2] 2^44.
//
// m = 256: 2^22 and 2^44 are multiples of 256, so t = chunk[0] modulo 256, and the symmetric
// residue, in [-128, 127], is chunk[0]'s low byte read as a signed byte.
TCEMU_HOST_DEVICE inline int residue_256(const ResidueChunks& a) {
  return static_cast<std::int8_t>(a.chunk[0]);
}

// An int32 u in binary64, exactly, without a conversion instruction: 2^52 + 2^31 + u, an
// integer in [2^52, 2^53), has the high word 0x43300000 and the low word u + 2^31 = u xor 2^31;
// subtracting 2^52 + 2^31 is exact. (Compiled for the H100, residue_odd with three chunks held
// as binary64 converted them again for every modulus, 12 I2F.F64 per modulus and four elements,
// in residue kernels that Nsight Compute showed issue-bound; docs/results/int8-ozaki.md,
// seventh round.)
TCEMU_HOST_DEVICE inline double exact_double(int u) {
  const std::uint64_t b = 0x4330000000000000ull | (static_cast<std::uint32_t>(u) ^ 0x80000000u);
  return fp64::value(b) - 4503601774854144.0;  // 2^52 + 2^31
}

// u = chunk[0] w0 + chunk[1] w22 + chunk[2] w44, congruent to t 2^e modulo m where w0, w22, w44
// are 2^e, 2^(e + 22), 2^(e + 44) modulo m: residue_odd's weights (e = 0: 1, chunk22, chunk44)
// or a power's from PowerResidues. With |w0| <= 128 and |w22|, |w44| <= 255: |u| < 2^22 2^7 +
// 2^22 2^8 + 2^20 2^8 = 2^29 + 2^30 + 2^28 < 2^31 (int32, reduce_odd's range).
TCEMU_HOST_DEVICE inline int chunk_sum(const ResidueChunks& a, int w0, int w22, int w44) {
  return a.chunk[0] * w0 + a.chunk[1] * w22 + a.chunk[2] * w44;
}

// The symmetric residue of an integer |u| < 2^31 modulo an odd m, without a correction step: x =
// exact_double(u) is u. u / m = Q + s / m with s the symmetric residue, |s| <= (m - 1) / 2, so
// u / m lies at least 1/2 - (m - 1) / (2m) = 1/(2m) >= 1/510 from every half-integer; x times 1/m
// rounded (in one fma with kRound64, or in two roundings) is within |u / m| 2^-52 < 2^31 / 37
// 2^-52 < 2^-26 of u / m (37 the smallest modulus), so the integer nearest it (kRound64) is Q
// and u - Q m = s exactly.
TCEMU_HOST_DEVICE inline int reduce_odd(int u, const Modulus& d) {
  const double x = exact_double(u);
  const auto q =
      static_cast<int>(static_cast<std::uint32_t>(fp64::bits(x * d.reciprocal64 + kRound64)));
  return u - q * d.m;
}

// Odd m: the signed magnitude's residue, chunk_sum with 2^22 mod m and 2^44 mod m (below m).
TCEMU_HOST_DEVICE inline int residue_odd(const ResidueChunks& a, const Modulus& d) {
  return reduce_odd(chunk_sum(a, 1, d.chunk22, d.chunk44), d);
}

// An entry of a PowerResidues row: on the device through the read-only data cache (the table is
// __device__ const there, crt_steps.cu).
TCEMU_HOST_DEVICE inline int table_entry(const std::int8_t* at) {
#if defined(__CUDA_ARCH__)
  return __ldg(at);
#else
  return *at;
#endif
}

// chunk_sum with the weights of a's power from the row of PowerResidues of a's modulus m
// (`two_to`), for a.power < kTablePowers: congruent to t 2^power modulo m. Its residue:
// reduce_odd for odd m; for 256 its low byte read as a signed byte (256 divides the difference).
// The same residue as residue(a, m).
TCEMU_HOST_DEVICE inline int table_chunk_sum(const ResidueChunks& a, const std::int8_t* two_to) {
  return chunk_sum(a, table_entry(two_to + a.power), table_entry(two_to + a.power + 22),
                   table_entry(two_to + a.power + 44));
}

// The residue r of the magnitude times 2^power (power >= 0): r 2^power mod m, symmetric
// (|r (2^power mod m)| < 2^16); r itself for power 0.
TCEMU_HOST_DEVICE inline int with_power(int r, int power, const Modulus& d) {
  return power > 0 ? symmetric_small(r * power_of_two_mod(power, d), d) : r;
}

TCEMU_HOST_DEVICE inline int residue(const ResidueChunks& a, const Modulus& d) {
  return with_power(d.m == 256 ? residue_256(a) : residue_odd(a, d), a.power, d);
}

// residue's proof: 256 first, every other modulus odd.
static_assert([] {
  for (int l = 1; l < kMaxModuli; ++l) {
    if (kModuli[l] % 2 == 0) return false;
  }
  return kModuli[0] == 256;
}());

// The residue modulo m (symmetric) of the integer x 2^shift rounded to nearest even.
TCEMU_HOST_DEVICE inline int scaled_residue(double x, int shift, const Modulus& d) {
  return residue(residue_chunks(scaled_integer(x, shift)), d);
}

// An integer congruent to an int32 sum p (as integer_gemm computes it) modulo m: p = h 2^17 + l
// with h = p >> 17 in [-2^14, 2^14) and l in [0, 2^17), so t = h (2^17 mod m, symmetric: at most
// 128 in magnitude) + l is congruent to p with |t| < 2^21 + 2^17 < 2^22.
TCEMU_HOST_DEVICE inline int sum_congruent(std::int32_t p, const Modulus& d) {
  return (p >> 17) * d.chunk17 + (p & 0x1FFFF);
}

// The residue modulo m (symmetric) of an int32 sum p: sum_congruent reduced by symmetric_small.
TCEMU_HOST_DEVICE inline int sum_residue(std::int32_t p, const Modulus& d) {
  return symmetric_small(sum_congruent(p, d), d);
}

// The binary64 number nearest to C' 2^-shift, C' the integer of [-M/2, M/2) with C' = v_l mod
// m_l for the table's moduli, v_l = residues(l) any integer with |v_l| < 2^22 (a residue in (-m_l,
// m_l), or sum_congruent of an int32 sum: no reduction needed), ties to even; a zero is +0 (C' = 0,
// or a tiny C' 2^-shift rounded to zero: the sign the BLAS epilogue gives every zero, so that the
// scheme may write C directly). L (>= t.limbs) is the count of 32-bit limbs the arithmetic runs in.
//
// The CRT sum, without a reduction per modulus: the weights w_l = weight[l] sum to 1 modulo M
// (modulo each m_j only w_j is nonzero, and it is 1), so with u_l = v_l + kCrtOffset in
// [1, 2^23), S = sum_l u_l w_l is congruent to C' + kCrtOffset modulo M, and 0 <= S < count 2^23
// M. q = round((S - kCrtOffset) / M) is taken in 32-bit fixed point: E = sum_l u_l fraction_l
// (below 48 2^23 2^32 < 2^61: uint64) is within sum_l u_l / 2 < 48 2^22 of 2^32 S / M (w_l / M =
// cofactor_inverse_l / m_l), offset_fraction within 1/2 of 2^32 kCrtOffset / M, so q = floor((E
// - offset_fraction) / 2^32 + 1/2) lies within 1/2 + 48 2^-10 + 2^-33 < 0.55 of (S - kCrtOffset)
// / M and D = S - kCrtOffset - q M in (-M, M): it is C', or C' -+ M when C' lies near -+M/2; one
// correction each way brings D into [-M/2, M/2). Whatever the estimate, D is then exactly C': the
// bits do not depend on the machine, nor on which v_l represent the residues. q lies in (-2^14 -
// 2, 2^29) ((S - kCrtOffset) / M > -2^22 / 256 and < sum_l u_l), so every limb sum u_l w_l,i stays
// below 48 2^55 < 2^61 (uint64) and each limb of q M below 2^61: no int64 overflows before the
// carries are propagated.
//
// Split in two for callers that take several elements at once: CrtSum::add per modulus (the
// table's entries for l read once for all of them), then round_crt_sum.
template <int L>
struct CrtSum {
  std::uint64_t limbs[L] = {};
  std::uint64_t estimate = 0;

  // u_l's terms: one 32 x 32 -> 64-bit multiply-add per limb and one for the estimate.
  TCEMU_HOST_DEVICE void add(const Table& t, int l, int v) {
    const auto u = static_cast<std::uint32_t>(v + kCrtOffset);
    estimate += std::uint64_t{u} * t.fraction[l];
    for (int i = 0; i < L; ++i) limbs[i] += std::uint64_t{u} * t.weight[l][i];
  }

  // q = floor((E - offset_fraction) / 2^32 + 1/2) (an arithmetic shift; E, offset_fraction <
  // 2^61).
  TCEMU_HOST_DEVICE std::int64_t quotient(const Table& t) const {
    return (static_cast<std::int64_t>(estimate) - static_cast<std::int64_t>(t.offset_fraction) +
            (std::int64_t{1} << 31)) >>
           32;
  }
};

// The binary64 number nearest to (-1)^negative |D| 2^-shift, |D| = (taken + f) 2^low_bit with f
// in [0, 1), f > 0 exactly when sticky, which happens only when taken has 64 bits: then bits 10
// .. 0 of taken lie below binary64's 53, so setting bit 0 for f keeps the round bit and the
// sticky bit, and the conversion (round to nearest even, as every binary64 conversion of a
// uint64 is here) gives RN(taken + f) (exactly taken when it has fewer bits). Scaling by 2^e
// (fp64::scale) is exact while the result stays normal, so it is then RN of the magnitude;
// round_nearest_even otherwise (the subnormal range and overflow, where scaling the rounded
// value would round twice). A magnitude rounded to zero gives +0, as C' = 0 does.
TCEMU_HOST_DEVICE inline double round_crt_window(bool negative, std::uint64_t taken, bool sticky,
                                                 int low_bit, std::int64_t shift) {
  const std::int64_t lsb = low_bit - shift;
  constexpr std::int64_t kLimit = 4000;  // beyond it every value overflows or rounds to zero
  const auto e = static_cast<int>(lsb < -kLimit ? -kLimit : lsb > kLimit ? kLimit : lsb);
  const double rounded = static_cast<double>(taken | (sticky ? 1u : 0u));
  const int field = static_cast<int>(fp64::bits(rounded) >> 52) + e;
  if (field >= 1 && field <= 2046) return fp64::scale(negative ? -rounded : rounded, e);
  const double tiny = fp64::round_nearest_even(negative, {taken, e, sticky});
  return tiny == 0.0 ? 0.0 : tiny;
}

template <int L>
TCEMU_HOST_DEVICE double round_crt_sum_limbs(const Table& t, const CrtSum<L>& s,
                                             std::int64_t shift) {
  const std::int64_t q = s.quotient(t);
  std::uint32_t c[L];
  std::int64_t carry = 0;
  TCEMU_UNROLL
  for (int i = 0; i < L; ++i) {
    const std::int64_t x = static_cast<std::int64_t>(s.limbs[i]) - q * std::int64_t{t.product[i]} -
                           (i == 0 ? kCrtOffset : 0) + carry;
    c[i] = static_cast<std::uint32_t>(x);  // x mod 2^32
    carry = x >> 32;                       // floor(x / 2^32)
  }
  // D = c + carry 2^(32 L) with |D| < M < 2^(32 L): carry is 0 or -1; the magnitude into c.
  bool negative = carry < 0;
  if (negative) {
    std::uint64_t borrow = 1;  // 2^(32 L) - c = ~c + 1
    TCEMU_UNROLL
    for (int i = 0; i < L; ++i) {
      const std::uint64_t x = static_cast<std::uint64_t>(~c[i]) + borrow;
      c[i] = static_cast<std::uint32_t>(x);
      borrow = x >> 32;
    }
  }
  // |D| against M / 2 by the subtraction |D| - M / 2: |D| >= M / 2 when it borrows nothing
  // out of the top limb, equal when every limb of the difference is zero. (Not as a loop that
  // keeps the last or first differing limb: GCC 12.2's loop vectorizer (-O2) miscompiles that
  // condition reduction for L = 4 and 8, reproducer in docs/validation.md; and an early exit
  // from the top down left the limbs in local memory on the GPU.)
  std::int64_t half_borrow = 0;
  bool equal = true;
  TCEMU_UNROLL
  for (int i = 0; i < L; ++i) {
    const std::int64_t x = std::int64_t{c[i]} - std::int64_t{t.half[i]} - half_borrow;
    equal = equal && static_cast<std::uint32_t>(x) == 0;
    half_borrow = x < 0 ? 1 : 0;
  }
  const int compare = half_borrow != 0 ? -1 : equal ? 0 : 1;
  if ((!negative && compare >= 0) || (negative && compare > 0)) {  // D -+ M: magnitude M - |D|
    std::int64_t borrow = 0;
    TCEMU_UNROLL
    for (int i = 0; i < L; ++i) {
      const std::int64_t x = std::int64_t{t.product[i]} - c[i] - borrow;
      c[i] = static_cast<std::uint32_t>(x);
      borrow = x < 0 ? 1 : 0;
    }
    negative = !negative;
  }
  // The magnitude as `taken` 2^low_bit plus a sticky bit for the nonzero bits below low_bit:
  // the 64 bits from the leading one down (all of it when it has fewer than 64 bits). The limbs
  // are read at compile-time indices only (unrolled loops with selects), so that a GPU keeps
  // them in registers: a select loop on a computed limb index became indexed loads from local
  // memory (nvcc 13, sm_90a, cuobjdump: 20-32 LDL in the code of the 5- to 8-limb kernels; the
  // 7-limb streamed kernel took 23.5-24.0 ms with them, 22.0 without, n = 16384 on the H200).
  bool wide = false;  // |D| >= 2^64: a nonzero limb past the first two
  TCEMU_UNROLL
  for (int i = 2; i < L; ++i) wide = wide || c[i] != 0;
  if (!wide) {
    const std::uint64_t low = L > 1 ? c[0] | std::uint64_t{c[L > 1 ? 1 : 0]} << 32 : c[0];
    return round_crt_window(negative, low, false, 0, shift);  // +0 for D = 0
  }
  if constexpr (L >= 3) {
    // Whole limbs up until the top one is nonzero (at most L - 3 moves: some limb >= 2 is).
    int moved = 0;
    TCEMU_UNROLL
    for (int step = 0; step + 3 < L; ++step) {
      const bool move = c[L - 1] == 0;
      TCEMU_UNROLL
      for (int i = L - 1; i > 0; --i) c[i] = move ? c[i - 1] : c[i];
      c[0] = move ? 0u : c[0];
      moved += move ? 1 : 0;
    }
    // The leading one is bit b of limb L - 1; the window is bits b + 1 .. b + 64 of the top
    // three limbs (96 bits), the rest sticky.
    const int b = tcemu::detail::bit_width(c[L - 1]) - 1;
    const std::uint64_t top = std::uint64_t{c[L - 1]} << 32 | c[L - 2];
    const std::uint64_t third = c[L - 3];
    const std::uint64_t taken = top << (31 - b) | third >> (b + 1);
    bool sticky = (third & ((std::uint64_t{2} << b) - 1)) != 0;
    TCEMU_UNROLL
    for (int i = 0; i + 3 < L; ++i) sticky = sticky || c[i] != 0;
    const int low_bit = (L - 3 - moved) * 32 + b + 1;
    return round_crt_window(negative, taken, sticky, low_bit, shift);
  }
  return 0.0;  // not reached: |D| >= 2^64 needs 3 limbs
}

// The same for at most 4 limbs (16 moduli: M < 2^126, CrtElements.FourLimbProductsStayBelow2To126)
// in 128-bit integers, the result bit for bit round_crt_sum_limbs's: D = S - kCrtOffset - q M
// lies in (-M, M), so the sum computed modulo 2^128 and read as two's complement is D itself
// (no carry chain), the correction into [-M/2, M/2) is two comparisons, and the window of 64
// bits from the leading one down comes from one count of leading zeros. The GPU's int32-sum
// reconstruction for 4 limbs (15 and 16 moduli): 2480 SASS instructions instead of 3032 (sm_90a,
// static), 9.4-10.2 ms instead of 10.8-11.2 at n = 16384 on the H200 (docs/results/
// int8-ozaki.md, ninth round).
#if defined(__SIZEOF_INT128__)
template <int L>
TCEMU_HOST_DEVICE double round_crt_sum_128(const Table& t, const CrtSum<L>& s, std::int64_t shift) {
  static_assert(L <= 4, "M < 2^126 holds for at most 4 limbs");
  __extension__ using Int128 = __int128;
  __extension__ using UInt128 = unsigned __int128;
  // q in (-2^14 - 2, 2^29) (CrtSum): each q M_i fits in an int64.
  const auto q = static_cast<std::int32_t>(s.quotient(t));
  UInt128 sum = 0, product = 0;
  for (int i = 0; i < L; ++i) {
    const std::int64_t x = static_cast<std::int64_t>(s.limbs[i]) -
                           static_cast<std::int64_t>(q) * std::int64_t{t.product[i]};
    sum += static_cast<UInt128>(static_cast<Int128>(x)) << (32 * i);
    product |= static_cast<UInt128>(t.product[i]) << (32 * i);
  }
  auto d = static_cast<Int128>(sum - kCrtOffset);
  const auto half = static_cast<Int128>(product >> 1), m = static_cast<Int128>(product);
  if (d >= half) {
    d -= m;
  } else if (d < -half) {
    d += m;
  }
  const bool negative = d < 0;
  const UInt128 magnitude = negative ? -static_cast<UInt128>(d) : static_cast<UInt128>(d);
  const auto high = static_cast<std::uint64_t>(magnitude >> 64);
  const auto low = static_cast<std::uint64_t>(magnitude);
  // The window's lowest bit: 0 below 2^64 (taken = low, zero for D = 0: +0), otherwise 1 to 62
  // (high < 2^62).
  const int up = tcemu::detail::bit_width(high);
  const std::uint64_t taken = up == 0 ? low : (high << (64 - up)) | (low >> up);
  const bool sticky = up != 0 && (low << (64 - up)) != 0;
  return round_crt_window(negative, taken, sticky, up, shift);
}
#endif

// The binary64 number nearest to C' 2^-shift (round_crt_sum_limbs), by round_crt_sum_128 where
// M fits it.
template <int L>
TCEMU_HOST_DEVICE double round_crt_sum(const Table& t, const CrtSum<L>& s, std::int64_t shift) {
#if defined(__SIZEOF_INT128__)
  if constexpr (L <= 4) {
    return round_crt_sum_128<L>(t, s, shift);
  } else {
    return round_crt_sum_limbs<L>(t, s, shift);
  }
#else
  return round_crt_sum_limbs<L>(t, s, shift);
#endif
}

// One element: the sum over the table's moduli, rounded.
template <int L, class Residues>
TCEMU_HOST_DEVICE double reconstruct_in(const Table& t, const Residues& residues,
                                        std::int64_t shift) {
  CrtSum<L> sum;
  for (int l = 0; l < t.count; ++l) sum.add(t, l, residues(l));
  return round_crt_sum<L>(t, sum, shift);
}

// reconstruct_in with the table's own limb count.
template <class Residues>
TCEMU_HOST_DEVICE double reconstruct(const Table& t, const Residues& residues, std::int64_t shift) {
  switch (t.limbs) {
    case 1:
      return reconstruct_in<1>(t, residues, shift);
    case 2:
      return reconstruct_in<2>(t, residues, shift);
    case 3:
      return reconstruct_in<3>(t, residues, shift);
    case 4:
      return reconstruct_in<4>(t, residues, shift);
    case 5:
      return reconstruct_in<5>(t, residues, shift);
    case 6:
      return reconstruct_in<6>(t, residues, shift);
    case 7:
      return reconstruct_in<7>(t, residues, shift);
    case 8:
      return reconstruct_in<8>(t, residues, shift);
    case 9:
      return reconstruct_in<9>(t, residues, shift);
    case 10:
      return reconstruct_in<10>(t, residues, shift);
    case 11:
      return reconstruct_in<11>(t, residues, shift);
    case 12:
      return reconstruct_in<12>(t, residues, shift);
    default:
      return reconstruct_in<kLimbs>(t, residues, shift);
  }
}

}  // namespace tcemu::crt_elements
