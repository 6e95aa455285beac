// The MMA-Sim 2.1.1 evidence sets and their case generator (mmasim_evidence.hpp).
#include <algorithm>
#include <array>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/cases/mmasim_evidence.hpp>
#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/fp64_bits.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/parallel_for.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/emulator/round.hpp>

#include "fraction_pattern.hpp"

namespace tcemu {
namespace {

// --- the random stream

// splitmix64's output function (Steele, Lea and Flood 2014): a bijection of 64-bit words whose
// every output bit depends on every input bit.
constexpr std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// splitmix64: the state advances by the golden-ratio increment, each output is mix(state).
class SplitMix {
 public:
  explicit SplitMix(std::uint64_t state) : state_(state) {}
  std::uint64_t next() { return mix(state_ += 0x9E3779B97F4A7C15ULL); }
  // An integer in [lo, hi]: the remainder of a 64-bit draw (a bias below 2^-50 for the ranges
  // used here, and the same on every platform).
  int uniform(int lo, int hi) {
    return lo + static_cast<int>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  // True with probability p: the top 53 bits of a draw as a binary64 in [0, 1), exact.
  bool chance(double p) { return static_cast<double>(next() >> 11) * 0x1p-53 < p; }
  std::uint32_t bits(int n) {
    return n <= 0 ? 0 : static_cast<std::uint32_t>(next() & ((std::uint64_t{1} << n) - 1));
  }

 private:
  std::uint64_t state_;
};

// FNV-1a of a name: the stream of a set.
std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t h = 0xCBF29CE484222325ULL;
  for (const char ch : text) h = (h ^ static_cast<unsigned char>(ch)) * 0x100000001B3ULL;
  return h;
}

bool is_ue8m0(const FloatFormat& f) {
  return f.special == SpecialEncoding::e8m0;
}

// --- one case

class Drawer {
 public:
  Drawer(const Datapath& dp, std::uint64_t state)
      : r_(state),
        fa_(dp.input),
        fb_(dp.b_format()),
        acc_(dp.accumulator),
        sa_(dp.block_scaling.scale_a),
        sb_(dp.block_scaling.scale_b),
        k_(static_cast<std::size_t>(dp.instruction_k)),
        scaled_(dp.block_scaled()),
        block_(scaled_ ? static_cast<std::size_t>(dp.block_scaling.scale_block) : k_),
        group_(static_cast<std::size_t>(dp.block_scaling.group_terms)),
        floor_(dp.alignment_floor) {}

  MmaCase draw(std::string_view scenario) {
    x_.a.assign(k_, 0);
    x_.b.assign(k_, 0);
    x_.c = 0;
    const std::size_t scales = scaled_ ? k_ / block_ : 0;
    x_.scale_a.assign(scales, 0);
    x_.scale_b.assign(scales, 0);
    if (scenario == "random") {
      random();
    } else if (scenario == "wide-exponent") {
      wide_exponent();
    } else if (scenario == "cancelling") {
      cancelling();
    } else if (scenario == "extreme-scale") {
      extreme_scale();
    } else {
      special_values();
    }
    return x_;
  }

 private:
  // --- encodings (value bits in the low bits, as decode() reads them)
  static int lowest_exponent(const FloatFormat& f) { return f.min_exponent() - f.fraction_bits; }
  static std::uint32_t all_fraction(const FloatFormat& f) { return (1u << f.fraction_bits) - 1; }
  static std::uint32_t pack(const FloatFormat& f, bool negative, std::uint32_t field,
                            std::uint32_t fraction) {
    return (negative ? f.sign_mask() : 0) | (field << f.fraction_bits) | fraction;
  }

  std::uint32_t fraction(const FloatFormat& f) {
    return detail::fraction_pattern(f, r_.uniform(0, 9), [&](int n) { return r_.bits(n); });
  }

