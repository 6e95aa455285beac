#include <tcemu/cases/integer_probe_cases.hpp>

#include <algorithm>
#include <limits>

#include "probe_case_stream.hpp"

namespace tcemu {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int32_t>::min();

using detail::SplitMix;

std::int32_t clamp32(std::int64_t v) {
  return static_cast<std::int32_t>(std::clamp(v, kMin, kMax));
}

// An operand value: uniform, or (when `edgy`) one of min, max, 0, +-1 half of the time.
std::int32_t value(const IntegerFormat& f, SplitMix& rng, bool edgy) {
  if (edgy && rng.next() % 2 == 0) {
    const std::int64_t picks[] = {f.min_value(), f.max_value(), 0, 1, f.is_signed ? -1 : 1};
    return static_cast<std::int32_t>(picks[rng.next() % 5]);
  }
  return static_cast<std::int32_t>(rng.in(f.min_value(), f.max_value()));
}

IntegerMmaCase random_case(const IntegerFormat& fa, const IntegerFormat& fb, int k, SplitMix& rng) {
  IntegerMmaCase c;
  c.a.resize(static_cast<std::size_t>(k));
  c.b.resize(static_cast<std::size_t>(k));
  const std::int64_t largest = std::max(std::abs(fa.min_value()), fa.max_value()) *
                               std::max(std::abs(fb.min_value()), fb.max_value());
  const std::int64_t reach = largest * k;  // the largest |sum of products|
  const auto near_end = [&] {
    const std::int64_t d = rng.in(0, reach);
    return clamp32(rng.next() % 2 ? kMax - d : kMin + d);
  };
  switch (rng.next() % 4) {
    case 0:  // uniform
      for (int p = 0; p < k; ++p) c.a[p] = value(fa, rng, false), c.b[p] = value(fb, rng, false);
      c.c = static_cast<std::int32_t>(static_cast<std::uint32_t>(rng.next()));
      break;
    case 1:  // extremes, c near either end
      for (int p = 0; p < k; ++p) c.a[p] = value(fa, rng, true), c.b[p] = value(fb, rng, true);
      c.c = near_end();
      break;
    case 2: {  // products of one sign, c where the sum crosses the end it runs towards
      const bool up = rng.next() % 2 == 0 || !(fa.is_signed || fb.is_signed);
      std::int64_t sum = 0;
      for (int p = 0; p < k; ++p) {
        c.a[p] = value(fa, rng, true);
        c.b[p] = value(fb, rng, true);
        const std::int64_t product = std::int64_t{c.a[p]} * c.b[p];
        if ((product < 0) == up && product != 0) {  // flip the sign where the formats allow
          if (fb.holds(-std::int64_t{c.b[p]})) {
            c.b[p] = -c.b[p];
          } else if (fa.holds(-std::int64_t{c.a[p]})) {
            c.a[p] = -c.a[p];
          }
        }
        sum += std::int64_t{c.a[p]} * c.b[p];
      }
      // Past the end (slack > 0) about half of the time: by a few units or by up to |sum| / 4.
      const std::int64_t spread = std::max<std::int64_t>(3, std::abs(sum) / 4);
      const std::int64_t slack = rng.next() % 2 ? rng.in(-3, 3) : rng.in(-spread, spread);
      c.c = clamp32(up ? kMax - sum + slack : kMin - sum - slack);
      break;
    }
    default:  // mostly zeros, c near the ends
      for (int p = 0; p < k; ++p) {
        const bool keep = rng.next() % 8 == 0;
        c.a[p] = keep ? value(fa, rng, true) : 0;
        c.b[p] = value(fb, rng, true);
      }
      c.c = near_end();
      break;
  }
  return c;
}

}  // namespace

