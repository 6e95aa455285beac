// Random MMA cases that reach every kind of result (CaseGenerator in case_generator.hpp).
#include <algorithm>
#include <random>

#include <tcemu/cases/case_generator.hpp>
#include <tcemu/emulator/block_fma.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/round.hpp>

#include "fraction_pattern.hpp"

namespace tcemu {

class CaseGenerator::Impl {
 public:
  Impl(const Datapath& dp, std::uint64_t seed, std::uint64_t stream, std::uint64_t chunk)
      : dp_(dp), in_(dp.input), acc_(dp.accumulator) {
    std::seed_seq sequence{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                           static_cast<std::uint32_t>(stream),
                           static_cast<std::uint32_t>(stream >> 32),
                           static_cast<std::uint32_t>(chunk)};
    rng_.seed(sequence);
  }

  std::string_view next(MmaCase& out, std::size_t k) {
    out.a.assign(k, 0);
    out.b.assign(k, 0);
    out.d.reset();
    const Scenario& scenario = kScenarios[uniform(0, static_cast<int>(std::size(kScenarios)) - 1)];
    (this->*scenario.generate)(out);
    return scenario.name;
  }

  std::size_t random_k() {
    const int i = dp_.instruction_k;
    const int t = dp_.block_terms;
    const int g = dp_.k_group;
    const int choices[] = {0, 1, 2,     3,     g,     t - 1, t,         t + 1, i - 1,
                           i, i, i + 1, i + g, 2 * i, 2 * i, 2 * i + 1, 3 * i, uniform(0, 3 * i)};
    return static_cast<std::size_t>(
        std::max(0, choices[uniform(0, static_cast<int>(std::size(choices)) - 1)]));
  }

 private:
  // --- random numbers
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  std::uint32_t random_bits(int n) {
    return n <= 0 ? 0 : static_cast<std::uint32_t>(rng_() & ((std::uint64_t{1} << n) - 1));
  }

  // --- encodings
  static int bias(const FloatFormat& f) { return (1 << (f.exponent_bits - 1)) - 1; }
  static std::uint32_t all_ones(const FloatFormat& f) { return (1u << f.exponent_bits) - 1; }
  static std::uint32_t all_fraction(const FloatFormat& f) { return (1u << f.fraction_bits) - 1; }
  static int min_exponent(const FloatFormat& f) { return 1 - bias(f); }
  static int max_exponent(const FloatFormat& f) {
    return static_cast<int>(all_ones(f)) - (f.special == SpecialEncoding::ieee ? 1 : 0) - bias(f);
  }
  // Leading-bit exponent of the smallest subnormal.
  static int lowest_exponent(const FloatFormat& f) { return min_exponent(f) - f.fraction_bits; }

  // Bits of a stored pattern; TF32-like padding is filled with random bits half of the time (the
  // hardware ignores them).
  std::uint32_t pack(const FloatFormat& f, bool negative, std::uint32_t exponent_field,
                     std::uint32_t fraction) {
    const std::uint32_t stored = (std::uint32_t{negative} << (f.exponent_bits + f.fraction_bits)) |
                                 (exponent_field << f.fraction_bits) | fraction;
    const std::uint32_t padding = chance(0.5) ? random_bits(f.padding_bits) : 0;
    return (stored << f.padding_bits) | padding;
  }

  std::uint32_t fraction(const FloatFormat& f) {
    return detail::fraction_pattern(f, uniform(0, 9), [&](int n) { return random_bits(n); });
  }

  // A finite nonzero value with leading bit at `exponent`, clamped to the format's range (below
  // the minimum exponent: a subnormal).
  std::uint32_t finite(const FloatFormat& f, bool negative, int exponent) {
    exponent = std::clamp(exponent, lowest_exponent(f), max_exponent(f));
    if (exponent >= min_exponent(f)) {
      const auto field = static_cast<std::uint32_t>(exponent + bias(f));
      std::uint32_t frac = fraction(f);
      if (f.special == SpecialEncoding::fn_e4m3 && field == all_ones(f) &&
          frac == all_fraction(f)) {
        --frac;  // S.1111.111 is E4M3's NaN
      }
      return pack(f, negative, field, frac);
    }
    const int top = f.fraction_bits - (min_exponent(f) - exponent);  // leading fraction bit
    return pack(f, negative, 0, (1u << top) | random_bits(top));
  }
  std::uint32_t zero(const FloatFormat& f, bool negative) { return pack(f, negative, 0, 0); }
  std::uint32_t infinity(const FloatFormat& f, bool negative) {
    if (f.special != SpecialEncoding::ieee) return max_finite(f, negative);  // E4M3 has no Inf
    return pack(f, negative, all_ones(f), 0);
  }
  std::uint32_t nan(const FloatFormat& f) {
    if (f.special != SpecialEncoding::ieee)
      return pack(f, chance(0.5), all_ones(f), all_fraction(f));
    return pack(f, chance(0.5), all_ones(f),
                std::max<std::uint32_t>(1, random_bits(f.fraction_bits)));
  }
  std::uint32_t max_finite(const FloatFormat& f, bool negative) {
    const std::uint32_t field = static_cast<std::uint32_t>(max_exponent(f) + bias(f));
    const std::uint32_t frac =
        f.special == SpecialEncoding::ieee ? all_fraction(f) : all_fraction(f) - 1;
    return pack(f, negative, field, frac);
  }
  std::uint32_t uniform_pattern(const FloatFormat& f) { return random_bits(f.container_bits()); }
  std::uint32_t special(const FloatFormat& f) {
    switch (uniform(0, 4)) {
      case 0:
        return infinity(f, false);
      case 1:
        return infinity(f, true);
      case 2:
        return nan(f);
      default:
        return zero(f, chance(0.5));
    }
  }
  // Any exponent of the format, subnormals included.
  int any_exponent(const FloatFormat& f) { return uniform(lowest_exponent(f), max_exponent(f)); }

