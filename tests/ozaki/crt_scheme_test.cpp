// Ozaki scheme II (CrtProducts): the moduli and their table, the residue and reconstruction
// element functions against direct integer arithmetic, and the scheme through the handle: CR
// against MPFR at every spread, tunable mode's accuracy against its moduli count,
// reproducibility across threads and blocking, special values, and the refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/backend/crt_bounds.hpp>
#include <tcemu/backend/crt_moduli.hpp>
#include <tcemu/backend/crt_reconstruction.hpp>
#include <tcemu/backend/crt_residues.hpp>
#include <tcemu/backend/crt_scaling.hpp>
#include <tcemu/host/host_backends.hpp>
#include <tcemu/ozaki/handle.hpp>

#include "ozaki_support.hpp"

namespace tcemu::ozaki {
namespace {

namespace el = crt_elements;
using testing::correctly_rounded_product;
using testing::max_relative_error;
using testing::phi_matrix;
using testing::plain_dgemm;
using testing::same_product_bits;

const Products kCrt = CrtProducts{};

// GCC's 128-bit integers (their conversion to double is correctly rounded): the test's oracle.
__extension__ using Int128 = __int128;
__extension__ using UInt128 = unsigned __int128;

std::vector<double> run(Backend& backend, Options options, std::int64_t m, std::int64_t n,
                        std::int64_t k, const std::vector<double>& a, const std::vector<double>& b,
                        Report* report = nullptr) {
  Handle h(backend, kCrt, options);
  std::vector<double> c(static_cast<std::size_t>(m * n), std::numeric_limits<double>::quiet_NaN());
  h.dgemm('N', 'N', m, n, k, 1.0, a.data(), m, b.data(), k, 0.0, c.data(), m);
  if (report) *report = h.report();
  return c;
}

// What the bound steps' tests start from: A (m x k) and B (k x n), column major, at the start of
// `buffer`, and their rows' and columns' norm shifts and VectorNorms from crt_norm_scale (gamma
// 60: the bound shift of every count dp takes); the caller's data from free_at on. The buffer
// holds bound_inputs_bytes(m, n, k) and what the caller puts there; vectors of up to 16
// elements (kVectorBytes each).
constexpr std::size_t kVectorBytes = 64;

struct BoundInputs {
  RealMatrix a, b;
  ExponentVector shifts_a, shifts_b;
  VectorNorms norms_a, norms_b;
  std::size_t free_at;
};

std::size_t bound_inputs_bytes(std::int64_t m, std::int64_t n, std::int64_t k) {
  return static_cast<std::size_t>((m + n) * k) * 8 + 8 * kVectorBytes;
}

BoundInputs bound_inputs(Backend& backend, Buffer& buffer, std::int64_t m, std::int64_t n,
                         std::int64_t k, const std::vector<double>& a,
                         const std::vector<double>& b) {
  if (m > 16 || n > 16) throw std::invalid_argument("bound_inputs: at most 16 rows and columns");
  const std::size_t b_at = a.size() * 8, v_at = b_at + b.size() * 8;
  const auto vector = [&](std::size_t index, std::int64_t size) {
    return ExponentVector{&buffer, v_at + index * kVectorBytes, size};
  };
  backend.copy_in(a.data(), buffer, a.size() * 8);
  backend.copy_in(b.data(), buffer, b.size() * 8, b_at);
  BoundInputs in{{&buffer, 0, Real::fp64, m, k, m, Layout::column_major},
                 {&buffer, b_at, Real::fp64, k, n, k, Layout::column_major},
                 vector(0, m),
                 vector(1, n),
                 {vector(2, m), vector(3, m), vector(4, m)},
                 {vector(5, n), vector(6, n), vector(7, n)},
                 v_at + 8 * kVectorBytes};
  backend.crt_norm_scale(in.a, SplitAxis::rows, el::kNormBoundBits, 60, in.shifts_a, &in.norms_a);
  backend.crt_norm_scale(in.b, SplitAxis::columns, el::kNormBoundBits, 60, in.shifts_b,
                         &in.norms_b);
  return in;
}

TEST(CrtElements, ModuliArePairwiseCoprimeAndTheTableInvertsThem) {
  for (int l = 0; l < el::kMaxModuli; ++l) {
    EXPECT_LE(el::kModuli[l], 256);
    for (int j = 0; j < l; ++j) EXPECT_EQ(std::gcd(el::kModuli[l], el::kModuli[j]), 1) << l << j;
  }
  // For every count: the weight w_l times m_l is M times the inverse of M / m_l modulo m_l, w_l
  // is 1 modulo m_l and 0 modulo every other modulus, fraction and offset_fraction are 2^32 w_l /
  // M and 2^32 kCrtOffset / M rounded, M / 2 doubled is M, and M fills exactly `limbs` limbs.
  const auto remainder = [](const std::uint32_t* x, int m) {
    std::uint64_t r = 0;
    for (int i = el::kLimbs - 1; i >= 0; --i) r = ((r << 32) | x[i]) % static_cast<unsigned>(m);
    return static_cast<int>(r);
  };
  const auto times = [](const std::uint32_t* x, int factor) {
    std::vector<std::uint32_t> y(el::kLimbs + 1);
    std::uint64_t carry = 0;
    for (int i = 0; i < el::kLimbs; ++i) {
      const std::uint64_t z = std::uint64_t{x[i]} * static_cast<unsigned>(factor) + carry;
      y[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(z);
      carry = z >> 32;
    }
    y.back() = static_cast<std::uint32_t>(carry);
    return y;
  };
  for (int count = 1; count <= el::kMaxModuli; ++count) {
    const el::Table t = el::table(count);
    ASSERT_EQ(t.count, count);
    for (int l = 0; l < count; ++l) {
      const int m = el::kModuli[l], inverse = t.cofactor_inverse[l];
      ASSERT_EQ(times(t.weight[l], m), times(t.product, inverse)) << count << " " << l;
      for (int j = 0; j < count; ++j) {
        EXPECT_EQ(remainder(t.weight[l], el::kModuli[j]), j == l ? 1 : 0) << count << " " << l;
      }
      const std::int64_t error =
          std::int64_t{t.fraction[l]} * m - (static_cast<std::int64_t>(inverse) << 32);
      EXPECT_LE(2 * std::abs(error), m) << count << " " << l;
    }
    if (el::product_bits(count) <= 56) {
      const auto product = static_cast<Int128>(t.product[0] | std::uint64_t{t.product[1]} << 32);
      const Int128 error =
          static_cast<Int128>(t.offset_fraction) * product - (static_cast<Int128>(1) << 54);
      EXPECT_LE(2 * (error < 0 ? -error : error), product) << count;
    } else {
      EXPECT_EQ(t.offset_fraction, 0u) << count;
    }
    for (int i = 0; i < el::kLimbs; ++i) {
      const std::uint32_t doubled = (t.half[i] << 1) | (i > 0 ? t.half[i - 1] >> 31 : 0u);
      EXPECT_EQ(doubled, t.product[i]) << count << " " << i;
    }
    EXPECT_EQ(t.limbs, el::product_bits(count) / 32 + 1) << count;  // 2^pb <= M < 2^(pb + 1)
    EXPECT_NE(t.product[t.limbs - 1], 0u) << count;
    for (int i = t.limbs; i < el::kLimbs; ++i) EXPECT_EQ(t.product[i], 0u) << count;
  }
  EXPECT_EQ(el::table(1).limbs, 1);
  // floor(log2 M): 8 for 256 alone, 15 for 256 * 255 = 65280, and growing with every modulus.
  EXPECT_EQ(el::product_bits(1), 8);
  EXPECT_EQ(el::product_bits(2), 15);
  for (int l = 2; l <= el::kMaxModuli; ++l) EXPECT_GT(el::product_bits(l), el::product_bits(l - 1));
  EXPECT_THROW(el::table(0), std::invalid_argument);
  EXPECT_THROW(el::table(el::kMaxModuli + 1), std::invalid_argument);
}

TEST(CrtElements, ScaledResidueIsTheResidueOfTheRoundedInteger) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_int_distribution<int> shifts(-10, 63);
  int rounded = 0, exact = 0, wide = 0;
  for (int t = 0; t < 20000; ++t) {
    const double x = std::ldexp(unit(rng), std::uniform_int_distribution<int>(-20, 20)(rng));
    const int shift = shifts(rng);
    const double scaled = std::ldexp(x, shift);
    if (std::fabs(scaled) >= 0x1p63) continue;
    // nearbyint rounds to nearest even in the default mode; the scaled value is exact.
    const auto a = static_cast<std::int64_t>(std::nearbyint(scaled));
    (scaled == std::nearbyint(scaled) ? exact : rounded) += 1;
    wide += std::fabs(scaled) >= 0x1p52 ? 1 : 0;  // all three 22-bit chunks of residue_chunks
    for (const int m : el::kModuli) {
      std::int64_t r = a % m;
      if (r < 0) r += m;
      if (r > (m - 1) / 2) r -= m;
      ASSERT_EQ(el::scaled_residue(x, shift, el::modulus(m)), r)
          << x << " 2^" << shift << " mod " << m;
    }
  }
  EXPECT_GT(rounded, 1000);  // both paths of scaled_residue taken
  EXPECT_GT(exact, 1000);
  EXPECT_GT(wide, 1000);
  EXPECT_EQ(el::scaled_residue(INFINITY, 3, el::modulus(251)), 0);
  EXPECT_EQ(el::scaled_residue(std::nan(""), 3, el::modulus(251)), 0);
  EXPECT_EQ(el::scaled_residue(-0.0, 3, el::modulus(251)), 0);
  EXPECT_EQ(el::scaled_residue(0.5, 0, el::modulus(251)), 0);  // a tie: rounds to the even 0
  EXPECT_EQ(el::scaled_residue(1.5, 0, el::modulus(251)), 2);  // a tie: rounds to the even 2
  EXPECT_EQ(el::scaled_residue(-2.5, 0, el::modulus(251)), -2);
  EXPECT_EQ(el::scaled_residue(0x1p-1074, 1100, el::modulus(255)),
            el::power_of_two_mod(26, el::modulus(255)));
}

// The compile-time table of 2^e mod m (crt_moduli.hpp, power_residues): symmetric and
// congruent to power_of_two_mod, which is checked against 2^e mod m in 128-bit integers where
// those hold 2^e; the table covers the powers of every integer below M (< 2^384) that
// scaled_integer gives a power.
TEST(CrtElements, PowerResiduesAreTwoToThePowerModM) {
  constexpr el::PowerResidues table = el::power_residues();
  static_assert(el::kTablePowers + 52 >= 384);
  for (int l = 0; l < el::kMaxModuli; ++l) {
    const el::Modulus d = el::modulus(el::kModuli[l]);
    for (int e = 0; e < el::kPowerResidueCount; ++e) {
      const int expected = el::power_of_two_mod(e, d), got = table.of[l][e];
      ASSERT_EQ((got - expected) % d.m, 0) << "m = " << d.m << ", e = " << e;
      ASSERT_TRUE(-(d.m / 2) <= got && got <= (d.m - 1) / 2) << "m = " << d.m << ", e = " << e;
      if (e < 128) {
        const UInt128 two = static_cast<UInt128>(1) << e;
        ASSERT_EQ(static_cast<int>(two % static_cast<unsigned>(d.m)), expected)
            << "m = " << d.m << ", e = " << e;
      }
    }
  }
}

// table_chunk_sum's residue (reduce_odd, or the low byte for 256) is residue's for every modulus,
// on integers with powers from 1 to kTablePowers - 1 and without (power 0), the largest chunks
// and both signs, and the weighted sum stays below 2^31 (chunk_sum's bound).
TEST(CrtElements, TableChunkSumGivesTheResidueOfEveryPower) {
  constexpr el::PowerResidues table = el::power_residues();
  std::mt19937_64 rng(33);
  int powers = 0, top = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    el::ScaledInteger a;
    a.magnitude = trial % 7 == 0 ? (std::uint64_t{1} << 53) - 1 : rng() >> (11 + rng() % 53);
    a.power = trial % 5 == 0 ? 0 : 1 + static_cast<int>(rng() % (el::kTablePowers - 1));
    if (trial % 3 == 0) a.power = el::kTablePowers - 1;
    if (a.power == 0 && trial % 2 == 0) a.magnitude = ~std::uint64_t{0};  // 64 bits, no power
    a.negative = rng() % 2 == 0;
    const el::ResidueChunks c = el::residue_chunks(a);
    powers += c.power > 0 ? 1 : 0;
    top = std::max(top, c.power);
    for (int l = 0; l < el::kMaxModuli; ++l) {
      const el::Modulus d = el::modulus(el::kModuli[l]);
      const int u = el::table_chunk_sum(c, table.of[l]);
      const std::int64_t wide = std::int64_t{c.chunk[0]} * table.of[l][c.power] +
                                std::int64_t{c.chunk[1]} * table.of[l][c.power + 22] +
                                std::int64_t{c.chunk[2]} * table.of[l][c.power + 44];
      ASSERT_EQ(u, wide);
      ASSERT_LT(std::abs(wide), std::int64_t{1} << 31);
      const int r = d.m == 256 ? static_cast<std::int8_t>(u) : el::reduce_odd(u, d);
      ASSERT_EQ(r, el::residue(c, d)) << "m = " << d.m << ", power " << c.power << ", magnitude "
                                      << a.magnitude << (a.negative ? " negative" : "");
    }
  }
  EXPECT_GT(powers, 10000);
  EXPECT_EQ(top, el::kTablePowers - 1);
}

// exact_double's bit trick (crt_residues.hpp) against the conversion: both ends of int32, the
// powers of two and their neighbours, and random values.
TEST(CrtElements, ExactDoubleIsTheInt32) {
  std::vector<int> values = {0, 1, -1, std::numeric_limits<int>::max(),
                             std::numeric_limits<int>::min()};
  for (int e = 0; e < 31; ++e) {
    for (const int d : {-1, 0, 1}) {
      values.push_back((1 << e) + d);
      values.push_back(-(1 << e) + d);
    }
  }
  std::mt19937 rng(11);
  for (int t = 0; t < 100000; ++t) values.push_back(static_cast<int>(rng()));
  for (const int u : values) {
    ASSERT_EQ(std::bit_cast<std::uint64_t>(el::exact_double(u)),
              std::bit_cast<std::uint64_t>(static_cast<double>(u)))
        << u;
  }
}

// symmetric_small without a correction step (crt_moduli.hpp: the nearest quotient is exact for
// the odd moduli, 256 is the low byte): every |t| < 2^22 for every modulus.
TEST(CrtElements, SymmetricSmallIsExactForEveryInputItTakes) {
  for (const int m : el::kModuli) {
    const el::Modulus d = el::modulus(m);
    for (int t = -(1 << 22) + 1; t < (1 << 22); ++t) {
      int r = t % m;
      if (r < 0) r += m;
      if (r > (m - 1) / 2) r -= m;
      ASSERT_EQ(el::symmetric_small(t, d), r) << t << " mod " << m;
    }
  }
}

// sum_residue is the symmetric residue of an int32 sum; sum_congruent (what the reconstruction
// takes) is congruent to it with |v| < 2^22, reconstruct's bound, at the int32 extremes too.
TEST(CrtElements, SumResidueIsSymmetricAndSumCongruentStaysBelow2To22) {
  std::mt19937_64 rng(4);
  std::vector<std::int32_t> sums = {0,         1,       -1,         INT32_MAX, INT32_MIN + 1,
                                    INT32_MIN, 1 << 16, -(1 << 16), 65535,     -65535};
  for (int t = 0; t < 20000; ++t) sums.push_back(static_cast<std::int32_t>(rng()));
  for (const std::int32_t p : sums) {
    for (int l = 0; l < el::kMaxModuli; ++l) {
      const int m = el::kModuli[l];
      std::int64_t r = std::int64_t{p} % m;
      if (r < 0) r += m;
      if (r > (m - 1) / 2) r -= m;
      ASSERT_EQ(el::sum_residue(p, el::modulus(m)), r) << p << " mod " << m;
      const int v = el::sum_congruent(p, el::modulus(m));
      ASSERT_LT(std::abs(v), 1 << 22) << p << " mod " << m;
      ASSERT_EQ(((std::int64_t{v} - p) % m + m) % m, 0) << p << " mod " << m;
    }
  }
}

// The correctly rounded binary64 value of value 2^-shift (GCC's Int128 -> double conversion is
// correctly rounded; the scaling by a power of two is exact away from overflow and subnormals).
double scaled_value(Int128 value, int shift) {
  return std::ldexp(static_cast<double>(value), -shift);
}

// The residues of C' as reconstruct takes them, any integers congruent to C' below 2^22 in
// magnitude: the symmetric residue, the C++ remainder (in (-m, m), the sign of C'), or either
// plus a multiple of m (as sum_congruent gives them), the largest such multiple one time in
// eight.
std::vector<int> residues_of(Int128 value, int count, std::mt19937_64& rng) {
  constexpr int kBound = (1 << 22) - 1;
  std::vector<int> r;
  for (int l = 0; l < count; ++l) {
    const int m = el::kModuli[l];
    auto x = static_cast<int>(value % m);
    const auto choice = rng() % 8;
    if (choice % 2 == 0) {
      if (x < 0) x += m;
      if (x > (m - 1) / 2) x -= m;  // the symmetric residue; otherwise x in (-m, m) as it is
    }
    if (choice == 6) {
      x += (kBound - x) / m * m;  // the largest below 2^22
    } else if (choice == 7) {
      x -= (kBound + x) / m * m;  // the smallest above -2^22
    } else if (choice >= 4) {
      x += m * std::uniform_int_distribution<int>(-kBound / m + 1, kBound / m - 1)(rng);
    }
    r.push_back(x);
  }
  return r;
}

// residues_of gives what it claims: every value congruent and below 2^22 in magnitude, residues
// in (-m, m) and beyond, and values within m of either bound.
TEST(CrtElements, ResiduesOfGivesEveryKindOfRepresentative) {
  std::mt19937_64 rng(9);
  int small = 0, beyond = 0, top = 0, bottom = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const auto value = static_cast<Int128>((static_cast<UInt128>(rng()) << 64) | rng()) >> 8;
    const std::vector<int> residues = residues_of(value, 16, rng);
    for (int l = 0; l < 16; ++l) {
      const int m = el::kModuli[l], v = residues[static_cast<std::size_t>(l)];
      ASSERT_LT(std::abs(v), 1 << 22);
      ASSERT_EQ((static_cast<Int128>(v) - value) % m, 0);
      small += std::abs(v) < m ? 1 : 0;
      beyond += std::abs(v) >= m ? 1 : 0;
      top += v > (1 << 22) - 1 - m ? 1 : 0;
      bottom += v < -(1 << 22) + 1 + m ? 1 : 0;
    }
  }
  EXPECT_GT(small, 10000);
  EXPECT_GT(beyond, 10000);
  EXPECT_GT(top, 2000);
  EXPECT_GT(bottom, 2000);
}