  // A finite nonzero value of an element, accumulator or ue4m3 format with its leading bit at
  // `exponent`, clamped to the format's range (below min_exponent(): a subnormal).
  std::uint32_t finite(const FloatFormat& f, bool negative, int exponent) {
    exponent = std::clamp(exponent, lowest_exponent(f), f.max_exponent());
    if (exponent >= f.min_exponent()) {
      const auto field = static_cast<std::uint32_t>(exponent + f.bias());
      std::uint32_t frac = fraction(f);
      if (f.special == SpecialEncoding::fn_e4m3 && field == (1u << f.exponent_bits) - 1 &&
          frac == all_fraction(f)) {
        --frac;  // S.1111.111 is E4M3's NaN
      }
      return pack(f, negative, field, frac);
    }
    const int top = f.fraction_bits - (f.min_exponent() - exponent);  // the leading fraction bit
    return pack(f, negative, 0, (1u << top) | r_.bits(top));
  }
  std::uint32_t zero(const FloatFormat& f) { return pack(f, r_.chance(0.5), 0, 0); }
  std::uint32_t max_finite(const FloatFormat& f) { return encode_max_finite(f, r_.chance(0.5)); }
  int any_exponent(const FloatFormat& f) {
    return r_.uniform(lowest_exponent(f), f.max_exponent());
  }
  // Any zero or finite bit pattern, uniformly.
  std::uint32_t any_finite(const FloatFormat& f) {
    for (;;) {
      const std::uint32_t bits = r_.bits(f.storage_bits());
      const ValueClass v = decode(f, bits).value_class;
      if (v == ValueClass::zero || v == ValueClass::finite) return bits;
    }
  }
  // Inf, NaN or a signed zero (FP6 and FP4, which have neither Inf nor NaN: their largest value or
  // a zero); NaNs of any payload and sign.
  std::uint32_t special(const FloatFormat& f) {
    const int which = r_.uniform(0, 3);
    if (which == 3 || f.special == SpecialEncoding::finite) {
      return which < 2 ? max_finite(f) : zero(f);
    }
    const std::uint32_t all_ones = (1u << f.exponent_bits) - 1;
    if (which == 2 || f.special == SpecialEncoding::fn_e4m3) {  // NaN (E4M3's only one)
      const std::uint32_t frac = f.special == SpecialEncoding::fn_e4m3
                                     ? all_fraction(f)
                                     : std::max<std::uint32_t>(1, r_.bits(f.fraction_bits));
      return pack(f, r_.chance(0.5), all_ones, frac);
    }
    return pack(f, which == 1, all_ones, 0);  // +Inf, -Inf
  }

  // --- scales: ue8m0 is a field 0..254 (2^(field - 127)), 255 its NaN; ue4m3 an unsigned e4m3.
  std::uint32_t scale_at(const FloatFormat& s, int exponent) {
    if (is_ue8m0(s)) return static_cast<std::uint32_t>(std::clamp(exponent + 127, 0, 254));
    return finite(s, false, exponent);
  }
  std::uint32_t scale_near_one(const FloatFormat& s, int spread) {
    return scale_at(s, r_.uniform(-spread, spread));
  }
  // Any finite scale, uniformly over the codes (ue4m3: zero and subnormals included).
  std::uint32_t scale_any(const FloatFormat& s) {
    return static_cast<std::uint32_t>(is_ue8m0(s) ? r_.uniform(0, 254) : r_.uniform(0, 0x7E));
  }
  // The ends of the scale's range: 0x00 (ue8m0 2^-127, ue4m3 zero), the NaN (0xFF; ue4m3 0x7F or
  // 0xFF, whose bit 7 the hardware ignores), the largest, ue4m3 subnormals, bit 7 set.
  std::uint32_t scale_extreme(const FloatFormat& s) {
    const int which = r_.uniform(0, 9);
    if (which == 4) {
      if (!r_.chance(0.35)) return 0;
      return is_ue8m0(s) || r_.chance(0.5) ? 0xFFu : 0x7Fu;
    }
    if (is_ue8m0(s)) {
      switch (which) {
        case 0:
          return 0;
        case 1:
          return 0xFE;
        case 2:
          return static_cast<std::uint32_t>(r_.uniform(1, 8));
        case 3:
          return static_cast<std::uint32_t>(r_.uniform(0xF0, 0xFD));
        default:
          return scale_near_one(s, 10);
      }
    }
    switch (which) {
      case 0:
        return 0;
      case 1:
        return static_cast<std::uint32_t>(r_.uniform(1, 7));  // subnormal
      case 2:
        return 0x7E;  // 448
      case 3:
        return static_cast<std::uint32_t>(r_.uniform(8, 15));  // the smallest normals
      case 5:
        return r_.chance(0.5) ? 0x80 : 0x80 | scale_near_one(s, 3);  // bit 7 set: ignored
      default:
        return scale_near_one(s, 4);
    }
  }