  // --- scenarios
  void uniform_bits(MmaCase& x) {
    for (std::size_t i = 0; i < x.a.size(); ++i) {
      x.a[i] = uniform_pattern(in_);
      x.b[i] = uniform_pattern(in_);
    }
    x.c = uniform_pattern(acc_);
  }

  // Exponents within +-spread of a random centre per operand, random signs; c near the products.
  void clustered(MmaCase& x, int spread) {
    const int ea = any_exponent(in_);
    const int eb = any_exponent(in_);
    for (std::size_t i = 0; i < x.a.size(); ++i) {
      x.a[i] = finite(in_, chance(0.5), ea + uniform(-spread, spread));
      x.b[i] = finite(in_, chance(0.5), eb + uniform(-spread, spread));
    }
    x.c = chance(0.15) ? zero(acc_, chance(0.5))
                       : finite(acc_, chance(0.5), ea + eb + uniform(-spread - 30, spread + 2));
  }

  void wide_spread(MmaCase& x) {
    for (std::size_t i = 0; i < x.a.size(); ++i) {
      x.a[i] = finite(in_, chance(0.5), any_exponent(in_));
      x.b[i] = finite(in_, chance(0.5), any_exponent(in_));
    }
    x.c = finite(acc_, chance(0.5), any_exponent(acc_));
  }

  // Products cancelling in pairs (a negated copy, sometimes with its last bit changed) and/or c
  // cancelling the exact sum of the products (rounded to the accumulator), or the largest one.
  void cancellation(MmaCase& x) {
    clustered(x, uniform(0, 6));
    const int mode = uniform(0, 3);
    if (mode != 1) {
      for (std::size_t i = 1; i < x.a.size(); i += 2) {
        x.a[i] = x.a[i - 1] ^ (in_.sign_mask() << in_.padding_bits);
        x.b[i] = x.b[i - 1];
        if (chance(0.5)) x.a[i] ^= 1u << in_.padding_bits;
        if (chance(0.3)) x.b[i] ^= 1u << in_.padding_bits;
      }
    }
    if (mode == 0) return;
    // c = -(exact sum of the products), or of the first one, rounded to the accumulator: the
    // emulator's exact datapath computes the sum (only the inputs are chosen with it). The
    // unscaled sum of a and b, both in the input format, as this generator draws them.
    Datapath exact = dp_;
    exact.has_input_b = false;
    exact.block_scaling = {};
    exact.alignment_fraction_bits = std::nullopt;
    exact.alignment_floor = kNoAlignmentFloor;
    exact.instruction_k = exact.block_terms = exact.k_group = kMaxBlockTerms;
    exact.block_rounding = chance(0.5) ? Rounding::nearest_even : Rounding::toward_zero;
    exact.block_result_precision = acc_.fraction_bits + 1;
    exact.c_entry = AccumulatorEntry::aligned_in_first_block;
    exact.overflow = Overflow::saturate;
    const std::size_t terms = mode == 3 ? std::min<std::size_t>(1, x.a.size()) : x.a.size();
    const std::span<const std::uint32_t> a(x.a.data(), terms), b(x.b.data(), terms);
    x.c = mma_element(exact, a, b, encode_zero(acc_, false)) ^
          (acc_.sign_mask() << acc_.padding_bits);
  }

  // Products and c close to the accumulator's largest finite value.
  void near_overflow(MmaCase& x) {
    const bool negative = chance(0.5);
    const int top = max_exponent(acc_);
    for (std::size_t i = 0; i < x.a.size(); ++i) {
      const int target = top - uniform(-2, 4);
      const int ea = std::clamp(uniform(target - max_exponent(in_), max_exponent(in_)),
                                min_exponent(in_), max_exponent(in_));
      const bool flip = chance(0.2);
      x.a[i] = finite(in_, negative != flip, ea);
      x.b[i] = finite(in_, false, target - ea);
    }
    x.c = chance(0.3) ? max_finite(acc_, negative != chance(0.2))
                      : finite(acc_, negative != chance(0.2), top - uniform(0, 2));
  }