TEST(CrtElements, ReconstructRoundsTheIntegerOnce) {
  // C' = s (hi 2^64 + lo) with |C'| < 2^127 (< M / 2), and the expected value from the correctly
  // rounded Int128 -> double conversion scaled exactly; with 16 moduli (4 limbs: the 128-bit
  // path, C' below 2^124), 18 (5 limbs) and 48 (12 limbs).
  std::mt19937_64 rng(5);
  ASSERT_GE(el::product_bits(16), 125);
  ASSERT_GE(el::product_bits(18), 129);
  for (const int count : {16, 18, el::kMaxModuli}) {
    const el::Table t = el::table(count);
    const int most_bits = count == 16 ? 124 : 126;
    int ties = 0;
    for (int trial = 0; trial < 20000; ++trial) {
      const int bits = std::uniform_int_distribution<int>(1, most_bits)(rng);
      UInt128 mag = (static_cast<UInt128>(rng()) << 64) | rng();
      mag >>= (128 - bits);
      if (trial % 4 == 0) {  // a tie at the 54th bit: 2^(bits-1) + 2^(bits-54) (+ 2^(bits-53))
        if (bits < 60) continue;
        mag = (static_cast<UInt128>(1) << (bits - 1)) | (static_cast<UInt128>(1) << (bits - 55)) |
              (static_cast<UInt128>(trial % 8 == 0) << (bits - 54));
        ++ties;
      }
      const bool negative = (trial & 1) != 0;
      const Int128 value = negative ? -static_cast<Int128>(mag) : static_cast<Int128>(mag);
      const std::vector<int> residues = residues_of(value, count, rng);
      const int shift = std::uniform_int_distribution<int>(-100, 300)(rng);
      const double got = el::reconstruct(
          t, [&](int l) { return residues[static_cast<std::size_t>(l)]; }, shift);
      ASSERT_EQ(std::bit_cast<std::uint64_t>(got),
                std::bit_cast<std::uint64_t>(scaled_value(value, shift)))
          << count << " moduli, bits " << bits << " shift " << shift;
    }
    EXPECT_GT(ties, 1000);
    const auto zero = el::reconstruct(
        t, [](int l) { return 0 * l; }, 0);
    EXPECT_EQ(std::bit_cast<std::uint64_t>(zero), 0u);
  }
}