  // --- values, in binary64: a scaled product lies within 2^(+-300), where binary64 holds it
  // exactly (at most 4 + 4 + 4 + 4 significant bits); the sum is rounded, in k order, which
  // only chooses inputs.
  double term(std::size_t i) const {
    double p = to_double(fa_, x_.a[i]) * to_double(fb_, x_.b[i]);
    if (scaled_) {
      p *= to_double(sa_, x_.scale_a[i / block_]) * to_double(sb_, x_.scale_b[i / block_]);
    }
    return p;
  }
  double scaled_sum(std::size_t begin, std::size_t end) const {
    double sum = 0;
    for (std::size_t i = begin; i < end; ++i) sum += term(i);
    return sum;
  }
  // The accumulator's bits of x rounded to nearest even (Inf beyond its range); nothing for NaN.
  std::optional<std::uint32_t> to_accumulator(double x) const {
    const std::uint64_t b = fp64::bits(x);
    if (fp64::is_nan(b)) return std::nullopt;
    const bool negative = (b & fp64::kSignBit) != 0;
    if (fp64::is_infinite(b)) return encode_infinity(acc_, negative);
    const auto field = static_cast<int>((b & fp64::kExponentMask) >> 52);
    const std::uint64_t fraction = b & fp64::kFractionMask;
    if (field == 0 && fraction == 0) return encode_zero(acc_, negative);
    const std::uint64_t significand = field == 0 ? fraction : fraction | (std::uint64_t{1} << 52);
    return round_pack(acc_, negative, {significand, std::max(field, 1) - 1075, false},
                      Rounding::nearest_even, Overflow::ieee);
  }
  // c with its leading bit `lo` to `hi` binades from that of the products' sum (a random c when
  // the sum is zero, Inf or NaN).
  std::uint32_t c_near(int lo, int hi) {
    const std::uint64_t b = fp64::bits(scaled_sum(0, k_));
    const auto field = static_cast<int>((b & fp64::kExponentMask) >> 52);
    if (!fp64::is_finite(b) || field == 0) {
      return finite(acc_, r_.chance(0.5), r_.uniform(-20, 10));
    }
    return finite(acc_, r_.chance(0.5), field - 1023 + r_.uniform(lo, hi));
  }
  // c = -value rounded to the accumulator (the c that cancels it), or a random c where the value
  // is NaN.
  std::uint32_t cancelling_c(double value) {
    const std::optional<std::uint32_t> c = to_accumulator(-value);
    return c ? *c : c_near(-10, 0);
  }

  void scales_near_one(int spread) {
    for (std::uint32_t& s : x_.scale_a) s = scale_near_one(sa_, spread);
    for (std::uint32_t& s : x_.scale_b) s = scale_near_one(sb_, spread);
  }

  // --- scenarios

  // Uniform finite elements, scales near 1, c near the products (or zero).
  void random() {
    for (std::size_t i = 0; i < k_; ++i) {
      x_.a[i] = any_finite(fa_);
      x_.b[i] = any_finite(fb_);
    }
    scales_near_one(6);
    x_.c = r_.chance(0.2) ? zero(acc_) : c_near(-12, 3);
  }

  // Elements at any exponent; scales spread over the whole range of their format, each on its
  // own or around one centre anywhere in the range; c anywhere in the accumulator's range or near
  // the products.
  void wide_exponent() {
    for (std::size_t i = 0; i < k_; ++i) {
      x_.a[i] = finite(fa_, r_.chance(0.5), any_exponent(fa_));
      x_.b[i] = finite(fb_, r_.chance(0.5), any_exponent(fb_));
    }
    const bool centred = r_.chance(0.5);
    const auto spread = [&](const FloatFormat& s, std::vector<std::uint32_t>& scales) {
      if (scales.empty()) return;  // unscaled: s is no format
      const int centre = is_ue8m0(s) ? r_.uniform(-127, 127) : any_exponent(s);
      for (std::uint32_t& v : scales) {
        v = centred ? scale_at(s, centre + r_.uniform(-3, 3)) : scale_any(s);
      }
    };
    spread(sa_, x_.scale_a);
    spread(sb_, x_.scale_b);
    x_.c = r_.chance(0.1)   ? zero(acc_)
           : r_.chance(0.5) ? finite(acc_, r_.chance(0.5), any_exponent(acc_))
                            : c_near(-30, 5);
  }

  // Clustered elements whose products cancel: in pairs (a negated copy), a second half that is
  // the negated first half with the same scales (so that whole groups and scale blocks cancel),
  // or c cancelling the sum of the products or its largest term; then, half of the time, one
  // element's last bit flipped.
  void cancelling() {
    const int spread = r_.uniform(0, 2);
    const int ea = r_.uniform(lowest_exponent(fa_) + 2, fa_.max_exponent());
    const int eb = r_.uniform(lowest_exponent(fb_) + 2, fb_.max_exponent());
    for (std::size_t i = 0; i < k_; ++i) {
      x_.a[i] = finite(fa_, r_.chance(0.5), ea + r_.uniform(-spread, spread));
      x_.b[i] = finite(fb_, r_.chance(0.5), eb + r_.uniform(-spread, spread));
    }
    if (r_.chance(0.7)) {
      scales_near_one(4);
    } else {
      for (std::uint32_t& s : x_.scale_a) s = scale_any(sa_);
      for (std::uint32_t& s : x_.scale_b) s = scale_any(sb_);
    }
    const int mode = r_.uniform(0, 4);
    if (mode == 0 || mode == 2) {
      for (std::size_t i = 1; i < k_; i += 2) {
        x_.a[i] = x_.a[i - 1] ^ fa_.sign_mask();
        x_.b[i] = x_.b[i - 1];
      }
    } else if (mode == 1) {
      const std::size_t half = k_ / 2;
      for (std::size_t i = half; i < k_; ++i) {
        x_.a[i] = x_.a[i - half] ^ fa_.sign_mask();
        x_.b[i] = x_.b[i - half];
      }
      const std::size_t scales = x_.scale_a.size();
      for (std::size_t j = scales / 2; j < scales && scales >= 2; ++j) {
        x_.scale_a[j] = x_.scale_a[j - scales / 2];
        x_.scale_b[j] = x_.scale_b[j - scales / 2];
      }
    }
    if (r_.chance(0.5)) {
      const auto i = static_cast<std::size_t>(r_.uniform(0, static_cast<int>(k_) - 1));
      x_.a[i] ^= 1;  // the last fraction bit (or, in a zero, the smallest subnormal)
    }
    if (mode <= 1) {
      x_.c = r_.chance(0.5) ? zero(acc_) : c_near(-30, 0);
    } else if (mode == 4) {
      // The largest term, or (with groups) the sum of a group.
      const std::size_t width = group_ > 1 ? group_ : 1;
      std::size_t best = 0;
      double largest = -1;
      for (std::size_t i = 0; i < k_; i += width) {
        const double v = scaled_sum(i, i + width);
        if (v == v && (v < 0 ? -v : v) > largest) {
          largest = v < 0 ? -v : v;
          best = i;
        }
      }
      x_.c = cancelling_c(scaled_sum(best, best + width));
    } else {
      x_.c = cancelling_c(scaled_sum(0, k_));
    }
  }