  // Subnormal and smallest normal inputs and accumulators; sometimes every sign negative.
  void tiny(MmaCase& x) {
    const bool all_negative = chance(0.3);
    const auto sign = [&] { return all_negative || chance(0.5); };
    for (std::size_t i = 0; i < x.a.size(); ++i) {
      x.a[i] = finite(in_, sign(), uniform(lowest_exponent(in_), min_exponent(in_) + 1));
      x.b[i] = finite(in_, false, uniform(lowest_exponent(in_), min_exponent(in_) + 1));
    }
    x.c = chance(0.3)
              ? zero(acc_, sign())
              : finite(acc_, sign(), uniform(lowest_exponent(acc_), min_exponent(acc_) + 1));
  }

  void signed_zeros(MmaCase& x) {
    clustered(x, 2);
    const double p = chance(0.3) ? 1.0 : 0.5;
    for (std::size_t i = 0; i < x.a.size(); ++i) {
      if (chance(p)) x.a[i] = zero(in_, chance(0.5));
      if (chance(0.3)) x.b[i] = zero(in_, chance(0.5));
    }
    if (chance(0.7)) x.c = zero(acc_, chance(0.5));
  }

  void specials(MmaCase& x) {
    if (chance(0.5)) {
      clustered(x, 3);
    } else {
      wide_spread(x);
    }
    const double p = x.a.empty() ? 0.0 : 1.5 / static_cast<double>(x.a.size());
    for (std::size_t i = 0; i < x.a.size(); ++i) {
      if (chance(p)) x.a[i] = special(in_);
      if (chance(p)) x.b[i] = special(in_);
    }
    if (chance(0.25)) x.c = special(acc_);
  }

  // Products whose alignment exponents lie below the alignment floor (formats wide enough).
  void below_floor(MmaCase& x) {
    const int floor = std::max(dp_.alignment_floor, 2 * lowest_exponent(in_));
    for (std::size_t i = 0; i < x.a.size(); ++i) {
      const int target = floor - uniform(-3, 30);
      const int ea = target / 2 + uniform(-3, 3);
      x.a[i] = finite(in_, chance(0.5), ea);
      x.b[i] = finite(in_, chance(0.5), target - ea);
    }
    x.c =
        chance(0.5) ? zero(acc_, chance(0.5)) : finite(acc_, chance(0.5), floor + uniform(-30, 2));
  }

  // Each operand of its own kind.
  std::uint32_t any(const FloatFormat& f) {
    switch (uniform(0, 9)) {
      case 0:
        return uniform_pattern(f);
      case 1:
        return zero(f, chance(0.5));
      case 2:
        return finite(f, chance(0.5), uniform(lowest_exponent(f), min_exponent(f) - 1));
      case 3:
        return max_finite(f, chance(0.5));
      case 4:
        return finite(f, chance(0.5), lowest_exponent(f));
      case 5:
        return finite(f, chance(0.5), min_exponent(f));
      case 6:
        return chance(0.2) ? special(f) : finite(f, chance(0.5), any_exponent(f));
      default:
        return finite(f, chance(0.5), uniform(-4, 4));
    }
  }
  void mixed(MmaCase& x) {
    for (std::size_t i = 0; i < x.a.size(); ++i) {
      x.a[i] = any(in_);
      x.b[i] = any(in_);
    }
    x.c = any(acc_);
  }

  struct Scenario {
    const char* name;
    void (Impl::*generate)(MmaCase&);
  };
  void clustered_3(MmaCase& x) { clustered(x, 3); }
  static constexpr Scenario kScenarios[] = {
      {"uniform-bits", &Impl::uniform_bits},   {"clustered", &Impl::clustered_3},
      {"wide-spread", &Impl::wide_spread},     {"cancellation", &Impl::cancellation},
      {"near-overflow", &Impl::near_overflow}, {"tiny", &Impl::tiny},
      {"signed-zeros", &Impl::signed_zeros},   {"specials", &Impl::specials},
      {"below-floor", &Impl::below_floor},     {"mixed", &Impl::mixed},
  };

  const Datapath& dp_;
  FloatFormat in_;
  FloatFormat acc_;
  std::mt19937_64 rng_;
};

CaseGenerator::CaseGenerator(const Datapath& datapath, std::uint64_t seed, std::uint64_t stream,
                             std::uint64_t chunk)
    : datapath_(datapath), impl_(std::make_unique<Impl>(datapath_, seed, stream, chunk)) {}

CaseGenerator::~CaseGenerator() = default;

std::string_view CaseGenerator::next(MmaCase& out, std::size_t k) {
  return impl_->next(out, k);
}

std::size_t CaseGenerator::random_k() {
  return impl_->random_k();
}

ProbeCases probe_cases(const Datapath& shape, int k, std::size_t random, std::uint64_t seed) {
  ProbeCases out;
  CaseGenerator generator(shape, seed);
  out.cases.resize(random);
  out.names.resize(random);
  for (MmaCase& c : out.cases) generator.next(c, static_cast<std::size_t>(k));
  for (NamedCase& nc : crafted_cases(shape.input, shape.accumulator, k)) {
    out.cases.push_back(std::move(nc.values));
    out.names.push_back(std::move(nc.name));
  }
  return out;
}

}  // namespace tcemu
