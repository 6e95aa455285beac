// Randomised cross-check of the emulator (tcemu::mma_element) against the independent MPFR oracle
// (tcemu::reference::oracle_mma_element), bit for bit, for every datapath preset and a few
// variants with one field changed.
//
// One test per datapath, named SUITE.DATAPATH (e.g. CrossCheck.sm90_wgmma_fp16_fp32). This source
// is built twice: with the compile definitions TCEMU_CROSS_CHECK_CASES (random cases per
// datapath; the environment variable of the same name overrides it) and TCEMU_CROSS_CHECK_SUITE
// (the suite name, so that the quick and the long program register distinct CTest names). The
// seed is fixed (the environment variable TCEMU_SEED overrides it) and printed. Cases are drawn
// in chunks of kChunk, each from its own generator seeded by (seed, datapath name, chunk), so the
// cases and their outcome do not depend on the thread count (TCEMU_TEST_THREADS, default: all
// cores).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/reference/format_value.hpp>
#include <tcemu/reference/mma_oracle.hpp>
#include <tcemu/reference/mpfr_number.hpp>

#ifndef TCEMU_CROSS_CHECK_CASES
#define TCEMU_CROSS_CHECK_CASES 2000
#endif
#ifndef TCEMU_CROSS_CHECK_SUITE
#define TCEMU_CROSS_CHECK_SUITE "CrossCheck"
#endif