// RN(value 2^-shift) where that lies below the smallest normal 2^-1022: value rounded to nearest
// even onto the grid 2^(shift - 1074) by integer arithmetic (already on it for shift <= 1074),
// then scaled exactly.
double subnormal_value(Int128 value, int shift) {
  const bool negative = value < 0;
  const UInt128 mag = negative ? -static_cast<UInt128>(value) : static_cast<UInt128>(value);
  const int down = shift - 1074;
  UInt128 q = 0;
  if (down <= 0) {
    q = mag << -down;
  } else if (down < 128) {
    q = mag >> down;
    const UInt128 rest = mag - (q << down), half = static_cast<UInt128>(1) << (down - 1);
    if (rest > half || (rest == half && (q & 1) != 0)) ++q;
  }
  const double result = std::ldexp(static_cast<double>(q), -1074);  // q <= 2^52: exact
  return negative && q != 0 ? -result : result;                     // a zero as +0 (round_crt_sum)
}

TEST(CrtElements, ReconstructRoundsOnceIntoTheSubnormalRangeAndOverflowsToInf) {
  // The values round_crt_sum rounds outside binary64's normal range: onto the subnormal grid
  // (a rounding of its own, not the fast path's conversion then scaling) and past the largest
  // finite value; and next to both ends of the normal range, where the fast path scales.
  // 16 moduli (4 limbs, the 128-bit path, C' below 2^124) and 18 (5 limbs).
  std::mt19937_64 rng(7);
  const el::Table tables[2] = {el::table(16), el::table(18)};
  int subnormal = 0, overflow = 0, edge = 0;
  for (int trial = 0; trial < 40000; ++trial) {
    const int count = trial < 20000 ? 16 : 18;
    const el::Table& t = tables[trial < 20000 ? 0 : 1];
    const int bits = std::uniform_int_distribution<int>(1, count == 16 ? 124 : 126)(rng);
    UInt128 mag = (static_cast<UInt128>(rng()) << 64) | rng();
    mag >>= (128 - bits);
    mag |= static_cast<UInt128>(1) << (bits - 1);
    const bool negative = (trial & 1) != 0;
    const Int128 value = negative ? -static_cast<Int128>(mag) : static_cast<Int128>(mag);
    const std::vector<int> residues = residues_of(value, count, rng);
    // The leading bit at 2^(bits - 1 - shift): below -1022 (subnormal), above 1023 (Inf), or
    // within 4 of either end.
    const int kind = trial % 3;
    const int lead = kind == 0 ? std::uniform_int_distribution<int>(-1080, -1023)(rng)
                     : kind == 1
                         ? std::uniform_int_distribution<int>(1024, 1100)(rng)
                         : (rng() % 2 == 0 ? std::uniform_int_distribution<int>(-1022, -1018)(rng)
                                           : std::uniform_int_distribution<int>(1019, 1023)(rng));
    const int shift = bits - 1 - lead;
    const double got = el::reconstruct(
        t, [&](int l) { return residues[static_cast<std::size_t>(l)]; }, shift);
    double expected = 0.0;
    if (kind == 0) {
      expected = subnormal_value(value, shift);
      ++subnormal;
    } else if (kind == 1) {
      expected = negative ? -INFINITY : INFINITY;
      ++overflow;
    } else {
      expected = scaled_value(value, shift);  // normal unless it rounds up past 2^1024: Inf
      ++edge;
    }
    ASSERT_EQ(std::bit_cast<std::uint64_t>(got), std::bit_cast<std::uint64_t>(expected))
        << "bits " << bits << " shift " << shift;
  }
  EXPECT_GT(subnormal, 10000);
  EXPECT_GT(overflow, 10000);
  EXPECT_GT(edge, 10000);
}

TEST(CrtElements, FourLimbProductsStayBelow2To126) {
  // round_crt_sum_128's premise: every table of at most 4 limbs has M < 2^126, so D in (-M, M)
  // is a 128-bit two's complement integer; the first table past it has 5 limbs.
  int four_limb_tables = 0;
  for (int count = 1; count <= el::kMaxModuli; ++count) {
    if (el::table(count).limbs > 4) {
      EXPECT_EQ(el::table(count).limbs, 5) << count;
      break;
    }
    ++four_limb_tables;
    EXPECT_LE(el::product_bits(count), 125) << count;
  }
  EXPECT_EQ(four_limb_tables, 16);
}

TEST(CrtElements, ReconstructCoversTheWholeRangeUpToHalfTheProduct) {
  // For 1 to 16 moduli (M < 2^126, every table of at most 4 limbs: the 128-bit path): C' at
  // and next to -M/2 and M/2 - 1 (where the estimate of round(S / M) may be off by one and the
  // correction runs) and spread over [-M/2, M/2). The limb path (round_crt_sum_limbs) gives the
  // same bits in 4 limbs and in 7 (zero limbs above M: up to 4 whole-limb moves).
  std::mt19937_64 rng(6);
  for (int count = 1; count <= 16; ++count) {
    const el::Table t = el::table(count);
    Int128 product = 1;
    for (int l = 0; l < count; ++l) product *= el::kModuli[l];
    const Int128 half = product / 2;
    std::vector<Int128> values = {-half,    -half + 1, -half + 2, half - 1, half - 2,
                                  half - 3, 0,         1,         -1};
    for (int trial = 0; trial < 2000; ++trial) {
      const UInt128 r = (static_cast<UInt128>(rng()) << 64) | rng();
      values.push_back(static_cast<Int128>(r % static_cast<UInt128>(product)) - half);
    }
    for (const Int128 value : values) {
      const std::vector<int> residues = residues_of(value, count, rng);
      const int shift = std::uniform_int_distribution<int>(-50, 150)(rng);
      const double got = el::reconstruct(
          t, [&](int l) { return residues[static_cast<std::size_t>(l)]; }, shift);
      ASSERT_EQ(std::bit_cast<std::uint64_t>(got),
                std::bit_cast<std::uint64_t>(scaled_value(value, shift)))
          << count << " moduli, C' = " << static_cast<double>(value) << " shift " << shift;
      el::CrtSum<4> four;
      el::CrtSum<7> seven;
      for (int l = 0; l < count; ++l) {
        four.add(t, l, residues[static_cast<std::size_t>(l)]);
        seven.add(t, l, residues[static_cast<std::size_t>(l)]);
      }
      ASSERT_EQ(std::bit_cast<std::uint64_t>(el::round_crt_sum_limbs<4>(t, four, shift)),
                std::bit_cast<std::uint64_t>(got))
          << count << " moduli, C' = " << static_cast<double>(value) << " shift " << shift;
      ASSERT_EQ(std::bit_cast<std::uint64_t>(el::round_crt_sum_limbs<7>(t, seven, shift)),
                std::bit_cast<std::uint64_t>(got))
          << count << " moduli, C' = " << static_cast<double>(value) << " shift " << shift;
    }
  }
}

TEST(CrtSteps, ProductResiduesAreTheReducedIntegerProductOrItsSumsAndBadCallsAreNamed) {
  // A (m x k, row major) and B (k x n, column major) with int8 values at both ends of the range,
  // so that sums reach both signs and every residue class is plausible.
  const std::int64_t m = 5, n = 7, k = 300;
  std::mt19937_64 rng(8);
  std::uniform_int_distribution<int> value(-128, 127);
  std::vector<std::int8_t> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n));
  for (auto& x : a) x = static_cast<std::int8_t>(value(rng));
  for (auto& x : b) x = static_cast<std::int8_t>(value(rng));
  auto backend = host::make_emulator_backend();
  Buffer buffer = backend->allocate(a.size() + b.size() + static_cast<std::size_t>(m * n) * 4);
  backend->copy_in(a.data(), buffer, a.size());
  backend->copy_in(b.data(), buffer, b.size(), a.size());
  const IntegerMatrix am{&buffer, 0, Integer::s8, m, k, k, Layout::row_major};
  const IntegerMatrix bm{&buffer, a.size(), Integer::s8, k, n, k, Layout::column_major};
  const IntegerMatrix dst{&buffer, a.size() + b.size(), Integer::s8, m, n, m, Layout::column_major};
  for (const int l : {0, 1, 13, el::kMaxModuli - 1}) {
    backend->crt_product_residues(am, bm, l, dst);
    std::vector<std::int8_t> got(static_cast<std::size_t>(m * n));
    backend->copy_out(buffer, got.data(), got.size(), a.size() + b.size());
    const int modulus = el::kModuli[l];
    int negative = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      for (std::int64_t i = 0; i < m; ++i) {
        std::int64_t sum = 0;
        for (std::int64_t p = 0; p < k; ++p) {
          sum += a[static_cast<std::size_t>(i * k + p)] * b[static_cast<std::size_t>(j * k + p)];
        }
        negative += sum < 0 ? 1 : 0;
        std::int64_t r = sum % modulus;
        if (r < 0) r += modulus;
        if (r > (modulus - 1) / 2) r -= modulus;
        EXPECT_EQ(got[static_cast<std::size_t>(j * m + i)], r)
            << i << ", " << j << " mod " << modulus;
      }
    }
    EXPECT_GT(negative, 0);
    EXPECT_LT(negative, m * n);
  }
  // An s32 destination holds the int32 sums themselves (crt_reconstruct reduces them).
  IntegerMatrix sums = dst;
  sums.format = Integer::s32;
  backend->crt_product_residues(am, bm, 5, sums);
  std::vector<std::int32_t> got(static_cast<std::size_t>(m * n));
  backend->copy_out(buffer, got.data(), got.size() * 4, a.size() + b.size());
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = 0; i < m; ++i) {
      std::int32_t sum = 0;
      for (std::int64_t p = 0; p < k; ++p) {
        sum += a[static_cast<std::size_t>(i * k + p)] * b[static_cast<std::size_t>(j * k + p)];
      }
      EXPECT_EQ(got[static_cast<std::size_t>(j * m + i)], sum) << i << ", " << j;
    }
  }
  const auto refused = [&](const std::function<void()>& call, const std::string& words) {
    try {
      call();
      ADD_FAILURE() << "not refused: " << words;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  refused([&] { backend->crt_product_residues(am, bm, el::kMaxModuli, dst); }, "modulus 48");
  IntegerMatrix wide = am;
  wide.format = Integer::s32;
  wide.ld = k;
  wide.rows = 1;
  refused([&] { backend->crt_product_residues(wide, bm, 0, dst); }, "int8");
  IntegerMatrix row_major_b = bm;
  row_major_b.layout = Layout::row_major;
  row_major_b.ld = n;
  refused([&] { backend->crt_product_residues(am, row_major_b, 0, dst); }, "column major");
}

struct CrCase {
  double phi;
  std::int64_t m, n, k;
};

class CrtCorrectlyRounded : public ::testing::TestWithParam<CrCase> {};

TEST_P(CrtCorrectlyRounded, EveryElementEqualsMpfrInModeCr) {
  const CrCase c = GetParam();
  const auto a = phi_matrix(c.m, c.k, c.phi, 11);
  const auto b = phi_matrix(c.k, c.n, c.phi, 12);
  const auto reference = correctly_rounded_product(c.m, c.n, c.k, a, b);
  auto backend = host::make_emulator_backend();
  Report report;
  const auto got = run(*backend, {.mode = Mode::cr}, c.m, c.n, c.k, a, b, &report);
  EXPECT_TRUE(same_product_bits(reference, got, c.m, c.n, c.k, a, b))
      << "phi " << c.phi << ", " << report.slices_a << " moduli";
  EXPECT_EQ(report.gemms, report.slices_a);
}

// (|A||B|)_ij for column-major A (m x k) and B (k x n), in long double (64-bit significands; the
// tests' bounds have margins far above its rounding).
std::vector<long double> absolute_product(std::int64_t m, std::int64_t n, std::int64_t k,
                                          const std::vector<double>& a,
                                          const std::vector<double>& b) {
  std::vector<long double> out(static_cast<std::size_t>(m * n), 0.0L);
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = 0; i < m; ++i) {
      long double sum = 0;
      for (std::int64_t p = 0; p < k; ++p) {
        const double x = a[static_cast<std::size_t>(p * m + i)];
        const double y = b[static_cast<std::size_t>(j * k + p)];
        if (std::isfinite(x) && std::isfinite(y))
          sum += std::fabs(static_cast<long double>(x)) * std::fabs(static_cast<long double>(y));
      }
      out[static_cast<std::size_t>(j * m + i)] = sum;
    }
  }
  return out;
}

