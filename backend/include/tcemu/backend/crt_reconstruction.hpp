// The element functions of the CRT reconstruction (crt_steps.hpp: crt_reconstruct): the table of
// the moduli's CRT weights (crt_reconstruction.cpp), the CRT sum in multi-word integers and its
// rounding, once, to binary64.
#pragma once

#include <cstdint>

#include <tcemu/backend/crt_moduli.hpp>
#include <tcemu/emulator/fp64_bits.hpp>
#include <tcemu/emulator/host_device.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu::crt_elements {

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
// little-endian 32-bit limbs, and `limbs`, the limbs that hold M (M < 2^(32 limbs)); and the
// direction every result is rounded in (crt_reconstruct's, per call: nearest even unless the
// scheme's correctly rounded mode asks for a directed one).
struct Table {
  fp64::Direction direction = fp64::Direction::nearest_even;
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

// C' 2^-shift rounded to binary64 in the table's direction (nearest even, or directed:
// fp64::round), C' the integer of [-M/2, M/2) with C' = v_l mod m_l for the table's moduli, v_l =
// residues(l) any integer with |v_l| < 2^22 (a residue in (-m_l, m_l), or sum_congruent of an int32
// sum: no reduction needed); a zero is +0 (C' = 0, or a tiny C' 2^-shift rounded to zero: the sign
// the BLAS epilogue gives every zero, so that the scheme may write C directly). L (>= t.limbs) is
// the count of 32-bit limbs the arithmetic runs in.
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
// value would round twice). A directed rounding (d other than nearest even) goes straight to
// fp64::round, whose rule needs the same round and sticky bits. A magnitude rounded to zero gives
// +0, as C' = 0 does.
TCEMU_HOST_DEVICE inline double round_crt_window(bool negative, std::uint64_t taken, bool sticky,
                                                 int low_bit, std::int64_t shift,
                                                 fp64::Direction d) {
  const std::int64_t lsb = low_bit - shift;
  constexpr std::int64_t kLimit = 4000;  // beyond it every value overflows or rounds to zero
  const auto e = static_cast<int>(lsb < -kLimit ? -kLimit : lsb > kLimit ? kLimit : lsb);
  if (d == fp64::Direction::nearest_even) {
    const double rounded = static_cast<double>(taken | (sticky ? 1u : 0u));
    const int field = static_cast<int>(fp64::bits(rounded) >> 52) + e;
    if (field >= 1 && field <= 2046) return fp64::scale(negative ? -rounded : rounded, e);
  }
  const double r = fp64::round(negative, {taken, e, sticky}, d);
  return r == 0.0 ? 0.0 : r;
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
    return round_crt_window(negative, low, false, 0, shift, t.direction);  // +0 for D = 0
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
    return round_crt_window(negative, taken, sticky, low_bit, shift, t.direction);
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
  return round_crt_window(negative, taken, sticky, up, shift, t.direction);
}
#endif

// C' 2^-shift rounded in the table's direction (round_crt_sum_limbs), by round_crt_sum_128 where
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
