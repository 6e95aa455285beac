// The datapath of datapath.hpp, step by step, on exact MPFR values.
//
// Every intermediate value is exact: products of two significands of at most 24 bits are exact at
// 64 bits (kTermPrecision), truncation to the grid only drops bits, and the block sum is taken at
// kSumPrecision, where every addition checks MPFR's ternary value, so an inexact step throws
// instead of passing silently. The only roundings are the datapath's own, done by
// round_to_format().
#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/emulator/floating_point_scope.hpp>
#include <tcemu/reference/format_value.hpp>
#include <tcemu/reference/mma_oracle.hpp>
#include <tcemu/reference/mpfr_number.hpp>

namespace tcemu::reference {
namespace {

constexpr Precision kTermPrecision{64};
// Every term of a datapath whose input has at most 8 exponent bits and 24 significant bits lies in
// [2^-300, 2^258) (two subnormal bf16 factors: 2^-266; an fp32 c: down to 2^-149; two largest
// factors: below 2^256), and truncation to a grid only removes low bits, so the exact sum of n
// terms needs fewer than 560 + log2(n) bits. 2048 bits leave ample room; the ternary checks would
// catch a sum that did not fit.
constexpr Precision kSumPrecision{2048};

[[noreturn]] void inexact(const std::string& what) {
  throw std::logic_error("oracle_mma_element: inexact " + what);
}

struct Term {
  MpfrNumber value;  // exact, signed (zeros keep their sign)
  int alignment_exponent;
  bool sets_grid;  // a nonzero product or c, or a block-scaled group that did not vanish
};

// The scales of one product or group and the rule that applies them.
struct Scales {
  const ExactValue& a;
  const ExactValue& b;
  const BlockScaling& rule;
};

// The terms of one fused sum and what the special-value rules need to know about them.
class Terms {
 public:
  explicit Terms(std::size_t capacity) { terms_.reserve(capacity); }

  void add_product(const ExactValue& a, const ExactValue& b) {
    using Kind = ExactValue::Kind;
    if (a.kind == Kind::nan || b.kind == Kind::nan) {
      nan_ = true;
      return;
    }
    if (a.kind == Kind::infinity || b.kind == Kind::infinity) {
      if (a.kind == Kind::zero || b.kind == Kind::zero) {
        nan_ = true;  // 0 * Inf
      } else {
        note_infinity(a.value.is_negative() != b.value.is_negative());
      }
      return;
    }
    // Finite * finite: exact; a zero product gets the exclusive-or of the signs (IEEE, MPFR).
    MpfrNumber product(kTermPrecision);
    if (product.mul(a.value, b.value, MPFR_RNDN) != 0) inexact("product");
    const bool nonzero = a.kind == Kind::finite && b.kind == Kind::finite;
    terms_.push_back({std::move(product), a.alignment_exponent + b.alignment_exponent, nonzero});
  }

