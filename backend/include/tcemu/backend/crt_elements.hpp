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
// so every partial sum is below k 2^14 < 2^31 (integer_gemm_steps.hpp). C' is rebuilt exactly
// by Garner's mixed-radix algorithm in multi-word integers, and C_ij = C'_ij 2^-(sA_i + sB_j)
// rounded once to binary64: when A' and B' hold A and B exactly (the shift of every vector at
// least minus the exponent of its lowest set bit) that is the correctly rounded product.
#pragma once

#include <cstdint>

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

// 32-bit limbs of M = the product of all 48 moduli (< 2^384) with room to spare.
inline constexpr int kLimbs = 13;

// What the reconstruction needs about the first `count` moduli: the moduli (a copy that device
// code can read), inverse[l][j] = m_j^-1 mod m_l for j < l (the moduli are pairwise coprime),
// and M (little-endian 32-bit limbs).
struct Table {
  int count = 0;
  std::uint16_t moduli[kMaxModuli] = {};
  std::uint8_t inverse[kMaxModuli][kMaxModuli] = {};
  std::uint32_t product[kLimbs] = {};
};

// The table of the first `count` (1..kMaxModuli) moduli.
Table table(int count);
// floor(log2 M) for the first `count` moduli.
int product_bits(int count);

// The vector summary of crt_scale: |v_p| < 2^top for every finite v_p, and every finite v_p is
// a multiple of 2^low (the exponent of its lowest set bit); empty when no element is nonzero.
struct VectorBits {
  int top = -100000;
  int low = 100000;
  TCEMU_HOST_DEVICE bool empty() const { return top == -100000; }
  TCEMU_HOST_DEVICE void add(double x) {
    const std::uint64_t b = fp64::bits(x);
    if (!fp64::is_finite(b) || fp64::is_zero(b)) return;
    const fp64::Fields f = fp64::fields(x);
    int trailing = 0;
    while (((f.significand >> trailing) & 1) == 0) ++trailing;
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

// x mod m for 0 <= x < 2^22 and 2 <= m <= 256, without an integer division (slow on a GPU):
// q = trunc(x * float(1/m)) is floor(x / m) or off by one (float(1/m) and the product each carry
// a relative error below 2^-24, so q is within x / m 2^-23 < 1 of x / m), and one correction
// each way makes the remainder exact; the result is the integer x mod m on every machine.
TCEMU_HOST_DEVICE inline int mod_small(int x, int m) {
  const float reciprocal = 1.0f / static_cast<float>(m);
  const int q = static_cast<int>(static_cast<float>(x) * reciprocal);
  int r = x - q * m;
  if (r < 0) r += m;
  if (r >= m) r -= m;
  return r;
}

// 2^e mod m for e >= 0 (square and multiply; m <= 256, so every product is below 2^16).
TCEMU_HOST_DEVICE inline int power_of_two_mod(int e, int m) {
  int result = mod_small(1, m), base = mod_small(2, m);
  while (e > 0) {
    if (e & 1) result = mod_small(result * base, m);
    base = mod_small(base * base, m);
    e >>= 1;
  }
  return result;
}

// s mod m for s < 2^64, from its 16-bit pieces (Horner in base 2^16 mod m: every intermediate
// is below 256 * 2^16 + 2^16 < 2^22).
TCEMU_HOST_DEVICE inline int mod_u64(std::uint64_t s, int m) {
  const int base = mod_small(1 << 16, m);
  int r = 0;
  for (int shift = 48; shift >= 0; shift -= 16) {
    r = mod_small(r * base + static_cast<int>((s >> shift) & 0xFFFF), m);
  }
  return r;
}

// The residue in [-(m - 1) / 2, m / 2 - 1] for even m ([-128, 127] for 256), [-(m-1)/2, (m-1)/2]
// for odd m, of the integer r mod m given r in [0, m).
TCEMU_HOST_DEVICE inline int symmetric(int r, int m) {
  return r > (m - 1) / 2 ? r - m : r;
}

// The residue modulo m (symmetric) of the integer a = x 2^shift rounded to nearest even (x
// finite; Inf and NaN give 0: the epilogue puts their special values in). Exact: |x| = s 2^f
// (fields), so a = s 2^(f + shift) when f + shift >= 0, and otherwise s shifted right with
// round half to even (s < 2^53: a shift of 54 or more rounds every s to 0).
TCEMU_HOST_DEVICE inline int scaled_residue(double x, int shift, int m) {
  const std::uint64_t b = fp64::bits(x);
  if (!fp64::is_finite(b) || fp64::is_zero(b)) return 0;
  const fp64::Fields f = fp64::fields(x);
  const int g = f.exponent + shift;
  int r = 0;
  if (g >= 0) {
    r = g < 11 ? mod_u64(f.significand << g, m)  // s 2^g < 2^64
               : mod_small(mod_u64(f.significand, m) * power_of_two_mod(g, m), m);
  } else if (g > -54) {
    const int down = -g;
    std::uint64_t q = f.significand >> down;
    const std::uint64_t rest = f.significand & ((std::uint64_t{1} << down) - 1);
    const std::uint64_t half = std::uint64_t{1} << (down - 1);
    if (rest > half || (rest == half && (q & 1) != 0)) ++q;
    r = mod_u64(q, m);
  }
  if (f.negative && r != 0) r = m - r;
  return symmetric(r, m);
}

// The binary64 number nearest to C' 2^-shift, C' the integer of [-M/2, M/2) whose residues
// modulo the table's moduli are products[l] mod m_l (each products[l] an integer, |.| < 2^31, as
// integer_gemm writes it), ties to even; +0 for C' = 0. `products(l)` returns products[l].
template <class Products>
TCEMU_HOST_DEVICE double reconstruct(const Table& t, const Products& products, std::int64_t shift) {
  // Garner: C' mod M = v_0 + m_0 (v_1 + m_1 (v_2 + ...)), 0 <= v_l < m_l.
  int v[kMaxModuli];
  for (int l = 0; l < t.count; ++l) {
    const int m = t.moduli[l];
    // |products(l)| < 2^31: its residue from the magnitude's 16-bit pieces.
    const auto p = static_cast<std::int64_t>(products(l));
    int r = mod_u64(static_cast<std::uint64_t>(p < 0 ? -p : p), m);
    if (p < 0 && r != 0) r = m - r;
    for (int j = 0; j < l; ++j) {
      // (r - v_j) m_j^-1 mod m: r - (v_j mod m) + m lies in [1, 2m), times the inverse below
      // 2^17.
      r = mod_small((r - mod_small(v[j], m) + m) * t.inverse[l][j], m);
    }
    v[l] = r;
  }
  std::uint32_t c[kLimbs] = {};
  for (int l = t.count - 1; l >= 0; --l) {
    std::uint64_t carry = static_cast<std::uint64_t>(v[l]);
    for (int i = 0; i < kLimbs; ++i) {
      const std::uint64_t x = static_cast<std::uint64_t>(c[i]) * t.moduli[l] + carry;
      c[i] = static_cast<std::uint32_t>(x);
      carry = x >> 32;
    }
  }
  // C' >= M / 2, i.e. 2 C' >= M, stands for C' - M, whose magnitude is M - C' (C' < M <
  // 2^384: limb 12 is zero and 2 C' fits the limbs).
  int compare = 0;
  for (int i = kLimbs - 1; i >= 0 && compare == 0; --i) {
    const std::uint32_t twice = (c[i] << 1) | (i > 0 ? c[i - 1] >> 31 : 0u);
    if (twice != t.product[i]) compare = twice > t.product[i] ? 1 : -1;
  }
  const bool negative = compare >= 0;
  if (negative) {
    std::uint32_t borrow = 0;
    for (int i = 0; i < kLimbs; ++i) {
      const std::uint64_t x = static_cast<std::uint64_t>(t.product[i]) - c[i] - borrow;
      c[i] = static_cast<std::uint32_t>(x);
      borrow = static_cast<std::uint32_t>(x >> 63);
    }
  }
  int top = kLimbs - 1;
  while (top >= 0 && c[top] == 0) --top;
  if (top < 0) return 0.0;
  // The magnitude as `taken` 2^low_bit plus a sticky bit for the nonzero bits below low_bit:
  // the 64 bits from the leading one down (all of it when it has fewer than 64 bits).
  int lead = 31;
  while (((c[top] >> lead) & 1) == 0) --lead;
  const int msb = top * 32 + lead;
  const int low_bit = msb < 64 ? 0 : msb - 63;
  const auto limb_at = [&](int i) { return i >= 0 && i < kLimbs ? c[i] : 0u; };
  const int word = low_bit / 32, offset = low_bit % 32;
  // Bits low_bit .. low_bit + 63 lie in limbs word .. word + 2.
  const std::uint64_t w0 = limb_at(word), w1 = limb_at(word + 1), w2 = limb_at(word + 2);
  const std::uint64_t taken =
      offset == 0 ? (w0 | (w1 << 32))
                  : ((w0 >> offset) | (w1 << (32 - offset)) | (w2 << (64 - offset)));
  bool sticky = offset != 0 && (w0 & ((std::uint64_t{1} << offset) - 1)) != 0;
  for (int i = 0; i < word && !sticky; ++i) sticky = c[i] != 0;
  const std::int64_t lsb = low_bit - shift;
  constexpr std::int64_t kLimit = 4000;  // beyond it every value overflows or rounds to zero
  const auto e = static_cast<int>(lsb < -kLimit ? -kLimit : lsb > kLimit ? kLimit : lsb);
  return fp64::round_nearest_even(negative, {taken, e, sticky});
}

}  // namespace tcemu::crt_elements