// dp's criterion (crt_bounds.hpp, bound_need): every element within (3/4) k 2^-53 (|A||B|)_ij
// of the exact product before the final rounding, so within that plus 2^-53 |C_ij| of it and
// plus another 2^-52 |C_ij| of the correctly rounded one. `report`: the run's.
::testing::AssertionResult within_dgemm_bound(const std::vector<double>& got,
                                              const std::vector<double>& reference, std::int64_t m,
                                              std::int64_t n, std::int64_t k,
                                              const std::vector<double>& a,
                                              const std::vector<double>& b) {
  const auto absolute = absolute_product(m, n, k, a, b);
  for (std::size_t at = 0; at < got.size(); ++at) {
    const long double bound = 0.75L * static_cast<long double>(k) * 0x1p-53L * absolute[at] +
                              0x1p-52L * std::fabs(static_cast<long double>(reference[at]));
    const long double error = std::fabs(static_cast<long double>(got[at]) - reference[at]);
    if (!(error <= bound)) {
      return ::testing::AssertionFailure()
             << "element " << at << ": " << got[at] << " against " << reference[at] << ", error "
             << static_cast<double>(error) << " above " << static_cast<double>(bound);
    }
  }
  return ::testing::AssertionSuccess();
}

// dp at every spread: within DGEMM's classical bound elementwise (against the correctly rounded
// product, MPFR-exact), never more moduli than cr, at least the 15 of its least norm scaling
// when cr takes more, and one more int8 GEMM for the bound whenever it was computed.
TEST_P(CrtCorrectlyRounded, DpMeetsDgemmsElementwiseBound) {
  const CrCase c = GetParam();
  const auto a = phi_matrix(c.m, c.k, c.phi, 11);
  const auto b = phi_matrix(c.k, c.n, c.phi, 12);
  const auto reference = correctly_rounded_product(c.m, c.n, c.k, a, b);
  auto backend = host::make_emulator_backend();
  Report dp, cr;
  const auto got = run(*backend, {.mode = Mode::dp}, c.m, c.n, c.k, a, b, &dp);
  run(*backend, {.mode = Mode::cr}, c.m, c.n, c.k, a, b, &cr);
  EXPECT_LE(dp.slices_a, cr.slices_a);
  if (cr.slices_a > 15) {
    EXPECT_GE(dp.slices_a, 15);
  }
  EXPECT_TRUE(dp.dp_bound_met);
  // The bound: one int8 GEMM at depth 0, two more when that left an element uncertified.
  const std::int64_t bound_gemms = dp.gemms - dp.slices_a;
  if (dp.dp_bound_terms == 0) {
    EXPECT_EQ(bound_gemms, 0);
    EXPECT_EQ(dp.dp_bound_bits, 0);
  } else {
    EXPECT_TRUE(bound_gemms == 1 || bound_gemms == 3) << bound_gemms;
  }
  EXPECT_TRUE(within_dgemm_bound(got, reference, c.m, c.n, c.k, a, b))
      << "phi " << c.phi << ", " << dp.slices_a << " moduli";
}

INSTANTIATE_TEST_SUITE_P(Phi, CrtCorrectlyRounded,
                         ::testing::Values(CrCase{0.1, 9, 7, 33}, CrCase{1, 8, 9, 40},
                                           CrCase{4, 7, 6, 25}, CrCase{8, 6, 5, 20},
                                           CrCase{1, 3, 4, 1}));

// dp on integers of a few bits: holding them exactly takes fewer moduli than the norm scaling,
// so dp is the correctly rounded product, with the moduli cr takes.
TEST(CrtScheme, DpIsCorrectlyRoundedWhenExactIsCheaper) {
  const std::int64_t m = 9, n = 7, k = 33;
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int> value(-15, 15);
  std::vector<double> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n));
  for (auto& x : a) x = value(rng) * 0x1p-3;
  for (auto& x : b) x = value(rng) * 0x1p7;
  auto backend = host::make_emulator_backend();
  Report dp, cr, phi;
  EXPECT_TRUE(same_product_bits(correctly_rounded_product(m, n, k, a, b),
                                run(*backend, {.mode = Mode::dp}, m, n, k, a, b, &dp), m, n, k, a,
                                b));
  run(*backend, {.mode = Mode::cr}, m, n, k, a, b, &cr);
  run(*backend, {.mode = Mode::dp}, m, n, k, phi_matrix(m, k, 1, 3), phi_matrix(k, n, 1, 4), &phi);
  EXPECT_EQ(dp.slices_a, cr.slices_a);
  EXPECT_LT(dp.slices_a, phi.slices_a);
}