  // The ends of the scales' ranges (scale_extreme), all-zero scale blocks and groups, the
  // smallest and largest elements, a special element now and then, c special, largest, tiny or
  // near the products; or (one case in four) products of signed zeros, or products below the
  // alignment floor.
  void extreme_scale() {
    const int mode = r_.uniform(0, 19);
    if (mode < 2) return signed_zero_products();
    if (mode < 5) return below_floor();
    for (std::size_t j = 0; j < x_.scale_a.size(); ++j) {
      x_.scale_a[j] = scale_extreme(sa_);
      x_.scale_b[j] = scale_extreme(sb_);
      const int kind = r_.uniform(0, 9);
      for (std::size_t i = j * block_; i < (j + 1) * block_; ++i) {
        switch (kind) {
          case 0:  // an all-zero block: zero a (signed) or zero b
            x_.a[i] = zero(fa_);
            x_.b[i] = r_.chance(0.5) ? zero(fb_) : any_finite(fb_);
            break;
          case 1:  // the smallest elements
            x_.a[i] = finite(fa_, r_.chance(0.5), lowest_exponent(fa_) + r_.uniform(0, 1));
            x_.b[i] = finite(fb_, r_.chance(0.5), lowest_exponent(fb_) + r_.uniform(0, 1));
            break;
          case 2:  // the largest elements
            x_.a[i] = finite(fa_, r_.chance(0.5), fa_.max_exponent() - r_.uniform(0, 1));
            x_.b[i] = finite(fb_, r_.chance(0.5), fb_.max_exponent() - r_.uniform(0, 1));
            break;
          default:
            x_.a[i] = any_finite(fa_);
            x_.b[i] = any_finite(fb_);
        }
      }
    }
    if (group_ > 1) {
      for (std::size_t g = 0; g < k_; g += group_) {
        if (!r_.chance(0.1)) continue;
        for (std::size_t i = g; i < g + group_; ++i) x_.a[i] = zero(fa_);  // an all-zero group
      }
    }
    if (r_.chance(0.1)) {
      const auto i = static_cast<std::size_t>(r_.uniform(0, static_cast<int>(k_) - 1));
      x_.a[i] = special(fa_);
    }
    extreme_c();
  }

  // Every product a zero (all of them -0 most of the time) and c a zero, mostly -0: the sign of a
  // zero result.
  void signed_zero_products() {
    const bool all_negative = r_.chance(0.7);
    for (std::size_t i = 0; i < k_; ++i) {
      x_.b[i] = r_.chance(0.3) ? zero(fb_) : finite(fb_, r_.chance(0.5), any_exponent(fb_));
      const bool b_negative = (x_.b[i] & fb_.sign_mask()) != 0;
      x_.a[i] = pack(fa_, all_negative ? !b_negative : r_.chance(0.5), 0, 0);
    }
    scales_near_one(20);
    x_.c = pack(acc_, r_.chance(0.8), 0, 0);
  }

  // Scaled products whose leading bits lie 2 to 30 binades below the alignment floor (MMA-Sim's
  // e_zero), with a zero or tiny c: the floor sets the grid (as far as the scale formats reach).
  void below_floor() {
    const int ea = r_.uniform(fa_.min_exponent(), fa_.max_exponent());
    const int eb = r_.uniform(fb_.min_exponent(), fb_.max_exponent());
    for (std::size_t i = 0; i < k_; ++i) {
      x_.a[i] = finite(fa_, r_.chance(0.5), ea + r_.uniform(-1, 1));
      x_.b[i] = finite(fb_, r_.chance(0.5), eb + r_.uniform(-1, 1));
    }
    const int scales = floor_ - r_.uniform(2, 30) - ea - eb;  // both scales' exponents together
    for (std::size_t j = 0; j < x_.scale_a.size(); ++j) {
      const int half = scales / 2 + r_.uniform(-2, 2);
      x_.scale_a[j] = scale_at(sa_, half);
      x_.scale_b[j] = scale_at(sb_, scales - half + r_.uniform(-2, 2));
    }
    x_.c = r_.chance(0.7) ? zero(acc_)
                          : finite(acc_, r_.chance(0.5), lowest_exponent(acc_) + r_.uniform(0, 10));
  }