  // Block scaling (datapath.hpp): the products a[i] * b[i] of one group (one product when
  // group_terms == 1) summed exactly, times both scales, as one term. One product carries the
  // scales in its exponent; a group of several is aligned on the scales' exponents alone and
  // sets the grid unless all its products are zero, even when it cancels. A zero scale makes a
  // zero term, a NaN scale makes NaN (under ignored_for_zero_products not for a zero group), an
  // Inf group under a zero scale is NaN.
  void add_scaled(const std::vector<const ExactValue*>& a, const std::vector<const ExactValue*>& b,
                  const Scales& scales) {
    using Kind = ExactValue::Kind;
    bool nan = false, positive_infinity = false, negative_infinity = false, all_zero = true;
    MpfrNumber sum(kSumPrecision);
    mpfr_set_zero(sum.get(), 1);
    bool first = true;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const ExactValue& x = *a[i];
      const ExactValue& y = *b[i];
      if (x.kind == Kind::nan || y.kind == Kind::nan) {
        nan = true;
      } else if (x.kind == Kind::infinity || y.kind == Kind::infinity) {
        if (x.kind == Kind::zero || y.kind == Kind::zero) nan = true;
        (x.value.is_negative() != y.value.is_negative() ? negative_infinity : positive_infinity) =
            true;
      } else {
        MpfrNumber product(kTermPrecision);
        if (product.mul(x.value, y.value, MPFR_RNDN) != 0) inexact("product");
        all_zero = all_zero && (x.kind == Kind::zero || y.kind == Kind::zero);
        const int ternary = first ? sum.set(product, MPFR_RNDN) : sum.add(sum, product, MPFR_RNDN);
        if (ternary != 0) inexact("group sum");
        first = false;
      }
    }
    const bool nan_scale = scales.a.kind == Kind::nan || scales.b.kind == Kind::nan;
    const bool zero_scale = scales.a.kind == Kind::zero || scales.b.kind == Kind::zero;
    const bool infinite = positive_infinity || negative_infinity;
    const bool vanishes = all_zero && !infinite && !nan;
    if (nan || (positive_infinity && negative_infinity) || (infinite && zero_scale) ||
        (nan_scale && (scales.rule.nan_scale == NanScale::poisons_result || !vanishes))) {
      nan_ = true;
      return;
    }
    if (infinite) {
      note_infinity(negative_infinity);
      return;
    }
    if (zero_scale || nan_scale) {
      // A zero scale, or an ignored NaN scale over a vanished group: a zero term of the sum's sign.
      MpfrNumber zero(kTermPrecision);
      zero.set_zero(sum.is_negative());
      terms_.push_back({std::move(zero), 0, false});
      return;
    }
    MpfrNumber value(kSumPrecision);
    if (value.mul(sum, scales.a.value, MPFR_RNDN) != 0 ||
        value.mul(value, scales.b.value, MPFR_RNDN) != 0)
      inexact("scaled term");
    const int scale_exponent = scales.a.alignment_exponent + scales.b.alignment_exponent;
    const int alignment = scales.rule.group_terms == 1
                              ? a[0]->alignment_exponent + b[0]->alignment_exponent + scale_exponent
                              : scale_exponent;
    terms_.push_back({std::move(value), alignment, !vanishes});
  }

  void add_value(const ExactValue& c) {
    using Kind = ExactValue::Kind;
    switch (c.kind) {
      case Kind::nan:
        nan_ = true;
        return;
      case Kind::infinity:
        note_infinity(c.value.is_negative());
        return;
      case Kind::zero:
      case Kind::finite:
        terms_.push_back({c.value.copy(), c.alignment_exponent, c.kind == Kind::finite});
    }
  }

  // NaN anywhere, 0 * Inf or Inf - Inf: the datapath's NaN. Otherwise an Inf propagates.
  std::optional<std::uint32_t> special(const Datapath& dp) const {
    if (nan_ || (positive_infinity_ && negative_infinity_)) return dp.nan_bits;
    if (positive_infinity_ || negative_infinity_) {
      MpfrNumber infinity(kTermPrecision);
      mpfr_set_inf(infinity.get(), negative_infinity_ ? -1 : 1);
      return round_to_format(dp.accumulator, infinity, Rounding::nearest_even, Overflow::ieee);
    }
    return std::nullopt;
  }

  // Truncates every term's magnitude to the grid 2^(top - fraction_bits), where top is the largest
  // alignment exponent of a term that sets the grid, at least `floor`. A negative term truncated to
  // nothing becomes -0 (mpfr_trunc keeps the sign).
  void truncate_to_grid(int fraction_bits, int floor) {
    int top = floor;
    for (const Term& t : terms_) {
      if (t.sets_grid) top = std::max(top, t.alignment_exponent);
    }
    const long grid = static_cast<long>(top) - fraction_bits;
    for (Term& t : terms_) {
      if (!t.sets_grid) continue;
      t.value.scale_by_power_of_two(-grid);
      // mpfr_trunc returns +-1 only when the integer part does not fit the precision.
      const int ternary = t.value.truncate_to_integer();
      if (ternary == 1 || ternary == -1) inexact("truncation");
      t.value.scale_by_power_of_two(grid);
    }
  }

  // The exact sum. Starting from the first term and adding the others under round-to-nearest
  // gives the IEEE sign of a zero sum: -0 only when every term is -0.
  MpfrNumber exact_sum() const {
    MpfrNumber sum(kSumPrecision);
    for (std::size_t i = 0; i < terms_.size(); ++i) {
      const int ternary =
          i == 0 ? sum.set(terms_[i].value, MPFR_RNDN) : sum.add(sum, terms_[i].value, MPFR_RNDN);
      if (ternary != 0) inexact("sum");
    }
    return sum;
  }