namespace tcemu {
namespace {

using reference::MpfrNumber;
using reference::Precision;

constexpr std::uint64_t kDefaultSeed = 0x7463656D75;  // "tcemu"
constexpr std::size_t kChunk = 500;
constexpr std::size_t kMaxReported = 5;

std::uint64_t environment_number(const char* name, std::uint64_t fallback) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0' ? std::stoull(text, nullptr, 0) : fallback;
}

// ---------------------------------------------------------------------------------------------
// The datapaths: every preset the emulator offers, and variants with one field overridden.

struct Combination {
  std::string name;  // letters, digits and '_' (a gtest parameter name)
  Datapath datapath;
};

std::string test_name(std::string text) {
  for (char& ch : text) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return text;
}

std::vector<Combination> combinations() {
  const FloatFormat inputs[] = {formats::fp16, formats::bf16, formats::tf32, formats::e4m3,
                                formats::e5m2};
  const FloatFormat accumulators[] = {formats::fp32, formats::fp16};
  std::vector<Combination> out;
  for (const std::string_view arch : preset_names()) {
    for (const std::string_view instruction : instruction_names(arch)) {
      for (const FloatFormat& input : inputs) {
        for (const FloatFormat& accumulator : accumulators) {
          try {
            const Datapath dp = preset(arch, input, accumulator, instruction);
            out.push_back({test_name(std::string(arch) + "_" + std::string(instruction) + "_" +
                                     std::string(input.name) + "_" + std::string(accumulator.name)),
                           dp});
          } catch (const std::invalid_argument&) {
            // The hardware has no such MMA.
          }
        }
      }
    }
  }
  const auto variant = [&](std::string name, std::string_view arch, const FloatFormat& input,
                           const FloatFormat& accumulator,
                           const std::function<void(Datapath&)>& change) {
    Datapath dp = preset(arch, input, accumulator);
    change(dp);
    out.push_back({test_name("variant_" + name), dp});
  };
  using namespace formats;
  variant("sm90_fp16_fp32_rn", "sm90", fp16, fp32,
          [](Datapath& dp) { dp.block_rounding = Rounding::nearest_even; });
  variant("sm90_bf16_fp32_rn", "sm90", bf16, fp32,
          [](Datapath& dp) { dp.block_rounding = Rounding::nearest_even; });
  variant("sm80_bf16_fp32_f30", "sm80", bf16, fp32,
          [](Datapath& dp) { dp.alignment_fraction_bits = 30; });
  variant("sm90_fp16_fp16_f30", "sm90", fp16, fp16,
          [](Datapath& dp) { dp.alignment_fraction_bits = 30; });
  // Fewer alignment bits than the block result keeps: a block can change its own c, so running
  // an empty block would show (the contract says it does not run).
  variant("sm80_fp16_fp32_f10", "sm80", fp16, fp32,
          [](Datapath& dp) { dp.alignment_fraction_bits = 10; });
  variant("exact_rn_fp16_fp32_kgroup2", "exact-rn", fp16, fp32, [](Datapath& dp) {
    dp.block_terms = 8;  // two blocks per 16-term instruction, dealt two terms at a time
    dp.k_group = 2;
  });
  variant("exact_rz_bf16_fp32_kgroup2", "exact-rz", bf16, fp32, [](Datapath& dp) {
    dp.block_terms = 4;
    dp.k_group = 2;
  });
  variant("sm80_fp16_fp32_after", "sm80", fp16, fp32,
          [](Datapath& dp) { dp.c_entry = AccumulatorEntry::added_after_blocks; });
  variant("sm90_tf32_fp32_after", "sm90", tf32, fp32,
          [](Datapath& dp) { dp.c_entry = AccumulatorEntry::added_after_blocks; });
  variant("sm90_fp16_fp16_after", "sm90", fp16, fp16,
          [](Datapath& dp) { dp.c_entry = AccumulatorEntry::added_after_blocks; });
  variant("sm90_bf16_fp32_no_floor", "sm90", bf16, fp32,
          [](Datapath& dp) { dp.alignment_floor = kNoAlignmentFloor; });
  variant("sm90_tf32_fp32_saturate", "sm90", tf32, fp32,
          [](Datapath& dp) { dp.overflow = Overflow::saturate; });
  variant("sm80_fp16_fp16_rz_ieee_overflow", "sm80", fp16, fp16, [](Datapath& dp) {
    dp.block_rounding = Rounding::toward_zero;
    dp.overflow = Overflow::ieee;
  });
  variant("sm90_bf16_fp32_p14_rn", "sm90", bf16, fp32, [](Datapath& dp) {
    dp.block_result_precision = 14;
    dp.block_rounding = Rounding::nearest_even;
  });
  variant("sm90_fp16_fp16_p8", "sm90", fp16, fp16,
          [](Datapath& dp) { dp.block_result_precision = 8; });
  variant("exact_rz_bf16_fp32_zero_positive", "exact-rz", bf16, fp32,
          [](Datapath& dp) { dp.zero_sign = ZeroSign::positive; });
  variant("sm89_e5m2_fp16_kgroup1", "sm89", e5m2, fp16, [](Datapath& dp) { dp.k_group = 1; });
  return out;
}

// ---------------------------------------------------------------------------------------------
// The generator.

struct Case {
  std::vector<std::uint32_t> a;
  std::vector<std::uint32_t> b;
  std::uint32_t c = 0;
  const char* scenario = "";
};

class Generator {
 public:
  Generator(const Datapath& dp, std::uint64_t seed, std::uint64_t stream, std::uint64_t chunk)
      : dp_(dp), in_(dp.input), acc_(dp.accumulator) {
    std::seed_seq sequence{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                           static_cast<std::uint32_t>(stream),
                           static_cast<std::uint32_t>(stream >> 32),
                           static_cast<std::uint32_t>(chunk)};
    rng_.seed(sequence);
  }

  void next(Case& out) {
    const std::size_t k = pick_k();
    out.a.assign(k, 0);
    out.b.assign(k, 0);
    const Scenario& scenario = kScenarios[uniform(0, static_cast<int>(std::size(kScenarios)) - 1)];
    out.scenario = scenario.name;
    (this->*scenario.generate)(out);
  }

 private:
  // --- random numbers
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  std::uint32_t random_bits(int n) {
    return n <= 0 ? 0 : static_cast<std::uint32_t>(rng_() & ((std::uint64_t{1} << n) - 1));
  }