  void extreme_c() {
    const int which = r_.uniform(0, 19);
    if (which < 5) {
      x_.c = special(acc_);
    } else if (which < 7) {
      x_.c = max_finite(acc_);
    } else if (which < 9) {
      x_.c = finite(acc_, r_.chance(0.5), lowest_exponent(acc_) + r_.uniform(0, 24));
    } else {
      x_.c = c_near(-20, 3);
    }
  }

  // Unscaled kind::f8f6f4: zeros, subnormals, the largest and the smallest normal elements and
  // the formats' specials mixed, every product near the accumulator's largest value, or products
  // of signed zeros; c special, largest, tiny or near the products.
  void special_values() {
    if (r_.chance(0.1)) return signed_zero_products();
    if (r_.chance(0.2)) {
      const int top = acc_.max_exponent() - r_.uniform(-2, 3);
      const bool negative = r_.chance(0.5);
      for (std::size_t i = 0; i < k_; ++i) {
        const int e = std::clamp(top - fb_.max_exponent() + r_.uniform(-1, 1), lowest_exponent(fa_),
                                 fa_.max_exponent());
        x_.a[i] = finite(fa_, negative != r_.chance(0.2), e);
        x_.b[i] = finite(fb_, false, top - e);
      }
    } else {
      const double p_special = 1.5 / static_cast<double>(k_);
      const auto element = [&](const FloatFormat& f) {
        if (r_.chance(p_special)) return special(f);
        switch (r_.uniform(0, 6)) {
          case 0:
            return zero(f);
          case 1:
            return finite(f, r_.chance(0.5), lowest_exponent(f) + r_.uniform(0, f.fraction_bits));
          case 2:
            return max_finite(f);
          case 3:
            return finite(f, r_.chance(0.5), f.min_exponent());
          default:
            return any_finite(f);
        }
      };
      for (std::size_t i = 0; i < k_; ++i) {
        x_.a[i] = element(fa_);
        x_.b[i] = element(fb_);
      }
    }
    extreme_c();
  }