 private:
  void note_infinity(bool negative) { (negative ? negative_infinity_ : positive_infinity_) = true; }

  std::vector<Term> terms_;
  bool nan_ = false;
  bool positive_infinity_ = false;
  bool negative_infinity_ = false;
};

// Special values first; otherwise the (optionally truncated) terms summed exactly and rounded
// once to the accumulator format.
std::uint32_t round_terms(const Datapath& dp, Terms& terms, std::optional<int> fraction_bits,
                          int floor, Rounding rounding, int precision) {
  if (const auto special = terms.special(dp)) return *special;
  if (fraction_bits) terms.truncate_to_grid(*fraction_bits, floor);
  MpfrNumber sum = terms.exact_sum();
  if (sum.is_zero() && dp.zero_sign == ZeroSign::positive) sum.set_zero(false);
  const std::uint32_t bits = round_to_format(dp.accumulator, sum, rounding, dp.overflow, precision);
  // ZeroSign::positive: every zero result is +0, also a nonzero sum that rounds to zero.
  const std::uint32_t negative_zero = dp.accumulator.sign_mask() << dp.accumulator.padding_bits;
  return dp.zero_sign == ZeroSign::positive && bits == negative_zero ? 0u : bits;
}

// The scales of the row of A and the column of B, decoded (empty for an unscaled datapath).
struct ScaleValues {
  std::vector<ExactValue> a, b;
};

// One block: the products of `members` (k order) plus the accumulator value `c`; on a
// block-scaled datapath consecutive runs of group_terms members form the groups.
std::uint32_t oracle_block(const Datapath& dp, const std::vector<ExactValue>& a,
                           const std::vector<ExactValue>& b, const ScaleValues& scales,
                           const std::vector<std::size_t>& members, std::uint32_t c) {
  Terms terms(members.size() + 1);
  if (dp.block_scaled()) {
    const auto group = static_cast<std::size_t>(dp.block_scaling.group_terms);
    const auto block = static_cast<std::size_t>(dp.block_scaling.scale_block);
    for (std::size_t first = 0; first < members.size(); first += group) {
      std::vector<const ExactValue*> ga, gb;
      for (std::size_t i = first; i < std::min(first + group, members.size()); ++i) {
        ga.push_back(&a[members[i]]);
        gb.push_back(&b[members[i]]);
      }
      const std::size_t s = members[first] / block;
      terms.add_scaled(ga, gb, {scales.a[s], scales.b[s], dp.block_scaling});
    }
  }
  for (const std::size_t j : dp.block_scaled() ? std::vector<std::size_t>{} : members) {
    terms.add_product(a[j], b[j]);
  }
  terms.add_value(exact_value(dp.accumulator, c));
  return round_terms(dp, terms, dp.alignment_fraction_bits, dp.alignment_floor, dp.block_rounding,
                     dp.block_result_precision);
}

// c_entry == added_after_blocks: x + y exactly, rounded once to nearest even in the accumulator
// format, with the datapath's NaN, zero-sign and overflow rules (datapath.hpp, step 4).
std::uint32_t oracle_accumulator_add(const Datapath& dp, std::uint32_t x, std::uint32_t y) {
  Terms terms(2);
  terms.add_value(exact_value(dp.accumulator, x));
  terms.add_value(exact_value(dp.accumulator, y));
  return round_terms(dp, terms, std::nullopt, dp.alignment_floor, Rounding::nearest_even, 0);
}

void check(const Datapath& dp, std::size_t a_size, std::size_t b_size) {
  const auto fail = [](const std::string& what) {
    throw std::invalid_argument("oracle_mma_element: " + what);
  };
  if (a_size != b_size) fail("a and b differ in length");
  if (dp.accumulator.special != SpecialEncoding::ieee || dp.accumulator.padding_bits != 0) {
    fail("the accumulator must be an IEEE-style format");
  }
  for (const FloatFormat* f : {&dp.input, &dp.b_format()}) {
    if (f->fraction_bits > 23 || f->exponent_bits > 8) fail("input wider than fp32");
  }
  if (dp.block_terms < 1 || dp.instruction_k < 1 || dp.instruction_k % dp.block_terms != 0) {
    fail("instruction_k must be a positive multiple of block_terms");
  }
  if (dp.k_group < 1 || dp.block_terms % dp.k_group != 0) fail("k_group must divide block_terms");
  if (dp.alignment_fraction_bits && *dp.alignment_fraction_bits < 0) {
    fail("alignment_fraction_bits must not be negative");
  }
  if (dp.block_result_precision < 1 ||
      dp.block_result_precision > dp.accumulator.fraction_bits + 1) {
    fail("block_result_precision out of range");
  }
}

// The chain of instructions over a and b from c, as mma_element runs it (mma.hpp).
std::uint32_t oracle_chain(const Datapath& dp, std::span<const std::uint32_t> a,
                           std::span<const std::uint32_t> b, std::uint32_t c,
                           const ScaleValues& scales) {
  check(dp, a.size(), b.size());
  std::vector<ExactValue> av;
  std::vector<ExactValue> bv;
  av.reserve(a.size());
  bv.reserve(b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    av.push_back(exact_value(dp.input, a[i]));
    bv.push_back(exact_value(dp.b_format(), b[i]));
  }

  const std::size_t k = a.size();
  const auto instruction_k = static_cast<std::size_t>(dp.instruction_k);
  const auto k_group = static_cast<std::size_t>(dp.k_group);
  const std::size_t blocks = instruction_k / static_cast<std::size_t>(dp.block_terms);
  const bool c_in_first_block = dp.c_entry == AccumulatorEntry::aligned_in_first_block;
  constexpr std::uint32_t kPositiveZero = 0;  // +0 in every format

  // K = 0 is an empty chain, as in the emulator (mma.hpp): no instruction runs and d = c.
  const std::size_t instructions = (k + instruction_k - 1) / instruction_k;
  std::uint32_t d = c;
  std::vector<std::size_t> members;
  for (std::size_t instruction = 0; instruction < instructions; ++instruction) {
    const std::size_t start = instruction * instruction_k;
    const std::size_t count = std::min(instruction_k, k - start);
    std::uint32_t chain = c_in_first_block ? d : kPositiveZero;
    for (std::size_t block = 0; block < blocks; ++block) {
      // Consecutive groups of k_group terms go round-robin to the blocks, kept in k order.
      members.clear();
      for (std::size_t j = 0; j < count; ++j) {
        if ((j / k_group) % blocks == block) members.push_back(start + j);
      }
      // Only the trailing blocks of a last, partial instruction can be empty. No padding terms
      // are invented, so they do not run; the first block always runs, as it carries c.
      if (members.empty() && block > 0) continue;
      chain = oracle_block(dp, av, bv, scales, members, chain);
    }
    d = c_in_first_block ? chain : oracle_accumulator_add(dp, chain, d);
  }
  return d;
}

}  // namespace

