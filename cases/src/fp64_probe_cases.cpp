#include <tcemu/cases/fp64_probe_cases.hpp>

#include <iterator>
#include <utility>

#include <tcemu/emulator/floating_point_scope.hpp>
#include <tcemu/emulator/fp64_bits.hpp>
#include <tcemu/emulator/rounded_arithmetic.hpp>

#include "probe_case_stream.hpp"

namespace tcemu {
namespace {

using detail::SplitMix;

// Uniform in [low, high], for the small ranges of exponents and positions drawn here.
int uniform(SplitMix& rng, int low, int high) {
  return static_cast<int>(rng.in(low, high));
}

constexpr std::uint64_t kOne = 0x3FF0000000000000ull;
constexpr std::uint64_t kInf = fp64::kExponentMask;
constexpr std::uint64_t kMaxFinite = 0x7FEFFFFFFFFFFFFFull;

// 2^e for e in [-1074, 1023], built from its bits: a normal number's biased exponent field
// 1023 + e (e >= -1022), else the subnormal whose fraction has bit 1074 + e set.
constexpr std::uint64_t pow2(int e) {
  return e >= -1022 ? static_cast<std::uint64_t>(1023 + e) << 52 : std::uint64_t{1} << (1074 + e);
}

constexpr std::uint64_t negated(std::uint64_t bits) {
  return bits ^ fp64::kSignBit;
}

// A normal number of exponent e in [-1022, 1023] with a random significand and sign.
std::uint64_t random_normal(SplitMix& rng, int e) {
  return (rng.next() & (fp64::kSignBit | fp64::kFractionMask)) |
         (static_cast<std::uint64_t>(1023 + e) << 52);
}

Fp64MmaCase random_case(int k, SplitMix& rng) {
  Fp64MmaCase c;
  c.a.resize(static_cast<std::size_t>(k));
  c.b.resize(static_cast<std::size_t>(k));
  const std::uint64_t kind = rng.next() % 4;
  switch (kind) {
    case 0:  // moderate
    case 1:  // moderate, c cancels the products
      for (int p = 0; p < k; ++p) {
        c.a[p] = random_normal(rng, uniform(rng, -8, 8));
        c.b[p] = random_normal(rng, uniform(rng, -8, 8));
      }
      c.c = random_normal(rng, uniform(rng, -8, 8));
      if (kind == 1) {
        // c = -(the products summed by an fma chain from 0, starting at a random k), so that
        // d is the difference of two chains' rounding errors.
        const FloatingPointScope scope;
        const int start = uniform(rng, 0, k - 1);
        double sum = 0;
        for (int i = 0; i < k; ++i) {
          const int p = (start + i) % k;
          sum = fma_rn(fp64::value(c.a[p]), fp64::value(c.b[p]), sum);
        }
        c.c = negated(fp64::bits(sum));
      }
      break;
    case 2:  // wide: products from 2^-1080 (subnormal or zero) to past the largest finite
      for (int p = 0; p < k; ++p) {
        c.a[p] = random_normal(rng, uniform(rng, -540, 511));
        c.b[p] = random_normal(rng, uniform(rng, -540, 511));
      }
      c.c = rng.next() % 4 == 0 ? (rng.next() & (fp64::kSignBit | fp64::kFractionMask))
                                : random_normal(rng, uniform(rng, -1022, 1023));
      break;
    default: {  // random bit patterns, a quarter of the words replaced by special values
      constexpr std::uint64_t kSpecial[] = {0,
                                            fp64::kSignBit,
                                            kInf,
                                            negated(kInf),
                                            0x7FF8000000000000ull,
                                            0x7FF0000000000001ull,
                                            0xFFF8000000000abcull,
                                            1,
                                            kMaxFinite,
                                            kOne};
      const auto word = [&] {
        return rng.next() % 4 == 0 ? kSpecial[rng.next() % std::size(kSpecial)] : rng.next();
      };
      for (int p = 0; p < k; ++p) c.a[p] = word(), c.b[p] = word();
      c.c = word();
    }
  }
  return c;
}

}  // namespace

Fp64ProbeCases fp64_crafted_cases(int k) {
  Fp64ProbeCases out;
  const auto K = static_cast<std::size_t>(k);
  // A case of products t_p = value x 1 (exact) with c, zeros elsewhere.
  const auto add = [&](std::string name, std::uint64_t c,
                       std::initializer_list<std::pair<int, std::uint64_t>> terms) {
    Fp64MmaCase x;
    x.a.assign(K, 0);
    x.b.assign(K, kOne);
    x.c = c;
    for (const auto& [p, t] : terms) x.a[static_cast<std::size_t>(p)] = t;
    out.cases.push_back(std::move(x));
    out.names.push_back(std::move(name));
  };
  const auto at = [](int p) { return std::to_string(p); };
  const std::uint64_t tiny = pow2(-60), half_ulp = pow2(-53);
  for (int p = 0; p < k; ++p) {
    for (int q = 0; q < k; ++q) {
      if (p == q) continue;
      add("order: c = 1, -1 at k=" + at(p) + ", 2^-60 at k=" + at(q) + " (2^-60 if k=" + at(p) +
              " first, 0 if k=" + at(q) + " first)",
          kOne, {{p, negated(kOne)}, {q, tiny}});
    }
  }
  for (int p = 0; p < k; ++p) {
    for (int q = 0; q < k; ++q) {
      if (p == q) continue;
      add("c entry: c = 2^-60, 1 at k=" + at(p) + ", -1 at k=" + at(q) +
              " (0 if c enters first, 2^-60 if after both)",
          tiny, {{p, kOne}, {q, negated(kOne)}});
    }
  }
  for (int p = 0; p < k; ++p) {
    for (int q = p + 1; q < k; ++q) {
      add("roundings: c = 1, 2^-53 at k=" + at(p) + " and k=" + at(q) +
              " (1 from a chain, 1 + 2^-52 from one rounding)",
          kOne, {{p, half_ulp}, {q, half_ulp}});
    }
  }
  // (1 + 2^-30)^2 = 1 + 2^-29 + 2^-60, which needs 61 bits: rounded alone it is 1 + 2^-29.
  const std::uint64_t widened = kOne | (std::uint64_t{1} << 22);          // 1 + 2^-30
  const std::uint64_t cancel = negated(kOne | (std::uint64_t{1} << 23));  // -(1 + 2^-29)
  for (int p = 0; p < k; ++p) {
    Fp64MmaCase x;
    x.a.assign(K, 0);
    x.b.assign(K, kOne);
    x.a[static_cast<std::size_t>(p)] = x.b[static_cast<std::size_t>(p)] = widened;
    x.c = cancel;
    out.cases.push_back(x);
    out.names.push_back("fusion: (1 + 2^-30)^2 at k=" + at(p) +
                        ", c = -(1 + 2^-29) (2^-60 fused, 0 with the product rounded)");
  }
  if (k >= 3) {
    for (int p = 0; p < k; ++p) {
      const int q = (p + 1) % k, r = (p + 2) % k;
      add("overflow order: DBL_MAX at k=" + at(p) + " and k=" + at(q) + ", -DBL_MAX at k=" + at(r) +
              " (Inf if the maxima meet first)",
          0, {{p, kMaxFinite}, {q, kMaxFinite}, {r, negated(kMaxFinite)}});
    }
  }
  // Special values, at the first and the last k.
  const std::uint64_t qnan = 0x7FF8000000000123ull, snan = 0x7FF0000000000001ull,
                      negative_nan = 0xFFF8000000000456ull;
  for (const int p : {0, k - 1}) {
    add("NaN: quiet NaN with payload 123 at k=" + at(p), kOne, {{p, qnan}});
    add("NaN: signalling NaN at k=" + at(p), kOne, {{p, snan}});
    add("NaN: negative NaN at k=" + at(p), kOne, {{p, negative_nan}});
    {
      Fp64MmaCase x;
      x.a.assign(K, 0);
      x.b.assign(K, kOne);
      x.b[static_cast<std::size_t>(p)] = kInf;  // 0 x Inf
      x.c = kOne;
      out.cases.push_back(x);
      out.names.push_back("NaN: 0 x Inf at k=" + at(p));
    }
    add("Inf: Inf at k=" + at(p) + " with c = 1", kOne, {{p, kInf}});
    add("Inf: -Inf at k=" + at(p) + " with c = Inf (NaN)", kInf, {{p, negated(kInf)}});
  }
  add("NaN: c quiet NaN with payload 123", qnan, {});
  add("NaN: c negative NaN", negative_nan, {});
  if (k >= 2) {
    add("NaN: Inf at k=0, -Inf at k=" + at(k - 1), kOne, {{0, kInf}, {k - 1, negated(kInf)}});
    add("Inf: Inf at k=0, 1 at k=" + at(k - 1), kOne, {{0, kInf}, {k - 1, kOne}});
  }
  // Signed zeros: an exact zero sum is +0 unless every addend is -0 (IEEE 754 6.3).
  add("zero: c = -0, every product +0 (+0)", fp64::kSignBit, {});
  {
    Fp64MmaCase x;
    x.a.assign(K, fp64::kSignBit);  // -0 x 1
    x.b.assign(K, kOne);
    x.c = fp64::kSignBit;
    out.cases.push_back(x);
    out.names.push_back("zero: c = -0, every product -0 (-0)");
    x.c = 0;
    out.cases.push_back(x);
    out.names.push_back("zero: c = +0, every product -0 (+0)");
  }
  add("zero: c = 1, -1 at k=0 (+0)", kOne, {{0, negated(kOne)}});
  add("zero: c = -1, 1 at k=" + at(k - 1) + " (+0)", negated(kOne), {{k - 1, kOne}});
  // Subnormals: no flush to zero of operands, products, c or results.
  {
    Fp64MmaCase x;
    x.a.assign(K, 0);
    x.b.assign(K, kOne);
    x.a[0] = x.b[0] = pow2(-537);
    x.c = 0;
    out.cases.push_back(x);
    out.names.push_back("subnormal: 2^-537 x 2^-537 = 2^-1074 at k=0, c = 0");
    x.a[0] = 0x1FE8000000000000ull;  // 1.5 x 2^-513
    x.b[0] = pow2(-562);
    out.cases.push_back(x);
    out.names.push_back("subnormal: 1.5 x 2^-1075 at k=0 rounds up to 2^-1074");
    x.a[0] = 1;  // the smallest subnormal
    x.b[0] = pow2(52);
    out.cases.push_back(x);
    out.names.push_back("subnormal: operand 2^-1074 x 2^52 = 2^-1022 at k=0");
  }
  add("subnormal: c = 2^-1073, zero products", pow2(-1073), {});
  // 2^-1020 - (1 - 2^-50) 2^-1020 = 2^-1070, a subnormal result of an exact cancellation.
  add("subnormal: c = 2^-1020, -(1 - 2^-50) 2^-1020 at k=" + at(k - 1) + " (2^-1070)", pow2(-1020),
      {{k - 1, negated(0x002FFFFFFFFFFFF8ull)}});
  return out;
}

Fp64ProbeCases fp64_probe_cases(int k, std::size_t random, std::uint64_t seed, int threads) {
  return detail::random_then_crafted(
      random, seed, threads, [k](SplitMix& rng) { return random_case(k, rng); },
      fp64_crafted_cases(k));
}

}  // namespace tcemu