  SplitMix r_;
  FloatFormat fa_, fb_, acc_, sa_, sb_;
  std::size_t k_;
  bool scaled_;
  std::size_t block_;  // k per scale (k_ where unscaled)
  std::size_t group_;  // MMA-Sim's G
  int floor_;          // MMA-Sim's e_zero
  MmaCase x_;
};

constexpr std::array<std::string_view, 4> kScaledScenarios = {"random", "wide-exponent",
                                                              "cancelling", "extreme-scale"};
constexpr std::array<std::string_view, 4> kUnscaledScenarios = {"random", "wide-exponent",
                                                                "cancelling", "special"};

// --- the sets

bool is_fp8(const FloatFormat& f) {
  return f == formats::e5m2 || f == formats::e4m3;
}
bool is_f8f6f4_format(const FloatFormat& f) {
  return is_fp8(f) || f == formats::e3m2 || f == formats::e2m3 || f == formats::e2m1;
}

// The kind qualifiers of a block-scaled instruction name after its prefix
// ("mxf4nvf4.block16.ue4m3"): kind, "blockN" and the scale type (ue8m0 where the name has none).
struct Kind {
  std::string kind, block, scale;
};
Kind parse_kind(std::string_view qualifiers) {
  Kind k;
  std::vector<std::string> parts;
  std::istringstream in{std::string(qualifiers)};
  for (std::string part; std::getline(in, part, '.');) parts.push_back(part);
  if (parts.size() < 2 || parts.size() > 3) {
    throw std::logic_error("mmasim_evidence: unexpected block-scaled instruction qualifiers " +
                           std::string(qualifiers));
  }
  k.kind = parts[0];
  k.block = parts[1];
  k.scale = parts.size() == 3 ? parts[2] : "ue8m0";
  return k;
}

// The MMA-Sim instructions that model a preset row; none where the row is not part of the
// evidence (not an sm100 tcgen05 or sm120 m16n8k32/k64 row of the kind::f8f6f4 formats).
std::vector<MmaSimInstruction> mmasim_instructions(const PresetEntry& row, Kind& kind) {
  const Datapath& dp = row.datapath;
  if (!is_f8f6f4_format(dp.input) || !is_f8f6f4_format(dp.b_format())) return {};
  const std::string a(dp.input.name);
  const std::string b(dp.b_format().name);
  const std::string d = dp.accumulator == formats::fp32 ? "f32" : "f16";
  const std::string k = std::to_string(dp.instruction_k);
  const std::string_view instruction = row.instruction;
  if (row.arch == "sm100" && instruction == "tcgen05") {
    return {{"TCGen05MMA", "Blackwell", "m128n8k" + k + ".kind::f8f6f4." + d + "." + a + "." + b}};
  }
  if (row.arch == "sm100" && instruction.starts_with("tcgen05.")) {
    kind = parse_kind(instruction.substr(8));
    return {{"TCGen05MMABlockScale", "Blackwell",
             "m128n8k" + k + ".kind::" + kind.kind + "." + kind.block + "." + d + "." + a + "." +
                 b + "." + kind.scale}};
  }
  if (row.arch != "sm120") return {};
  if (instruction == "mma.sync.m16n8k32") {
    std::vector<MmaSimInstruction> out{
        {"MMA", "RTX Blackwell", "m16n8k32.kind::f8f6f4." + d + "." + a + "." + b + "." + d}};
    // The fp8 pairs have sm_89's spelling too, without the kind.
    if (is_fp8(dp.input) && is_fp8(dp.b_format())) {
      out.push_back({"MMA", "RTX Blackwell", "m16n8k32." + d + "." + a + "." + b + "." + d});
    }
    return out;
  }
  for (const std::string_view shape : {"mma.sync.m16n8k32.", "mma.sync.m16n8k64."}) {
    if (!instruction.starts_with(shape)) continue;
    kind = parse_kind(instruction.substr(shape.size()));
    return {{"MMABlockScale", "RTX Blackwell",
             std::string(shape.substr(9, shape.size() - 10)) + ".kind::" + kind.kind + "." +
                 kind.block + "." + d + "." + a + "." + b + "." + d + "." + kind.scale}};
  }
  return {};
}

std::string set_name(const Datapath& dp, const Kind& kind) {
  const std::string a(dp.input.name);
  const std::string b(dp.b_format().name);
  if (!dp.block_scaled()) return "f8f6f4-" + a + "-" + b + "-" + std::string(dp.accumulator.name);
  std::string name = kind.kind + "-" + kind.block + "-" + kind.scale;
  if (dp.block_scaling.group_terms == 1) name += "-" + a + "-" + b;
  return name;
}

}  // namespace

std::vector<EvidenceSet> mmasim_evidence_sets() {
  std::vector<EvidenceSet> sets;
  for (const PresetEntry& row : all_presets()) {
    Kind kind;
    std::vector<MmaSimInstruction> instructions = mmasim_instructions(row, kind);
    if (instructions.empty()) continue;
    auto set = std::find_if(sets.begin(), sets.end(),
                            [&](const EvidenceSet& s) { return s.datapath == row.datapath; });
    if (set == sets.end()) {
      EvidenceSet fresh{set_name(row.datapath, kind), row.datapath, {}, {}, 0};
      fresh.stream = fnv1a(fresh.name);
      sets.push_back(std::move(fresh));
      set = std::prev(sets.end());
    }
    set->rows.push_back(std::string(row.arch) + " " + std::string(row.instruction));
    for (MmaSimInstruction& i : instructions) set->mmasim.push_back(std::move(i));
  }
  return sets;
}

std::vector<std::string_view> evidence_scenarios(const Datapath& datapath) {
  const auto& list = datapath.block_scaled() ? kScaledScenarios : kUnscaledScenarios;
  return {list.begin(), list.end()};
}

std::string_view evidence_scenario(const Datapath& datapath, std::uint64_t index) {
  const auto& list = datapath.block_scaled() ? kScaledScenarios : kUnscaledScenarios;
  return list[index % list.size()];
}

MmaCase evidence_case(const Datapath& datapath, std::uint64_t seed, std::uint64_t stream,
                      std::uint64_t index) {
  Drawer drawer(datapath, mix(mix(mix(seed) ^ stream) ^ index));
  return drawer.draw(evidence_scenario(datapath, index));
}

std::string describe_case(const Datapath& dp, const MmaCase& x) {
  std::ostringstream out;
  const auto list = [&](const char* name, const FloatFormat& f,
                        const std::vector<std::uint32_t>& v) {
    out << ' ' << name << '=';
    for (std::size_t i = 0; i < v.size(); ++i) out << (i ? "," : "") << to_hex(f, v[i]);
  };
  out << "K=" << x.a.size();
  list("a", dp.input, x.a);
  list("b", dp.b_format(), x.b);
  out << " c=" << to_hex(dp.accumulator, x.c);
  if (dp.block_scaled()) {
    list("scale_a", dp.block_scaling.scale_a, x.scale_a);
    list("scale_b", dp.block_scaling.scale_b, x.scale_b);
  }
  return out.str();
}

int result_bytes(const Datapath& dp) {
  return dp.accumulator.container_bits() / 8;
}

EvidenceCheck check_evidence(const EvidenceSet& set, std::uint64_t seed,
                             const std::vector<std::uint32_t>& results, std::size_t keep,
                             int threads) {
  EvidenceCheck check;
  check.cases = results.size();
  std::mutex mutex;
  detail::parallel_for(
      threads, static_cast<std::int64_t>(results.size()), 4096,
      [&](std::int64_t begin, std::int64_t end) {
        std::vector<EvidenceMismatch> found;
        for (auto i = static_cast<std::uint64_t>(begin); i < static_cast<std::uint64_t>(end); ++i) {
          const std::uint32_t d =
              mma_case_element(set.datapath, evidence_case(set.datapath, seed, set.stream, i));
          if (d != results[i]) found.push_back({i, results[i], d});
        }
        const std::lock_guard lock(mutex);
        check.mismatches += found.size();
        check.first.insert(check.first.end(), found.begin(), found.end());
      });
  std::sort(check.first.begin(), check.first.end(),
            [](const EvidenceMismatch& x, const EvidenceMismatch& y) { return x.index < y.index; });
  if (check.first.size() > keep) check.first.resize(keep);
  return check;
}

std::vector<std::uint32_t> read_evidence_results(const std::string& path, const Datapath& dp) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open the results file");
  const std::vector<unsigned char> bytes{std::istreambuf_iterator<char>(in),
                                         std::istreambuf_iterator<char>()};
  if (in.bad()) throw std::runtime_error(path + ": read error");
  const auto width = static_cast<std::size_t>(result_bytes(dp));
  if (bytes.size() % width != 0) {
    throw std::runtime_error(path + ": " + std::to_string(bytes.size()) +
                             " bytes is not a whole number of " + std::to_string(width) +
                             "-byte results");
  }
  std::vector<std::uint32_t> out(bytes.size() / width);
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint32_t v = 0;
    for (std::size_t byte = width; byte-- > 0;) v = (v << 8) | bytes[i * width + byte];
    out[i] = v;
  }
  return out;
}