std::uint32_t oracle_mma_element(const Datapath& dp, std::span<const std::uint32_t> a,
                                 std::span<const std::uint32_t> b, std::uint32_t c) {
  const FloatingPointScope scope;
  if (dp.block_scaled()) {
    throw std::invalid_argument("oracle_mma_element: the datapath is block-scaled: give scales");
  }
  return oracle_chain(dp, a, b, c, {});
}

std::uint32_t oracle_mma_element(const Datapath& dp, std::span<const std::uint32_t> a,
                                 std::span<const std::uint32_t> b, std::uint32_t c,
                                 std::span<const std::uint32_t> scale_a,
                                 std::span<const std::uint32_t> scale_b) {
  const FloatingPointScope scope;
  const auto block = static_cast<std::size_t>(dp.block_scaling.scale_block);
  const std::size_t count = block == 0 ? 0 : (a.size() + block - 1) / block;
  if (!dp.block_scaled() || scale_a.size() != count || scale_b.size() != count) {
    throw std::invalid_argument("oracle_mma_element: a block-scaled datapath takes " +
                                std::to_string(count) + " scales of A and of B");
  }
  ScaleValues scales;
  for (std::size_t s = 0; s < count; ++s) {
    scales.a.push_back(exact_value(dp.block_scaling.scale_a, scale_a[s]));
    scales.b.push_back(exact_value(dp.block_scaling.scale_b, scale_b[s]));
  }
  return oracle_chain(dp, a, b, c, scales);
}

}  // namespace tcemu::reference