// crt_norm_scale: every vector's integers (x 2^shift rounded to nearest) have Euclidean norm at
// most 2^gamma and above 2^(gamma - 2) (the shift is not wasteful: one more would pass 2^gamma
// up to the rounding of the bound), in both axes and layouts; bad arguments are named.
TEST(CrtSteps, NormScaleBoundsEveryVectorsNormAndRefusesBadArguments) {
  const std::int64_t m = 6, k = 50;
  auto a = phi_matrix(m, k, 2.0, 7);
  a[3] = INFINITY;
  for (std::int64_t p = 0; p < k; ++p) a[static_cast<std::size_t>(p * m + 4)] = 0.0;  // row 4 empty
  a[static_cast<std::size_t>(7 * m + 5)] = 0x1p-1000;  // row 5 spans more than 1000 bits
  a[static_cast<std::size_t>(9 * m + 5)] = 0x1p+30;
  auto backend = host::make_emulator_backend();
  Buffer buffer = backend->allocate(a.size() * 8 + 512);
  backend->copy_in(a.data(), buffer, a.size() * 8);
  const RealMatrix column_major{&buffer, 0, Real::fp64, m, k, m, Layout::column_major};
  const RealMatrix row_major{&buffer, 0, Real::fp64, k, m, m, Layout::row_major};  // A^T
  const ExponentVector shifts{&buffer, a.size() * 8, m};
  for (const int gamma : {12, 40, 60}) {
    for (const bool rows : {true, false}) {
      backend->crt_norm_scale(rows ? column_major : row_major,
                              rows ? SplitAxis::rows : SplitAxis::columns, 8, gamma, shifts);
      std::vector<std::int32_t> got(static_cast<std::size_t>(m));
      backend->copy_out(buffer, got.data(), got.size() * 4, a.size() * 8);
      for (std::int64_t i = 0; i < m; ++i) {
        long double squares = 0;
        for (std::int64_t p = 0; p < k; ++p) {
          const double x = a[static_cast<std::size_t>(p * m + i)];
          if (std::isfinite(x))
            squares += std::pow(
                std::nearbyint(std::ldexp(std::fabs(x), got[static_cast<std::size_t>(i)])), 2.0L);
        }
        if (i == 4) {
          EXPECT_EQ(got[4], 0);
          continue;
        }
        EXPECT_LE(squares, std::ldexp(1.0L, 2 * gamma)) << i << " gamma " << gamma;
        EXPECT_GT(squares, std::ldexp(1.0L, 2 * gamma - 4)) << i << " gamma " << gamma;
      }
    }
  }
  const auto refused = [&](const std::function<void()>& call, const std::string& words) {
    try {
      call();
      ADD_FAILURE() << "not refused: " << words;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  refused([&] { backend->crt_norm_scale(column_major, SplitAxis::rows, 21, 60, shifts); },
          "bound_bits = 21");
  refused([&] { backend->crt_norm_scale(column_major, SplitAxis::rows, 8, 10, shifts); },
          "gamma = 10 (11 to 4096");
}

// crt_scale's and crt_norm_scale's summary: the largest exact bits over the vectors and whether
// an Inf or a NaN is in x (which decides whether the scheme runs the epilogue's special values),
// in both axes; an Inf or a NaN moved into the matrix, or none.
TEST(CrtSteps, ScaleSummaryReportsTheExactBitsAndSpecialValues) {
  const std::int64_t m = 5, k = 7;
  auto backend = host::make_emulator_backend();
  Buffer buffer = backend->allocate(static_cast<std::size_t>(m * k) * 8 + 512);
  const RealMatrix x{&buffer, 0, Real::fp64, m, k, m, Layout::column_major};
  const ExponentVector row_shifts{&buffer, static_cast<std::size_t>(m * k) * 8, m};
  const ExponentVector column_shifts{&buffer, static_cast<std::size_t>(m * k) * 8, k};
  for (const double special :
       {0.0, double{INFINITY}, -double{INFINITY}, std::numeric_limits<double>::quiet_NaN()}) {
    std::vector<double> a(static_cast<std::size_t>(m * k), 1.0);
    a[7] = 0x1.8p-20;  // 1.5 2^-20: 21 bits below 1 (exact bits 22 with the 1.0s)
    a[12] = special;   // row 2, column 2
    backend->copy_in(a.data(), buffer, a.size() * 8);
    const bool expected = special != 0.0;
    for (const bool rows : {true, false}) {
      const SplitAxis axis = rows ? SplitAxis::rows : SplitAxis::columns;
      const ExponentVector& shifts = rows ? row_shifts : column_shifts;
      const ScaleSummary exact = backend->crt_scale(x, axis, 4096, shifts);
      EXPECT_EQ(exact.exact_bits, 22) << special;
      EXPECT_EQ(exact.nonfinite, expected) << special << (rows ? " rows" : " columns");
      const ScaleSummary norm = backend->crt_norm_scale(x, axis, 8, 40, shifts);
      EXPECT_EQ(norm.exact_bits, 22) << special;
      EXPECT_EQ(norm.nonfinite, expected) << special << (rows ? " rows" : " columns");
    }
  }
}

// crt_magnitude_bound on random and adversarial rows (phi = 4, zeros, one large element, Inf and
// NaN, subnormals, an 1800-bit spread, small integers), both axes and layouts, the emulator and
// the cpu backend alike, with the VectorNorms of crt_norm_scale: they bound the vector's norms
// and largest element within a factor of 4 (rho: 2^-rho >= ||x||_2, which is also the norm
// scaling's shift minus its gamma), and with u = norm2 + rho every quantum is min(127,
// floor(|x| 2^u)) (so at most |x| 2^u: the product's sum is a lower bound of |A||B|), the
// largest is at least 32 (the bound of the largest rounds up at most one binade), and 2^(norm2
// - u) and 2^(norm1 - u) bound the vector's Euclidean and 1-norms; an empty vector is
// kEmptyVector.
TEST(CrtSteps, MagnitudeBoundQuantaAreBelowTheMagnitudesAndTheExponentsBoundTheNorms) {
  const std::int64_t m = 9, k = 40;
  auto a = phi_matrix(m, k, 4.0, 17);
  const auto at = [&](std::int64_t i, std::int64_t p) -> double& {
    return a[static_cast<std::size_t>(p * m + i)];
  };
  for (std::int64_t p = 0; p < k; ++p) {
    at(1, p) = 0.0;                                     // empty
    at(2, p) = p == 7 ? 0x1p300 : at(2, p) * 0x1p-200;  // one element far above the rest
    at(4, p) = at(4, p) * 0x1p-1070;                    // subnormals (and zeros)
    at(6, p) = std::nearbyint(at(6, p) * 8);            // small integers
  }
  at(3, 5) = INFINITY;
  at(3, 9) = NAN;
  at(5, 0) = 0x1p900;
  at(5, 1) = 0x1p-900;
  for (std::int64_t p = 0; p < k; ++p) at(7, p) = std::numeric_limits<double>::infinity();
  const auto emulator = host::make_emulator_backend();
  const auto cpu64 = host::make_cpu64_backend();
  for (Backend* backend : {emulator.get(), cpu64.get()}) {
    const std::size_t vectors_at = a.size() * 8, quanta_at = vectors_at + 6 * 64;
    Buffer buffer = backend->allocate(quanta_at + a.size() + 64);
    backend->copy_in(a.data(), buffer, a.size() * 8);
    const auto vector = [&](int slot) {
      return ExponentVector{&buffer, vectors_at + static_cast<std::size_t>(slot) * 64, m};
    };
    const auto read = [&](int slot) {
      std::vector<std::int32_t> v(static_cast<std::size_t>(m));
      backend->copy_out(buffer, v.data(), v.size() * 4,
                        vectors_at + static_cast<std::size_t>(slot) * 64);
      return v;
    };
    const VectorNorms norms{vector(3), vector(4), vector(5)};
    for (const int depth : {el::kShallowClip, 0, el::kDeepClip}) {
      for (const bool rows : {true, false}) {
        // rows: the rows of column-major A; columns: the columns of the row-major k x m A^T.
        const RealMatrix x = rows
                                 ? RealMatrix{&buffer, 0, Real::fp64, m, k, m, Layout::column_major}
                                 : RealMatrix{&buffer, 0, Real::fp64, k, m, m, Layout::row_major};
        const SplitAxis axis = rows ? SplitAxis::rows : SplitAxis::columns;
        const IntegerMatrix quanta{&buffer,
                                   quanta_at,
                                   Integer::s8,
                                   x.rows,
                                   x.cols,
                                   k,
                                   rows ? Layout::row_major : Layout::column_major};
        backend->crt_norm_scale(x, axis, el::kNormBoundBits, 60, vector(2), &norms);
        backend->crt_magnitude_bound(x, axis, depth, norms, quanta, {vector(0), vector(1)});
        const auto norm2 = read(0), norm1 = read(1), shift = read(2), rho = read(3),
                   log2_norm1 = read(4), top = read(5);
        std::vector<std::int8_t> q(a.size());
        backend->copy_out(buffer, q.data(), q.size(), quanta_at);
        for (std::int64_t i = 0; i < m; ++i) {
          const auto v = static_cast<std::size_t>(i);
          if (i == 1 || i == 7) {
            EXPECT_EQ(norm2[v], el::kEmptyVector) << i;
            EXPECT_EQ(rho[v], el::kEmptyVector) << i;
            continue;
          }
          EXPECT_EQ(shift[v], rho[v] + 60) << i;
          const int u = norm2[v] + rho[v];
          long double squares = 0, sum = 0, largest_x = 0;
          int largest = 0;
          for (std::int64_t p = 0; p < k; ++p) {
            const double value = at(i, p);
            const int got = q[static_cast<std::size_t>(i * k + p)];
            const double scaled = std::ldexp(std::fabs(value), u);
            const int expected =
                std::isfinite(value) ? static_cast<int>(std::min(127.0, std::floor(scaled))) : 0;
            EXPECT_EQ(got, expected) << backend->name() << " row " << i << " element " << p;
            largest = std::max(largest, got);
            if (std::isfinite(value)) {
              squares += static_cast<long double>(value) * value;
              sum += std::fabs(static_cast<long double>(value));
              largest_x = std::max(largest_x, std::fabs(static_cast<long double>(value)));
            }
          }
          EXPECT_GE(largest, 32) << i;
          EXPECT_LE(std::sqrt(squares), std::ldexp(1.0L, norm2[v] - u)) << i;
          EXPECT_LE(sum, std::ldexp(1.0L, norm1[v] - u)) << i;
          EXPECT_LE(std::sqrt(squares), std::ldexp(1.0L, -rho[v])) << i;
          EXPECT_GT(std::sqrt(squares), std::ldexp(1.0L, -rho[v] - 2)) << i;
          EXPECT_LE(sum, std::ldexp(1.0L, log2_norm1[v])) << i;
          EXPECT_GT(sum, std::ldexp(1.0L, log2_norm1[v] - 2)) << i;
          EXPECT_LT(largest_x, std::ldexp(1.0L, top[v])) << i;
          EXPECT_GE(largest_x, std::ldexp(1.0L, top[v] - 2)) << i;
        }
      }
    }
  }
}

// The bound itself: L_ij = P_ij 2^-(u_i + v_j) (P the quanta's exact product, u_v = norm2_v +
// rho_v with rho_v from crt_norm_scale) is at most the long-accumulator (|A||B|)_ij for every
// element, at dp's three depths, on random rows and columns (phi = 4) and adversarial ones (zeros,
// one large element, Inf and NaN, subnormals, a 1800-bit spread), and positive wherever a row and a
// column share their largest elements.
TEST(CrtSteps, BoundOfAbsProductIsAtMostTheExactOne) {
  const std::int64_t m = 6, n = 5, k = 48;
  auto a = phi_matrix(m, k, 4.0, 71), b = phi_matrix(k, n, 4.0, 72);
  const auto at_a = [&](std::int64_t i, std::int64_t p) -> double& {
    return a[static_cast<std::size_t>(p * m + i)];
  };
  const auto at_b = [&](std::int64_t p, std::int64_t j) -> double& {
    return b[static_cast<std::size_t>(j * k + p)];
  };
  for (std::int64_t p = 0; p < k; ++p) {
    at_a(1, p) = 0.0;
    at_a(2, p) = p == 3 ? 0x1p200 : at_a(2, p);
    at_b(p, 1) = p == 3 ? -0x1p-200 : at_b(p, 1) * 0x1p-1070;
    at_b(p, 2) = p % 2 == 0 ? 1.0 : 0.0;
  }
  at_a(3, 4) = NAN;
  at_b(5, 3) = -INFINITY;
  at_a(4, 0) = 0x1p900;
  at_a(4, 1) = 0x1p-900;
  const auto absolute = absolute_product(m, n, k, a, b);
  auto backend = host::make_emulator_backend();
  Buffer buffer =
      backend->allocate(bound_inputs_bytes(m, n, k) + 4 * kVectorBytes + a.size() + b.size());
  const BoundInputs in = bound_inputs(*backend, buffer, m, n, k, a, b);
  const RealMatrix &am = in.a, &bm = in.b;
  const VectorNorms &norms_a = in.norms_a, &norms_b = in.norms_b;
  const std::size_t v_at = in.free_at, q_at = v_at + 4 * kVectorBytes;
  const IntegerMatrix qa{&buffer, q_at, Integer::s8, m, k, k, Layout::row_major};
  const IntegerMatrix qb{&buffer, q_at + a.size(), Integer::s8, k, n, k, Layout::column_major};
  const auto read = [&](std::size_t offset, std::int64_t size) {
    std::vector<std::int32_t> v(static_cast<std::size_t>(size));
    backend->copy_out(buffer, v.data(), v.size() * 4, offset);
    return v;
  };
  for (const int depth : {el::kShallowClip, 0, el::kDeepClip}) {
    backend->crt_magnitude_bound(am, SplitAxis::rows, depth, norms_a, qa,
                                 {{&buffer, v_at, m}, {&buffer, v_at + 64, m}});
    backend->crt_magnitude_bound(bm, SplitAxis::columns, depth, norms_b, qb,
                                 {{&buffer, v_at + 128, n}, {&buffer, v_at + 192, n}});
    const auto norm2_a = read(v_at, m), norm2_b = read(v_at + 128, n);
    const auto shift_a = read(in.shifts_a.offset_bytes, m),
               shift_b = read(in.shifts_b.offset_bytes, n);
    std::vector<std::int8_t> q(a.size() + b.size());
    backend->copy_out(buffer, q.data(), q.size(), q_at);
    int positive = 0;
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        const auto ii = static_cast<std::size_t>(i), jj = static_cast<std::size_t>(j);
        if (norm2_a[ii] == el::kEmptyVector || norm2_b[jj] == el::kEmptyVector) continue;
        const int u = norm2_a[ii] + shift_a[ii] - 60, v = norm2_b[jj] + shift_b[jj] - 60;
        std::int64_t product = 0;
        for (std::int64_t p = 0; p < k; ++p)
          product += std::int64_t{q[static_cast<std::size_t>(i * k + p)]} *
                     q[a.size() + static_cast<std::size_t>(j * k + p)];
        const long double bound = std::ldexp(static_cast<long double>(product), -(u + v));
        EXPECT_LE(bound, absolute[static_cast<std::size_t>(j * m + i)])
            << "depth " << depth << " element " << i << ", " << j;
        positive += product > 0 ? 1 : 0;
      }
    }
    EXPECT_GT(positive, (m - 1) * n / 2) << "depth " << depth;  // row 1 is empty
  }
}