namespace {

// FNV-1a over 32-bit little-endian words.
void digest_words(std::uint64_t& h, const std::vector<std::uint32_t>& words) {
  for (const std::uint32_t w : words) {
    for (int byte = 0; byte < 4; ++byte) h = (h ^ ((w >> (8 * byte)) & 0xFF)) * 0x100000001B3ULL;
  }
}
void digest_case(std::uint64_t& h, const MmaCase& x) {
  digest_words(h, x.a);
  digest_words(h, x.b);
  digest_words(h, {x.c});
  digest_words(h, x.scale_a);
  digest_words(h, x.scale_b);
}
constexpr std::uint64_t kDigestStart = 0xCBF29CE484222325ULL;

std::string hex64(std::uint64_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (std::size_t i = 16; i-- > 0; v >>= 4) out[i] = kDigits[v & 0xF];
  return out;
}

class BinaryFile {
 public:
  explicit BinaryFile(std::string path) : path_(std::move(path)), out_(path_, std::ios::binary) {
    if (!out_) throw std::runtime_error(path_ + ": cannot open for writing");
  }
  // The low `width` bytes of each value, little-endian.
  void put(const std::vector<std::uint32_t>& values, int width) {
    for (const std::uint32_t v : values) {
      for (int byte = 0; byte < width; ++byte)
        out_.put(static_cast<char>((v >> (8 * byte)) & 0xFF));
    }
  }
  void close() {
    out_.close();
    if (!out_) throw std::runtime_error(path_ + ": write error");
  }

 private:
  std::string path_;
  std::ofstream out_;
};

std::string field_of(std::string_view line, std::size_t& at) {
  const std::size_t end = std::min(line.find('\t', at), line.size());
  std::string field(line.substr(at, end - at));
  at = end + 1;
  return field;
}

}  // namespace

std::uint64_t evidence_digest(const EvidenceSet& set, std::uint64_t seed, std::uint64_t count) {
  std::uint64_t h = kDigestStart;
  for (std::uint64_t i = 0; i < count; ++i) {
    digest_case(h, evidence_case(set.datapath, seed, set.stream, i));
  }
  return h;
}

std::string evidence_manifest_header() {
  return "# name\tcount\tseed\tdigest\tk\tscales\ta\tb\taccumulator\tscale_a\tscale_b\t"
         "mmasim (class|arch|shape_and_type;...)";
}

