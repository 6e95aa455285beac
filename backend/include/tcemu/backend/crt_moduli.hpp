// The moduli of the CRT steps (crt_steps.hpp) and their reductions: Ozaki scheme II (Ozaki,
// Uchino, Imamura 2025) on int8 integer tensor cores.
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
//
// The element functions of the CRT steps, one header per part of the scheme, shared by the host
// and the GPU backends so that both compute the same bits: crt_moduli.hpp (the moduli, their
// reductions and the table of 2^e mod m), crt_scaling.hpp (the shifts of the exact and the norm
// scaling), crt_bounds.hpp (dp's bound of |A||B| and its need criterion), crt_residues.hpp (the
// residues of the scaled elements and of the int32 products) and crt_reconstruction.hpp (the
// CRT table, sum and final rounding).
#pragma once

#include <cmath>
#include <cstdint>

#include <tcemu/emulator/fp32_bits.hpp>
#include <tcemu/emulator/host_device.hpp>

namespace tcemu::crt_elements {

// The moduli, in the order the scheme takes them (N moduli: the first N): 2^8, then odd numbers
// below 256 chosen pairwise coprime (255 = 3 5 17, 253 = 11 23, 247 = 13 19, 217 = 7 31 and
// primes other than those factors); crt_elements_test checks every gcd.
inline constexpr int kMaxModuli = 48;
inline constexpr int kModuli[kMaxModuli] = {
    256, 255, 253, 251, 247, 241, 239, 233, 229, 227, 223, 217, 211, 199, 197, 193,
    191, 181, 179, 173, 167, 163, 157, 151, 149, 139, 137, 131, 127, 113, 109, 107,
    103, 101, 97,  89,  83,  79,  73,  71,  67,  61,  59,  53,  47,  43,  41,  37};

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

}  // namespace tcemu::crt_elements