// crt_bound_need: the largest bound_need over the elements of the quanta's exact product
// (computed here in int64), with two levels (depths 0 and kDeepClip) the largest of each
// element's lesser need, kBoundUncertified as soon as one nonempty pair's quanta meet in no
// level, kNoNeed contributions from empty vectors; on the leading half of the terms (the same
// quanta, k = 64 in the criterion) the need of their products, more than the whole one's.
TEST(CrtSteps, BoundNeedIsTheLargestElementNeedAndAZeroProductIsUncertified) {
  const std::int64_t m = 7, n = 6, k = 64;
  auto a = phi_matrix(m, k, 2.0, 31);
  auto b = phi_matrix(k, n, 2.0, 32);
  for (std::int64_t p = 0; p < k; ++p) a[static_cast<std::size_t>(p * m + 2)] = 0.0;  // empty row
  auto backend = host::make_emulator_backend();
  // Returns the step's need with one level and with two, *expected and *expected_two the same
  // from the quanta's products computed here, of the leading `terms` of the k terms.
  const auto need_of = [&](const std::vector<double>& x, const std::vector<double>& y,
                           int* expected, int* expected_two, int* two, std::int64_t terms) {
    const std::size_t level_bytes = x.size() + y.size();
    Buffer buffer =
        backend->allocate(bound_inputs_bytes(m, n, k) + 8 * kVectorBytes + 2 * level_bytes);
    const BoundInputs in = bound_inputs(*backend, buffer, m, n, k, x, y);
    const RealMatrix &xm = in.a, &ym = in.b;
    const VectorNorms &norms_x = in.norms_a, &norms_y = in.norms_b;
    const std::size_t vectors_at = in.free_at, quanta_at = vectors_at + 8 * kVectorBytes;
    BoundLevel levels[2];
    std::vector<std::int32_t> e[2];
    std::vector<std::int8_t> qx[2], qy[2];
    for (int l = 0; l < 2; ++l) {
      const std::size_t v = vectors_at + static_cast<std::size_t>(l) * 256;
      const std::size_t q = quanta_at + static_cast<std::size_t>(l) * level_bytes;
      levels[l] = {{&buffer, q, Integer::s8, m, k, k, Layout::row_major},
                   {&buffer, q + x.size(), Integer::s8, k, n, k, Layout::column_major},
                   {{&buffer, v, m}, {&buffer, v + 64, m}},
                   {{&buffer, v + 128, n}, {&buffer, v + 192, n}}};
      const int depth = l == 0 ? 0 : el::kDeepClip;
      backend->crt_magnitude_bound(xm, SplitAxis::rows, depth, norms_x, levels[l].a,
                                   levels[l].rows);
      backend->crt_magnitude_bound(ym, SplitAxis::columns, depth, norms_y, levels[l].b,
                                   levels[l].columns);
      e[l].resize(static_cast<std::size_t>(2 * (m + n)));
      backend->copy_out(buffer, e[l].data(), m * 4, v);
      backend->copy_out(buffer, e[l].data() + m, m * 4, v + 64);
      backend->copy_out(buffer, e[l].data() + 2 * m, n * 4, v + 128);
      backend->copy_out(buffer, e[l].data() + 2 * m + n, n * 4, v + 192);
      qx[l].resize(x.size());
      qy[l].resize(y.size());
      backend->copy_out(buffer, qx[l].data(), x.size(), q);
      backend->copy_out(buffer, qy[l].data(), y.size(), q + x.size());
      levels[l].a.cols = levels[l].b.rows = terms;
    }
    *expected = *expected_two = el::kNoNeed;
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        int need[2];
        for (int l = 0; l < 2; ++l) {
          std::int64_t p_ij = 0;
          for (std::int64_t p = 0; p < terms; ++p)
            p_ij += std::int64_t{qx[l][static_cast<std::size_t>(i * k + p)]} *
                    qy[l][static_cast<std::size_t>(j * k + p)];
          const std::vector<std::int32_t>& f = e[l];
          need[l] = el::bound_need(static_cast<std::int32_t>(p_ij), f[i], f[m + i], f[2 * m + j],
                                   f[2 * m + n + j], 6);  // log2 64
        }
        *expected = std::max(*expected, need[0]);
        *expected_two = std::max(*expected_two, std::min(need[0], need[1]));
      }
    }
    *two = backend->crt_bound_need(std::span<const BoundLevel>(levels, 2), k);
    return backend->crt_bound_need(std::span<const BoundLevel>(levels, 1), k);
  };
  int expected = 0, expected_two = 0, two = 0;
  const int need = need_of(a, b, &expected, &expected_two, &two, k);
  EXPECT_EQ(need, expected);
  EXPECT_EQ(two, expected_two);
  EXPECT_LE(two, need);
  EXPECT_GT(need, 40);
  EXPECT_LT(need, el::kBoundUncertified);
  const int leading = need_of(a, b, &expected, &expected_two, &two, k / 2);
  EXPECT_EQ(leading, expected);
  EXPECT_EQ(two, expected_two);
  EXPECT_GT(leading, need);
  EXPECT_LT(leading, el::kBoundUncertified);
  // Row 0 meets column 0 only in an element 2^-40 below the row's largest: its quantum is 0 at
  // both depths.
  for (std::int64_t p = 0; p < k; ++p) {
    a[static_cast<std::size_t>(p * m)] = p == 0 ? 1.0 : p == 1 ? 0x1p-40 : 0.0;
    b[static_cast<std::size_t>(p)] = p == 1 ? 1.0 : 0.0;
  }
  EXPECT_EQ(need_of(a, b, &expected, &expected_two, &two, k), el::kBoundUncertified);
  EXPECT_EQ(expected, el::kBoundUncertified);
  EXPECT_EQ(two, el::kBoundUncertified);
  // 2^-14 instead: below the row's quantum 2^-12 at depth 0 (1 + 2^-14 over 64 elements: mean
  // about 2^-6, quantum 2^-6 / 64), above its 2^-18 at depth 6: certified with two levels.
  a[static_cast<std::size_t>(m)] = 0x1p-14;
  EXPECT_EQ(need_of(a, b, &expected, &expected_two, &two, k), el::kBoundUncertified);
  EXPECT_EQ(two, expected_two);
  EXPECT_LT(two, el::kBoundUncertified);
}

// dyadic_sum_at_most against the sum scaled by 2^8 in integers, for every exponent triple in
// [-8, 14] and limits around each sum (the sums hit below, at and above the limit, and the case
// 1/2 + 1/2 + a fraction).
TEST(CrtElements, DyadicSumAtMostIsExact) {
  int equal = 0, over = 0, under = 0;
  for (int e1 = -8; e1 <= 14; ++e1) {
    for (int e2 = -8; e2 <= 14; ++e2) {
      for (int e3 = -8; e3 <= 14; ++e3) {
        const std::uint64_t scaled = (std::uint64_t{1} << (e1 + 8)) +
                                     (std::uint64_t{1} << (e2 + 8)) +
                                     (std::uint64_t{1} << (e3 + 8));
        const std::uint64_t whole = scaled >> 8;
        for (std::uint64_t limit = whole > 2 ? whole - 2 : 0; limit <= whole + 3; ++limit) {
          const bool expected = scaled <= (limit << 8);
          ASSERT_EQ(el::dyadic_sum_at_most(e1, e2, e3, limit), expected)
              << e1 << " " << e2 << " " << e3 << " limit " << limit;
          equal += scaled == (limit << 8) ? 1 : 0;
          (expected ? under : over) += 1;
        }
      }
    }
  }
  EXPECT_GT(equal, 1000);
  EXPECT_GT(over, 10000);
  EXPECT_GT(under, 10000);
  EXPECT_FALSE(el::dyadic_sum_at_most(-1, -1, -30, 1));
  EXPECT_TRUE(el::dyadic_sum_at_most(-1, -1, -30, 2));
  EXPECT_TRUE(el::dyadic_sum_at_most(-1, -2, -2, 1));
  EXPECT_FALSE(el::dyadic_sum_at_most(40, -1, -1, std::uint64_t{1} << 39));
}

