// The element functions of the CRT residue steps (crt_steps.hpp: crt_residues,
// crt_product_residues): the residues modulo each modulus (crt_moduli.hpp) of an element scaled
// to an integer and of an int32 sum of the int8 GEMM.
#pragma once

#include <cstdint>

#include <tcemu/backend/crt_moduli.hpp>
#include <tcemu/emulator/fp64_bits.hpp>
#include <tcemu/emulator/host_device.hpp>

namespace tcemu::crt_elements {

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

}  // namespace tcemu::crt_elements