  std::size_t pick_k() {
    const int i = dp_.instruction_k;
    const int t = dp_.block_terms;
    const int g = dp_.k_group;
    const int choices[] = {0, 1, 2,     3,     g,     t - 1, t,         t + 1, i - 1,
                           i, i, i + 1, i + g, 2 * i, 2 * i, 2 * i + 1, 3 * i, uniform(0, 3 * i)};
    return static_cast<std::size_t>(
        std::max(0, choices[uniform(0, static_cast<int>(std::size(choices)) - 1)]));
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
    switch (uniform(0, 9)) {
      case 0:
        return 0;
      case 1:
        return all_fraction(f);
      case 2:
        return 1;
      case 3:
        return 1u << (f.fraction_bits - 1);
      default:
        return random_bits(f.fraction_bits);
    }
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
  void uniform_bits(Case& x) {
    for (std::size_t i = 0; i < x.a.size(); ++i) {
      x.a[i] = uniform_pattern(in_);
      x.b[i] = uniform_pattern(in_);
    }
    x.c = uniform_pattern(acc_);
  }

  // Exponents within +-spread of a random centre per operand, random signs; c near the products.
  void clustered(Case& x, int spread) {
    const int ea = any_exponent(in_);
    const int eb = any_exponent(in_);
    for (std::size_t i = 0; i < x.a.size(); ++i) {
      x.a[i] = finite(in_, chance(0.5), ea + uniform(-spread, spread));
      x.b[i] = finite(in_, chance(0.5), eb + uniform(-spread, spread));
    }
    x.c = chance(0.15) ? zero(acc_, chance(0.5))
                       : finite(acc_, chance(0.5), ea + eb + uniform(-spread - 30, spread + 2));
  }

  void wide_spread(Case& x) {
    for (std::size_t i = 0; i < x.a.size(); ++i) {
      x.a[i] = finite(in_, chance(0.5), any_exponent(in_));
      x.b[i] = finite(in_, chance(0.5), any_exponent(in_));
    }
    x.c = finite(acc_, chance(0.5), any_exponent(acc_));
  }

  // Products cancelling in pairs (a negated copy, sometimes with its last bit changed) and/or c
  // cancelling the exact sum of the products (rounded to the accumulator), or the largest one.
  void cancellation(Case& x) {
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
    MpfrNumber sum(Precision{2048});
    const std::size_t terms = mode == 3 ? std::min<std::size_t>(1, x.a.size()) : x.a.size();
    for (std::size_t i = 0; i < terms; ++i) {
      const auto a = reference::exact_value(in_, x.a[i]);
      const auto b = reference::exact_value(in_, x.b[i]);
      using Kind = reference::ExactValue::Kind;
      if (a.kind == Kind::nan || b.kind == Kind::nan) continue;  // E4M3 S.1111.110 flipped
      MpfrNumber product(Precision{64});
      product.mul(a.value, b.value, MPFR_RNDN);
      sum.add(sum, product, MPFR_RNDN);
    }
    sum.negate();
    x.c = reference::round_to_format(acc_, sum,
                                     chance(0.5) ? Rounding::nearest_even : Rounding::toward_zero,
                                     Overflow::saturate);
  }

  // Products and c close to the accumulator's largest finite value.
  void near_overflow(Case& x) {
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
  void tiny(Case& x) {
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

  void signed_zeros(Case& x) {
    clustered(x, 2);
    const double p = chance(0.3) ? 1.0 : 0.5;
    for (std::size_t i = 0; i < x.a.size(); ++i) {
      if (chance(p)) x.a[i] = zero(in_, chance(0.5));
      if (chance(0.3)) x.b[i] = zero(in_, chance(0.5));
    }
    if (chance(0.7)) x.c = zero(acc_, chance(0.5));
  }

  void specials(Case& x) {
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
  void below_floor(Case& x) {
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
  void mixed(Case& x) {
    for (std::size_t i = 0; i < x.a.size(); ++i) {
      x.a[i] = any(in_);
      x.b[i] = any(in_);
    }
    x.c = any(acc_);
  }

  struct Scenario {
    const char* name;
    void (Generator::*generate)(Case&);
  };
  void clustered_3(Case& x) { clustered(x, 3); }
  static constexpr Scenario kScenarios[] = {
      {"uniform-bits", &Generator::uniform_bits},   {"clustered", &Generator::clustered_3},
      {"wide-spread", &Generator::wide_spread},     {"cancellation", &Generator::cancellation},
      {"near-overflow", &Generator::near_overflow}, {"tiny", &Generator::tiny},
      {"signed-zeros", &Generator::signed_zeros},   {"specials", &Generator::specials},
      {"below-floor", &Generator::below_floor},     {"mixed", &Generator::mixed},
  };

  const Datapath& dp_;
  FloatFormat in_;
  FloatFormat acc_;
  std::mt19937_64 rng_;
};

// ---------------------------------------------------------------------------------------------
// The comparison.

std::string hex(std::uint32_t bits, const FloatFormat& f) {
  std::ostringstream out;
  out << "0x" << std::hex << std::setw(hex_digits(f)) << std::setfill('0') << bits;
  return out.str();
}

std::string hex_list(const std::vector<std::uint32_t>& bits, const FloatFormat& f) {
  std::string text = "{";
  for (std::size_t i = 0; i < bits.size(); ++i) text += (i ? ", " : "") + hex(bits[i], f);
  return text + "}";
}

std::string value_of(std::uint32_t bits, const FloatFormat& f) {
  return hex(bits, f) + " = " + reference::exact_value(f, bits).value.to_string();
}

// What the results of a run were, to show that the generator reaches every kind of result.
enum ResultClass { kNan, kInfinity, kPositiveZero, kNegativeZero, kSubnormal, kMaxFinite, kNormal };
constexpr const char* kResultClassNames[] = {"nan",       "inf", "+0",    "-0",
                                             "subnormal", "max", "normal"};
constexpr std::size_t kResultClasses = std::size(kResultClassNames);

ResultClass classify(std::uint32_t bits, const FloatFormat& f) {
  const std::uint32_t stored = bits >> f.padding_bits;
  const std::uint32_t fraction = stored & ((1u << f.fraction_bits) - 1);
  const std::uint32_t field = (stored >> f.fraction_bits) & ((1u << f.exponent_bits) - 1);
  const std::uint32_t all_ones = (1u << f.exponent_bits) - 1;
  if (field == all_ones) return fraction == 0 ? kInfinity : kNan;  // IEEE accumulators
  if (field == 0) {
    if (fraction != 0) return kSubnormal;
    return (stored & f.sign_mask()) != 0 ? kNegativeZero : kPositiveZero;
  }
  return field == all_ones - 1 && fraction == (1u << f.fraction_bits) - 1 ? kMaxFinite : kNormal;
}

struct Mismatch {
  std::size_t index;
  std::string message;
};

std::uint64_t name_hash(std::string_view name) {  // FNV-1a: stable across platforms
  std::uint64_t h = 0xCBF29CE484222325;
  for (const char ch : name) h = (h ^ static_cast<unsigned char>(ch)) * 0x100000001B3;
  return h;
}

// One datapath's cross-check, registered at start-up by name (plain names, no "# GetParam()"
// comments for CTest's test discovery to carry along).
class CrossCheck : public ::testing::Test {
 public:
  explicit CrossCheck(Combination combination) : combination_(std::move(combination)) {}
  void TestBody() override;

 private:
  Combination combination_;
};

void CrossCheck::TestBody() {
  const Combination& combination = combination_;
  const Datapath& dp = combination.datapath;
  const std::size_t cases = environment_number("TCEMU_CROSS_CHECK_CASES", TCEMU_CROSS_CHECK_CASES);
  const std::uint64_t seed = environment_number("TCEMU_SEED", kDefaultSeed);
  const std::size_t threads = std::max<std::size_t>(
      1, environment_number("TCEMU_TEST_THREADS", std::thread::hardware_concurrency()));
  std::cout << "[ cross-check ] " << combination.name << ": " << cases << " cases, seed 0x"
            << std::hex << seed << std::dec << " (TCEMU_SEED), " << threads << " threads\n"
            << "[ datapath    ] " << describe(dp) << std::endl;
  RecordProperty("seed", std::to_string(seed));

  const std::size_t chunks = (cases + kChunk - 1) / kChunk;
  std::atomic<std::size_t> next_chunk{0};
  std::atomic<std::size_t> found{0};
  std::mutex mutex;
  std::vector<Mismatch> mismatches;
  std::array<std::atomic<std::size_t>, kResultClasses> histogram{};
  const auto work = [&] {
    std::array<std::size_t, kResultClasses> counts{};
    Case x;
    for (std::size_t chunk = next_chunk++; chunk < chunks && found < kMaxReported;
         chunk = next_chunk++) {
      Generator generator(dp, seed, name_hash(combination.name), chunk);
      const std::size_t end = std::min(cases, (chunk + 1) * kChunk);
      for (std::size_t index = chunk * kChunk; index < end && found < kMaxReported; ++index) {
        generator.next(x);
        std::string problem;
        std::uint32_t emulated = 0;
        std::uint32_t expected = 0;
        try {
          emulated = mma_element(dp, x.a, x.b, x.c);
          expected = reference::oracle_mma_element(dp, x.a, x.b, x.c);
          if (emulated != expected) {
            problem = "emulator " + value_of(emulated, dp.accumulator) + "\n  oracle   " +
                      value_of(expected, dp.accumulator);
          }
        } catch (const std::exception& e) {
          problem = std::string("exception: ") + e.what();
        }
        ++counts[classify(expected, dp.accumulator)];
        if (problem.empty()) continue;
        std::ostringstream message;
        message << "mismatch in " << combination.name << ", case " << index << " (seed 0x"
                << std::hex << seed << std::dec << ", scenario " << x.scenario << ")\n"
                << "  datapath " << describe(dp) << "\n  K = " << x.a.size()
                << "\n  a = " << hex_list(x.a, dp.input) << "\n  b = " << hex_list(x.b, dp.input)
                << "\n  c = " << hex(x.c, dp.accumulator) << "\n  " << problem;
        ++found;
        const std::lock_guard lock(mutex);
        mismatches.push_back({index, message.str()});
      }
    }
    for (std::size_t i = 0; i < kResultClasses; ++i) histogram[i] += counts[i];
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();

  std::cout << "[ results     ]";
  for (std::size_t i = 0; i < kResultClasses; ++i) {
    std::cout << ' ' << kResultClassNames[i] << ' ' << histogram[i].load();
  }
  std::cout << std::endl;

  std::sort(mismatches.begin(), mismatches.end(),
            [](const Mismatch& x, const Mismatch& y) { return x.index < y.index; });
  for (std::size_t i = 0; i < std::min(kMaxReported, mismatches.size()); ++i) {
    ADD_FAILURE() << mismatches[i].message;
  }
  if (!mismatches.empty()) std::cout << "[ cross-check ] stopped after the first mismatches\n";
}

const bool kRegistered = [] {
  for (Combination& combination : combinations()) {
    const std::string name = combination.name;
    ::testing::RegisterTest(TCEMU_CROSS_CHECK_SUITE, name.c_str(), nullptr, nullptr, __FILE__,
                            __LINE__, [combination = std::move(combination)]() -> ::testing::Test* {
                              return new CrossCheck(combination);
                            });
  }
  return true;
}();

}  // namespace
}  // namespace tcemu