// bound_need is the least g meeting dp's criterion 2^(c1 - g) + 2^(c2 - g) + 2^(c3 - 2g) <= 3P
// (crt_bounds.hpp), decided here in 128-bit integers scaled by the power of two that makes
// every term at g and g - 1 an integer (draws needing more than 128 bits are not checked, and
// most are), on random exponents and products: g meets it and g - 1 does not; each of the three
// candidates t - 2, t - 1, t is the answer in some draws, and the need is never above the
// per-term criterion's t, which bound_need_at_most gives.
TEST(CrtElements, BoundNeedIsTheLeastGammaMeetingTheCriterion) {
  std::mt19937_64 rng(2026);
  std::uniform_int_distribution<int> exponent(-12, 12), log2_k(0, 17);
  std::uniform_int_distribution<std::int32_t> product(1, std::numeric_limits<std::int32_t>::max());
  // Whether the terms' sum is at most 3p, all scaled by 2^scale (every e + scale >= 0).
  const auto meets = [](const int(&e)[3], int scale, std::int64_t p) {
    UInt128 sum = 0;
    for (const int x : e) sum += UInt128{1} << (x + scale);
    return sum <= (static_cast<UInt128>(3 * p) << scale);
  };
  int checked = 0, candidates[3] = {};
  for (int draw = 0; draw < 200000; ++draw) {
    const int n2i = exponent(rng), n1i = exponent(rng), n2j = exponent(rng), n1j = exponent(rng);
    const int lk = log2_k(rng);
    // Products of every size: a random bit width, then a random value of it.
    const int width = 1 + static_cast<int>(rng() % 31);
    const std::int32_t p = static_cast<std::int32_t>(
        (std::uint32_t{1} << (width - 1)) |
        (static_cast<std::uint32_t>(product(rng)) & ((std::uint32_t{1} << (width - 1)) - 1)));
    const int c1 = 54 - lk + n2i + n1j, c2 = 54 - lk + n1i + n2j, c3 = 54 + n2i + n2j;
    const int g = el::bound_need(p, n2i, n1i, n2j, n1j, lk);
    const int at_g[3] = {c1 - g, c2 - g, c3 - 2 * g};
    const int below[3] = {c1 - g + 1, c2 - g + 1, c3 - 2 * g + 2};
    const int scale = std::max(0, -std::min({at_g[0], at_g[1], at_g[2]}));
    if (std::max({below[0], below[1], below[2]}) + scale > 120 || 33 + scale > 120) continue;
    ASSERT_TRUE(meets(at_g, scale, p)) << draw;
    ASSERT_FALSE(meets(below, scale, p)) << draw;
    const int bw = std::bit_width(static_cast<std::uint32_t>(p));
    const int t =
        std::max({c1 - bw + 1, c2 - bw + 1, static_cast<int>(std::ceil((c3 - bw + 1) / 2.0))});
    ASSERT_EQ(el::bound_need_at_most(p, n2i, n1i, n2j, n1j, lk), t) << draw;
    ASSERT_LE(g, t) << draw;
    ASSERT_GE(g, t - 2) << draw;
    ++candidates[g - (t - 2)];
    ++checked;
  }
  EXPECT_GT(checked, 150000);
  for (const int c : candidates) EXPECT_GT(c, 1000);
  EXPECT_EQ(el::bound_need(0, 1, 1, 1, 1, 4), el::kBoundUncertified);
  EXPECT_EQ(el::bound_need(5, el::kEmptyVector, 1, 1, 1, 4), el::kNoNeed);
  EXPECT_EQ(el::bound_need_at_most(0, 1, 1, 1, 1, 4), el::kBoundUncertified);
  EXPECT_EQ(el::bound_need_at_most(5, 1, 1, el::kEmptyVector, 1, 4), el::kNoNeed);
}

// The dp count grows with the spread of the inputs (the generator's spread checked: the largest
// log2(||a_i|| ||b_j|| / (|A||B|)_ij) grows with phi): 15 moduli at phi = 0.1 and 1, more at 4
// and 8; every element within DGEMM's elementwise bound and, relative to |C_ij|, no worse than
// a binary64 product summed in order (or within 2^-50) at every phi; the cpu backend's bits and
// count equal the emulator's.
TEST(CrtScheme, DpModuliGrowWithTheSpreadAndKeepFp64Accuracy) {
  const std::int64_t m = 24, n = 20, k = 300;
  auto emulator = host::make_emulator_backend();
  auto cpu = host::make_cpu64_backend();
  double previous_spread = -INFINITY;
  int previous_moduli = 0;
  for (const double phi : {0.1, 1.0, 4.0, 8.0}) {
    const auto a = phi_matrix(m, k, phi, 51), b = phi_matrix(k, n, phi, 52);
    const auto absolute = absolute_product(m, n, k, a, b);
    double spread = 0;
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        long double na = 0, nb = 0;
        for (std::int64_t p = 0; p < k; ++p) {
          na += std::pow(static_cast<long double>(a[static_cast<std::size_t>(p * m + i)]), 2);
          nb += std::pow(static_cast<long double>(b[static_cast<std::size_t>(j * k + p)]), 2);
        }
        spread = std::max(
            spread, static_cast<double>(std::log2(std::sqrt(na * nb) /
                                                  absolute[static_cast<std::size_t>(j * m + i)])));
      }
    }
    EXPECT_GT(spread, previous_spread + 1) << "phi " << phi;
    previous_spread = spread;
    Report report, on_cpu;
    const auto got = run(*emulator, {.mode = Mode::dp}, m, n, k, a, b, &report);
    EXPECT_TRUE(same_product_bits(got, run(*cpu, {.mode = Mode::dp}, m, n, k, a, b, &on_cpu), m, n,
                                  k, a, b));
    EXPECT_EQ(on_cpu.slices_a, report.slices_a);
    EXPECT_EQ(on_cpu.dp_bound_bits, report.dp_bound_bits);
    const auto reference = correctly_rounded_product(m, n, k, a, b);
    EXPECT_TRUE(within_dgemm_bound(got, reference, m, n, k, a, b)) << "phi " << phi;
    EXPECT_LE(max_relative_error(got, reference),
              std::max(0x1p-50, max_relative_error(plain_dgemm(m, n, k, a, b), reference)))
        << "phi " << phi << ", " << report.slices_a << " moduli";
    EXPECT_TRUE(report.dp_bound_met);
    if (phi <= 1) {
      EXPECT_EQ(report.slices_a, 15) << "phi " << phi << " bound " << report.dp_bound_bits;
    } else {
      EXPECT_GT(report.slices_a, previous_moduli) << "phi " << phi;
    }
    std::printf("phi %g: spread 2^%.1f, bound gamma_A %d, %d moduli\n", phi, spread,
                report.dp_bound_bits, report.slices_a);
    previous_moduli = report.slices_a;
  }
}

// From k = 4096 on, dp's bound first sums the leading k / 16 terms: where they ask for no more
// than 16 moduli's gamma_A (one more than the least count, 15) the call takes their count and
// computes no more (phi = 0.1: 15 moduli, as the whole bound; phi = 2: 16, where the whole
// bound would give 15 or 16); where they ask for more (phi = 4) it takes the whole bound's
// count. Either way the bits are tunable mode's with the count taken, the cpu backend's equal
// the emulator's, and the whole bound's need (computed with the steps here) is at most the one
// reported.
TEST(CrtScheme, DpBoundFromTheLeadingTermsTakesAtMostOneModulusMoreThanTheWholeBound) {
  const std::int64_t m = 6, n = 5, k = 8192;
  auto emulator = host::make_emulator_backend();
  auto cpu = host::make_cpu64_backend();
  // The count from a need: the fewest moduli, at least 15, whose gamma_A reaches it.
  const auto count_for = [](int need) {
    int count = 15;
    while (count < el::kMaxModuli && (el::product_bits(count) - 1) / 2 < need) ++count;
    return count;
  };
  // The whole bound's need at depth kShallowClip, with the steps (as crt_scheme.cpp runs them).
  const auto whole_need = [&](const std::vector<double>& a, const std::vector<double>& b) {
    Buffer buffer =
        emulator->allocate(bound_inputs_bytes(m, n, k) + 4 * kVectorBytes + a.size() + b.size());
    const BoundInputs in = bound_inputs(*emulator, buffer, m, n, k, a, b);
    const std::size_t v_at = in.free_at, q_at = v_at + 4 * kVectorBytes;
    const BoundLevel level{
        {&buffer, q_at, Integer::s8, m, k, k, Layout::row_major},
        {&buffer, q_at + a.size(), Integer::s8, k, n, k, Layout::column_major},
        {{&buffer, v_at, m}, {&buffer, v_at + kVectorBytes, m}},
        {{&buffer, v_at + 2 * kVectorBytes, n}, {&buffer, v_at + 3 * kVectorBytes, n}}};
    emulator->crt_magnitude_bound(in.a, SplitAxis::rows, el::kShallowClip, in.norms_a, level.a,
                                  level.rows);
    emulator->crt_magnitude_bound(in.b, SplitAxis::columns, el::kShallowClip, in.norms_b, level.b,
                                  level.columns);
    return emulator->crt_bound_need(std::span<const BoundLevel>(&level, 1), k);
  };
  // phi, whether the leading terms decide, the count taken (these inputs, measured here: the
  // leading terms ask 53, 60, 63 or more, and more than 62 bits; the whole bound 49, 56, 57, 66).
  struct Case {
    double phi;
    bool leading;
    int moduli;
  };
  for (const Case c :
       {Case{0.1, true, 15}, Case{2.5, true, 16}, Case{3.0, false, 15}, Case{5.0, false, 18}}) {
    const double phi = c.phi;
    const auto a = phi_matrix(m, k, phi, 71), b = phi_matrix(k, n, phi, 72);
    Report report, on_cpu, tunable;
    const auto got = run(*emulator, {.mode = Mode::dp}, m, n, k, a, b, &report);
    EXPECT_TRUE(same_product_bits(got, run(*cpu, {.mode = Mode::dp}, m, n, k, a, b, &on_cpu), m, n,
                                  k, a, b));
    EXPECT_EQ(on_cpu.dp_bound_bits, report.dp_bound_bits);
    EXPECT_EQ(on_cpu.dp_bound_terms, report.dp_bound_terms);
    EXPECT_EQ(report.dp_bound_terms, c.leading ? k / 16 : k) << "phi " << phi;
    const int whole = whole_need(a, b);
    EXPECT_LE(whole, report.dp_bound_bits) << "phi " << phi;
    EXPECT_EQ(report.slices_a, c.moduli) << "phi " << phi;
    EXPECT_EQ(report.slices_a, count_for(report.dp_bound_bits)) << "phi " << phi;
    // The leading terms' count is the whole bound's or one more (phi = 2.5: 16 against 15);
    // otherwise the whole bound's.
    EXPECT_LE(report.slices_a - count_for(whole), c.leading ? 1 : 0) << "phi " << phi;
    EXPECT_GE(report.slices_a, count_for(whole)) << "phi " << phi;
    if (c.leading) {
      EXPECT_LE(report.dp_bound_bits, (el::product_bits(16) - 1) / 2) << "phi " << phi;
    }
    // The bound's GEMMs: one on the leading terms, one more on all of k where those did not do.
    EXPECT_EQ(report.gemms, report.slices_a + (c.leading ? 1 : 2)) << "phi " << phi;
    EXPECT_TRUE(same_product_bits(
        got,
        run(*emulator, {.mode = Mode::tunable, .splits = report.slices_a}, m, n, k, a, b, &tunable),
        m, n, k, a, b))
        << "phi " << phi;
    std::printf("phi %g: bound gamma_A %d on %lld terms (whole bound %d), %d moduli\n", phi,
                report.dp_bound_bits, static_cast<long long>(report.dp_bound_terms), whole,
                report.slices_a);
  }
}