IntegerProbeCases integer_crafted_cases(const IntegerFormat& fa, const IntegerFormat& fb, int k) {
  IntegerProbeCases out;
  const auto add = [&](std::string name, std::vector<std::int32_t> a, std::vector<std::int32_t> b,
                       std::int64_t c) {
    out.cases.push_back({std::move(a), std::move(b), clamp32(c), std::nullopt});
    out.names.push_back(std::move(name));
  };
  const auto n = static_cast<std::size_t>(k);
  const auto amin = static_cast<std::int32_t>(fa.min_value());
  const auto amax = static_cast<std::int32_t>(fa.max_value());
  const auto bmin = static_cast<std::int32_t>(fb.min_value());
  const auto bmax = static_cast<std::int32_t>(fb.max_value());
  // Extreme operands everywhere, with c at 0 and at both ends of int32.
  for (const auto& [av, bv] : {std::pair{amin, bmin}, std::pair{amin, bmax}, std::pair{amax, bmin},
                               std::pair{amax, bmax}}) {
    for (const std::int64_t c : {std::int64_t{0}, kMax, kMin, kMax - 1, kMin + 1}) {
      add("every a = " + std::to_string(av) + ", every b = " + std::to_string(bv) +
              ", c = " + std::to_string(c),
          std::vector<std::int32_t>(n, av), std::vector<std::int32_t>(n, bv), c);
    }
  }
  // The largest positive product P = pa * pb and the most negative one N = na * nb.
  std::int32_t pa = 0, pb = 0, na = 0, nb = 0;
  for (const std::int32_t av : {amin, amax}) {
    for (const std::int32_t bv : {bmin, bmax}) {
      if (std::int64_t{av} * bv > std::int64_t{pa} * pb) pa = av, pb = bv;
      if (std::int64_t{av} * bv < std::int64_t{na} * nb) na = av, nb = bv;
    }
  }
  const std::int64_t big = std::int64_t{pa} * pb, small = std::int64_t{na} * nb;
  for (int p = 0; p < k; ++p) {
    std::vector<std::int32_t> a(n, 0), b(n, 0);
    a[p] = 1, b[p] = 1;
    add("c = INT32_MAX, a product +1 at k = " + std::to_string(p), a, b, kMax);
    if (fa.is_signed || fb.is_signed) {
      (fa.is_signed ? a[p] : b[p]) = -1;
      add("c = INT32_MIN, a product -1 at k = " + std::to_string(p), a, b, kMin);
    }
  }
  // Sums of the largest products ending at INT32_MAX and one past it (and at INT32_MIN).
  add("sum of K products P ends at INT32_MAX", std::vector<std::int32_t>(n, pa),
      std::vector<std::int32_t>(n, pb), kMax - big * k);
  add("sum of K products P ends one past INT32_MAX", std::vector<std::int32_t>(n, pa),
      std::vector<std::int32_t>(n, pb), kMax - big * k + 1);
  if (small < 0) {
    add("sum of K products N ends at INT32_MIN", std::vector<std::int32_t>(n, na),
        std::vector<std::int32_t>(n, nb), kMin - small * k);
    add("sum of K products N ends one past INT32_MIN", std::vector<std::int32_t>(n, na),
        std::vector<std::int32_t>(n, nb), kMin - small * k - 1);
    // For each ordered pair (p, q), +P at p and N at q: from c = INT32_MAX - P/2 the sum leaves
    // int32 upwards after P and comes back after N; from c = INT32_MIN + |N|/2 it leaves
    // downwards after N and comes back after P (|N| >= P/2 and P >= |N|/2 for every pair of
    // formats). Only a partial sum that holds one of the two products overflows, and the ordered
    // pairs put either product first in k.
    for (int p = 0; p < k; ++p) {
      for (int q = 0; q < k; ++q) {
        if (p == q) continue;
        std::vector<std::int32_t> a(n, 0), b(n, 0);
        a[p] = pa, b[p] = pb, a[q] = na, b[q] = nb;
        add("c = INT32_MAX - P/2, +P at k = " + std::to_string(p) +
                ", N at k = " + std::to_string(q),
            a, b, kMax - big / 2);
        add("c = INT32_MIN + |N|/2, +P at k = " + std::to_string(p) +
                ", N at k = " + std::to_string(q),
            a, b, kMin - small / 2);
      }
    }
  }
  return out;
}

IntegerProbeCases integer_probe_cases(const IntegerFormat& a, const IntegerFormat& b, int k,
                                      std::size_t random, std::uint64_t seed, int threads) {
  return detail::random_then_crafted(
      random, seed, threads, [&](SplitMix& rng) { return random_case(a, b, k, rng); },
      integer_crafted_cases(a, b, k));
}

}  // namespace tcemu