std::string write_evidence_cases(const EvidenceSet& set, std::uint64_t seed, std::uint64_t count,
                                 const std::string& dir) {
  const Datapath& dp = set.datapath;
  const std::string stem = dir + "/" + set.name;
  BinaryFile a(stem + ".a"), b(stem + ".b"), c(stem + ".c");
  std::optional<BinaryFile> scale_a, scale_b;
  if (dp.block_scaled()) {
    scale_a.emplace(stem + ".scale_a");
    scale_b.emplace(stem + ".scale_b");
  }
  std::uint64_t h = kDigestStart;
  for (std::uint64_t i = 0; i < count; ++i) {
    const MmaCase x = evidence_case(dp, seed, set.stream, i);
    digest_case(h, x);
    a.put(x.a, 1);
    b.put(x.b, 1);
    c.put({x.c}, result_bytes(dp));
    if (scale_a) {
      scale_a->put(x.scale_a, 1);
      scale_b->put(x.scale_b, 1);
    }
  }
  a.close();
  b.close();
  c.close();
  if (scale_a) {
    scale_a->close();
    scale_b->close();
  }
  std::ostringstream line;
  line << set.name << '\t' << count << '\t' << seed << '\t' << hex64(h) << '\t' << dp.instruction_k
       << '\t' << (dp.block_scaled() ? scale_count(dp, dp.instruction_k) : 0) << '\t'
       << dp.input.name << '\t' << dp.b_format().name << '\t' << dp.accumulator.name << '\t'
       << (dp.block_scaled() ? dp.block_scaling.scale_a.name : "-") << '\t'
       << (dp.block_scaled() ? dp.block_scaling.scale_b.name : "-") << '\t';
  for (std::size_t i = 0; i < set.mmasim.size(); ++i) {
    const MmaSimInstruction& m = set.mmasim[i];
    line << (i ? ";" : "") << m.cls << '|' << m.arch << '|' << m.shape_and_type;
  }
  return line.str();
}

std::vector<EvidenceRecord> read_evidence_manifest(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::vector<EvidenceRecord> records;
  std::size_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    const auto bad = [&](const std::string& what) {
      return std::runtime_error(path + ":" + std::to_string(number) + ": " + what);
    };
    std::size_t at = 0;
    EvidenceRecord r;
    r.name = field_of(line, at);
    const std::string fields[] = {field_of(line, at), field_of(line, at), field_of(line, at)};
    try {
      std::size_t used = 0;
      r.count = std::stoull(fields[0], &used);
      if (used != fields[0].size()) throw std::invalid_argument("count");
      r.seed = std::stoull(fields[1], &used);
      if (used != fields[1].size()) throw std::invalid_argument("seed");
      r.digest = std::stoull(fields[2], &used, 16);
      if (used != fields[2].size() || used != 16) throw std::invalid_argument("digest");
    } catch (const std::exception&) {
      throw bad("expected NAME<tab>COUNT<tab>SEED<tab>DIGEST (16 hex digits), got '" + line + "'");
    }
    records.push_back(std::move(r));
  }
  return records;
}

std::vector<EvidenceSetResult> check_evidence_folder(const std::string& dir,
                                                     std::uint64_t max_count, std::size_t keep,
                                                     int threads) {
  const std::vector<EvidenceRecord> records = read_evidence_manifest(dir + "/results.tsv");
  std::vector<EvidenceSetResult> out;
  for (EvidenceSet& set : mmasim_evidence_sets()) {
    EvidenceSetResult& r = out.emplace_back();
    r.set = std::move(set);
    const auto record = std::find_if(records.begin(), records.end(),
                                     [&](const EvidenceRecord& x) { return x.name == r.set.name; });
    if (record == records.end()) {
      r.error = "no MMA-Sim results for this set in " + dir + "/results.tsv";
      continue;
    }
    r.seed = record->seed;
    const std::string path = dir + "/" + r.set.name + ".d";
    std::vector<std::uint32_t> results;
    try {
      results = read_evidence_results(path, r.set.datapath);
    } catch (const std::runtime_error& e) {
      r.error = e.what();
      continue;
    }
    if (results.size() != record->count) {
      r.error = path + " holds " + std::to_string(results.size()) + " results, results.tsv says " +
                std::to_string(record->count);
      continue;
    }
    const std::uint64_t digest = evidence_digest(r.set, record->seed, record->count);
    if (digest != record->digest) {
      r.error = "the generator's cases differ from those MMA-Sim ran (digest " + hex64(digest) +
                ", results.tsv " + hex64(record->digest) +
                "): the case generator changed; regenerate the results "
                "(tests/data/mmasim/README.md)";
      continue;
    }
    if (max_count > 0 && results.size() > max_count) results.resize(max_count);
    r.check = check_evidence(r.set, record->seed, results, keep, threads);
  }
  return out;
}

std::string describe_mismatch(const EvidenceSet& set, std::uint64_t seed,
                              const EvidenceMismatch& m) {
  const Datapath& dp = set.datapath;
  return set.name + " case " + std::to_string(m.index) + " (" +
         std::string(evidence_scenario(dp, m.index)) + "): MMA-Sim " +
         to_hex(dp.accumulator, m.mmasim) + ", tcemu " + to_hex(dp.accumulator, m.tcemu) + "; " +
         describe_case(dp, evidence_case(dp, seed, set.stream, m.index));
}

}  // namespace tcemu