// An uncertified bound (an element whose quanta do not meet): cr's exact scaling when it fits
// (dp is then the correctly rounded product), otherwise all 48 moduli and dp_bound_met false.
TEST(CrtScheme, DpFallsBackSoundlyWhenTheBoundIsUncertified) {
  const std::int64_t m = 5, n = 4, k = 64;
  auto a = phi_matrix(m, k, 1.0, 61), b = phi_matrix(k, n, 1.0, 62);
  for (std::int64_t p = 0; p < k; ++p) {
    a[static_cast<std::size_t>(p * m)] = p == 0 ? 1.0 : p == 1 ? 0x1p-40 : 0.0;
    b[static_cast<std::size_t>(p)] = p == 1 ? 1.0 : 0.0;
  }
  auto backend = host::make_emulator_backend();
  Report dp, cr;
  const auto got = run(*backend, {.mode = Mode::dp}, m, n, k, a, b, &dp);
  run(*backend, {.mode = Mode::cr}, m, n, k, a, b, &cr);
  EXPECT_EQ(dp.dp_bound_bits, el::kBoundUncertified);
  EXPECT_EQ(dp.slices_a, cr.slices_a);
  EXPECT_TRUE(dp.dp_bound_met);
  EXPECT_TRUE(same_product_bits(correctly_rounded_product(m, n, k, a, b), got, m, n, k, a, b));
  a[0] = 0x1p900;
  a[static_cast<std::size_t>(m)] = 0x1p-900;  // row 0 spans 1800 bits: cr refuses it
  run(*backend, {.mode = Mode::dp}, m, n, k, a, b, &dp);
  EXPECT_EQ(dp.dp_bound_bits, el::kBoundUncertified);
  EXPECT_EQ(dp.slices_a, el::kMaxModuli);
  EXPECT_FALSE(dp.dp_bound_met);
}

TEST(CrtScheme, MoreModuliForMoreSpreadAndTooManyIsAnError) {
  const std::int64_t m = 8, n = 8, k = 32;
  auto backend = host::make_emulator_backend();
  Report narrow, wide;
  run(*backend, {.mode = Mode::cr}, m, n, k, phi_matrix(m, k, 0.1, 1), phi_matrix(k, n, 0.1, 2),
      &narrow);
  run(*backend, {.mode = Mode::cr}, m, n, k, phi_matrix(m, k, 4, 1), phi_matrix(k, n, 4, 2), &wide);
  EXPECT_GT(wide.slices_a, narrow.slices_a);
  auto a = phi_matrix(m, k, 1, 1);
  a[0] = 0x1p900;
  a[static_cast<std::size_t>(m)] = 0x1p-900;  // row 0 spans 1800 bits
  try {
    run(*backend, {.mode = Mode::cr}, m, n, k, a, phi_matrix(k, n, 1, 2));
    ADD_FAILURE() << "an 1800-bit spread ran";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("use mode tunable"), std::string::npos) << e.what();
  }
  EXPECT_THROW(run(*backend, {.mode = Mode::tunable, .splits = 49}, m, n, k, a, a),
               std::invalid_argument);
}

TEST(CrtScheme, TunableAccuracyGrowsWithTheModuli) {
  const std::int64_t m = 12, n = 12, k = 64;
  const auto a = phi_matrix(m, k, 1.0, 41), b = phi_matrix(k, n, 1.0, 42);
  const auto reference = correctly_rounded_product(m, n, k, a, b);
  auto backend = host::make_emulator_backend();
  double previous = INFINITY;
  for (int moduli : {4, 8, 12, 16}) {
    Report report;
    const double error = max_relative_error(
        run(*backend, {.mode = Mode::tunable, .splits = moduli}, m, n, k, a, b, &report),
        reference);
    EXPECT_LT(error, previous) << moduli;
    EXPECT_EQ(report.gemms, moduli);
    EXPECT_TRUE(report.crt_product_sums) << moduli;  // M in at most 8 limbs: int32 sums kept
    previous = error;
  }
  Report widest_sums, wide;
  run(*backend, {.mode = Mode::tunable, .splits = 34}, m, n, k, a, b, &widest_sums);
  run(*backend, {.mode = Mode::tunable, .splits = 35}, m, n, k, a, b, &wide);
  EXPECT_EQ(el::table(34).limbs, 8);
  EXPECT_EQ(el::table(35).limbs, 9);
  EXPECT_TRUE(widest_sums.crt_product_sums);
  EXPECT_FALSE(wide.crt_product_sums);  // past 8 limbs: reduced to int8 residues per modulus
  EXPECT_LE(previous, max_relative_error(plain_dgemm(m, n, k, a, b), reference) * 4);
}

TEST(CrtScheme, BitsDoNotDependOnThreadsOrBlocking) {
  // A square shape (blocked in rows and columns) and a tall one (blocked in rows only: B's
  // residues and dp's quanta of B from the first row block serve the others); the workspace
  // Report::one_block_workspace names runs the call in one block, keeping the products' int32
  // sums, and a smaller one-block workspace reduces them to int8 residues.
  int columns_blocked = 0;
  for (const auto& [m, n] : {std::pair<std::int64_t, std::int64_t>{20, 18}, {96, 3}}) {
    const std::int64_t k = 50;
    const auto a = phi_matrix(m, k, 2.0, 21), b = phi_matrix(k, n, 2.0, 22);
    for (const Options& options : {Options{.mode = Mode::cr}, Options{.mode = Mode::dp},
                                   Options{.mode = Mode::tunable, .splits = 9}}) {
      auto one_thread = host::make_emulator_backend(1);
      Report whole;
      const auto expected = run(*one_thread, options, m, n, k, a, b, &whole);
      auto three = host::make_emulator_backend(3);
      EXPECT_TRUE(same_product_bits(expected, run(*three, options, m, n, k, a, b), m, n, k, a, b));
      Options small = options;
      small.workspace_bytes = 20 << 10;
      Report report;
      EXPECT_TRUE(same_product_bits(expected, run(*one_thread, small, m, n, k, a, b, &report), m, n,
                                    k, a, b));
      EXPECT_GT(report.blocks, 1) << m << " x " << n;
      // The workspace the report names for one block runs the call in one block.
      EXPECT_GT(report.one_block_workspace, small.workspace_bytes) << m << " x " << n;
      Options one_block = options;
      one_block.workspace_bytes = report.one_block_workspace;
      Report whole_again;
      EXPECT_TRUE(same_product_bits(
          expected, run(*one_thread, one_block, m, n, k, a, b, &whole_again), m, n, k, a, b));
      EXPECT_EQ(whole_again.blocks, 1) << m << " x " << n;
      // That workspace keeps the products' int32 sums; a smaller one that still holds one block
      // of int8 residues reduces them modulus by modulus, with the same bits.
      EXPECT_TRUE(whole.crt_product_sums && whole_again.crt_product_sums) << m << " x " << n;
      Options residues = options;
      Report reduced;
      for (residues.workspace_bytes = report.one_block_workspace; residues.workspace_bytes > 0;
           residues.workspace_bytes -= 64) {
        const auto c = run(*one_thread, residues, m, n, k, a, b, &reduced);
        if (reduced.blocks > 1) break;
        if (!reduced.crt_product_sums) {
          EXPECT_TRUE(same_product_bits(expected, c, m, n, k, a, b));
          break;
        }
      }
      EXPECT_EQ(reduced.blocks, 1) << m << " x " << n;
      EXPECT_FALSE(reduced.crt_product_sums) << m << " x " << n;
      EXPECT_EQ(report.dp_bound_bits, whole.dp_bound_bits) << m << " x " << n;
      if (n == 3) {
        EXPECT_EQ(report.block_cols, n) << m << " x " << n;
      }
      columns_blocked += report.block_cols < n ? 1 : 0;
      if (options.mode == Mode::dp) {
        EXPECT_EQ(whole.dp_bound_terms, k) << m << " x " << n;
      }
    }
  }
  EXPECT_GT(columns_blocked, 0);
}

TEST(CrtScheme, InfNanAlphaBetaAndSgemm) {
  const std::int64_t m = 3, n = 3, k = 4;
  auto a = phi_matrix(m, k, 1.0, 71), b = phi_matrix(k, n, 1.0, 72);
  a[0] = INFINITY;
  b[static_cast<std::size_t>(1 * k + 2)] = NAN;
  auto backend = host::make_emulator_backend();
  const auto c = run(*backend, {.mode = Mode::cr}, m, n, k, a, b);
  const auto plain = plain_dgemm(m, n, k, a, b);
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = 0; i < m; ++i) {
      const double x = c[static_cast<std::size_t>(j * m + i)],
                   r = plain[static_cast<std::size_t>(j * m + i)];
      if (i == 0 || j == 1) {
        EXPECT_EQ(std::isnan(x), std::isnan(r)) << i << ", " << j;
        if (!std::isnan(r)) {
          EXPECT_EQ(x, r) << i << ", " << j;
        }
      } else {
        EXPECT_TRUE(std::isfinite(x)) << i << ", " << j;
      }
    }
  }
  // alpha and beta as BLAS: C := 2 A B - C, with the correctly rounded A B.
  const auto a2 = phi_matrix(m, k, 1.0, 73), b2 = phi_matrix(k, n, 1.0, 74);
  const auto ab = correctly_rounded_product(m, n, k, a2, b2);
  std::vector<double> c2(static_cast<std::size_t>(m * n), 1.5);
  Handle h(*backend, kCrt, {.mode = Mode::cr});
  h.dgemm('N', 'N', m, n, k, 2.0, a2.data(), m, b2.data(), k, -1.0, c2.data(), m);
  for (std::size_t e = 0; e < c2.size(); ++e) EXPECT_EQ(c2[e], 2.0 * ab[e] - 1.5) << e;
  // sgemm: the correctly rounded binary64 product rounded to fp32.
  const std::vector<float> a32(a2.begin(), a2.end()), b32(b2.begin(), b2.end());
  const std::vector<double> aw(a32.begin(), a32.end()), bw(b32.begin(), b32.end());
  const auto exact = correctly_rounded_product(m, n, k, aw, bw);
  std::vector<float> s(static_cast<std::size_t>(m * n));
  Handle sp(*backend, kCrt, {.mode = Mode::sp});
  sp.sgemm('N', 'N', m, n, k, 1.0f, a32.data(), m, b32.data(), k, 0.0f, s.data(), m);
  for (std::size_t e = 0; e < s.size(); ++e) EXPECT_EQ(s[e], static_cast<float>(exact[e])) << e;
}

}  // namespace
}  // namespace tcemu::ozaki
