// The crafted probe cases (case_generator.hpp). Values are built exactly from (sign,
// significand, exponent); a value the format cannot hold leaves its case out.
#include <algorithm>
#include <optional>

#include <tcemu/cases/case_generator.hpp>
#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu {
namespace {

// (-1)^negative * significand * 2^exponent in `f`, if exactly representable.
std::optional<std::uint32_t> exact(const FloatFormat& f, bool negative, std::uint64_t significand,
                                   int exponent) {
  if (significand == 0) return encode_zero(f, negative);
  const std::uint32_t bits = round_pack(f, negative, {significand, exponent, false},
                                        Rounding::toward_zero, Overflow::saturate);
  const std::uint32_t up = round_pack(f, negative, {significand, exponent, false},
                                      Rounding::nearest_even, Overflow::infinity);
  if (bits != up) return std::nullopt;  // inexact or out of range
  const Decoded d = decode(f, bits);
  if (d.value_class != ValueClass::finite) return std::nullopt;
  // Compare values: significand * 2^lsb against the request, both normalised.
  auto normal = [](std::uint64_t s, int e) {
    while ((s & 1) == 0) {
      s >>= 1;
      ++e;
    }
    return std::pair{s, e};
  };
  if (normal(d.significand, d.lsb_exponent) != normal(significand, exponent)) return std::nullopt;
  return bits;
}

class Builder {
 public:
  Builder(const FloatFormat& in, const FloatFormat& acc, int k) : in_(in), acc_(acc), k_(k) {}

  // A case of k zero products (+0 * +0) and c = +0, to be filled in.
  MmaCase blank() const {
    return {std::vector<std::uint32_t>(static_cast<std::size_t>(k_), encode_zero(in_, false)),
            std::vector<std::uint32_t>(static_cast<std::size_t>(k_), encode_zero(in_, false)),
            encode_zero(acc_, false), std::nullopt};
  }
  std::optional<std::uint32_t> in(bool negative, std::uint64_t s, int e) const {
    return exact(in_, negative, s, e);
  }
  std::optional<std::uint32_t> acc(bool negative, std::uint64_t s, int e) const {
    return exact(acc_, negative, s, e);
  }
  void add(std::string name, const std::optional<MmaCase>& c) {
    if (c) cases.push_back({std::move(name), *c});
  }
  std::uint32_t inf_in(bool negative) const { return encode_infinity(in_, negative); }
  std::uint32_t nan_in() const {
    return convert(formats::fp32, in_, 0x7FC00000u, Rounding::nearest_even);
  }
  std::uint32_t max_in(bool negative) const { return encode_max_finite(in_, negative); }

  const FloatFormat& in_;
  const FloatFormat& acc_;
  int k_;
  std::vector<NamedCase> cases;
};

}  // namespace

std::vector<NamedCase> crafted_cases(const FloatFormat& input, const FloatFormat& accumulator,
                                     int k) {
  Builder b(input, accumulator, k);
  const auto ku = static_cast<std::size_t>(k);
  const bool has_inf = input.special == SpecialEncoding::ieee;
  const std::uint32_t one = *b.in(false, 1, 0);

  // Signed zeros: every product -0 (a = -0, b = +0) with c = -0 and c = +0; an exact cancellation.
  for (bool c_negative : {true, false}) {
    MmaCase c = b.blank();
    for (auto& x : c.a) x = encode_zero(input, true);
    c.c = encode_zero(accumulator, c_negative);
    b.add(c_negative ? "zeros-all-negative" : "zeros-negative-products-positive-c", c);
  }
  if (k >= 2) {
    MmaCase c = b.blank();
    c.a[0] = one;
    c.b[0] = one;
    c.a[1] = *b.in(true, 1, 0);
    c.b[1] = one;
    for (bool c_negative : {false, true}) {
      c.c = encode_zero(accumulator, c_negative);
      b.add(c_negative ? "cancellation-to-zero-c-negative" : "cancellation-to-zero", c);
    }
  }
  // NaN and Inf rules.
  {
    MmaCase c = b.blank();
    c.a[0] = b.nan_in();
    c.b[0] = one;
    b.add("nan-in-a", c);
    c = b.blank();
    c.c = convert(formats::fp32, accumulator, 0x7FC00000u, Rounding::nearest_even);
    b.add("nan-in-c", c);
    c = b.blank();  // a negative signalling NaN with payload 1
    c.c = accumulator.sign_mask() |
          (((1u << accumulator.exponent_bits) - 1) << accumulator.fraction_bits) | 1u;
    b.add("negative-signalling-nan-in-c", c);
  }
  if (has_inf) {
    MmaCase c = b.blank();
    c.a[0] = b.inf_in(false);  // Inf * +0
    b.add("inf-times-zero", c);
    c.b[0] = one;
    b.add("inf-propagates", c);
    c.c = encode_infinity(accumulator, true);
    b.add("inf-plus-negative-inf-c", c);
    if (k >= 2) {
      c = b.blank();
      c.a[0] = b.inf_in(false);
      c.b[0] = one;
      c.a[1] = b.inf_in(true);
      c.b[1] = one;
      b.add("inf-minus-inf-products", c);
    }
  }
  {
    MmaCase c = b.blank();
    c.c = encode_infinity(accumulator, true);
    c.a[0] = one;
    c.b[0] = one;
    b.add("c-negative-inf", c);
  }
  // Overflow: every product the largest finite value, c the accumulator's largest.
  {
    MmaCase c = b.blank();
    for (std::size_t i = 0; i < ku; ++i) {
      c.a[i] = b.max_in(false);
      c.b[i] = b.max_in(false);
    }
    c.c = encode_max_finite(accumulator, false);
    b.add("overflow", c);
    for (auto& x : c.a) x = b.max_in(true);
    c.c = encode_max_finite(accumulator, true);
    b.add("overflow-negative", c);
  }
  // Subnormal operands: the smallest subnormal times one; c the smallest subnormal accumulator.
  {
    MmaCase c = b.blank();
    c.a[0] = 1u << input.padding_bits;
    c.b[0] = one;
    b.add("subnormal-input", c);
    c.c = encode_zero(accumulator, false) | 1u;
    b.add("subnormal-input-and-c", c);
    c = b.blank();
    c.a[0] = 1u << input.padding_bits;
    c.b[0] = 1u << input.padding_bits;
    b.add("subnormal-squared", c);
  }
  // The alignment floor (Khattak and Mikaitis 2025, the discriminating vector; docs/presets.md):
  // bf16 a_i = 1.5 * 2^-76, b_i = 2^-75, c = 0, all k.
  {
    MmaCase c = b.blank();
    const auto a = b.in(false, 3, -77), bb = b.in(false, 1, -75);
    if (a && bb) {
      for (std::size_t i = 0; i < ku; ++i) {
        c.a[i] = *a;
        c.b[i] = *bb;
      }
      b.add("alignment-floor", c);
    }
  }
  // FTTN's extra-bits vector: a = 1, b = 1.25, c = -(2^-3 + 2^-25) (fp32 accumulators).
  if (const auto c_value = b.acc(true, (1u << 22) + 1, -25); c_value) {
    MmaCase c = b.blank();
    c.a[0] = one;
    c.b[0] = *b.in(false, 5, -2);
    c.c = *c_value;
    b.add("fttn-extra-bits", c);
  }
  // Fasi et al.: a = 1, b = 1, c = -(1 - 2^-24): needs an extra alignment bit to be exact.
  if (const auto c_value = b.acc(true, (1u << 24) - 1, -24); c_value) {
    MmaCase c = b.blank();
    c.a[0] = one;
    c.b[0] = one;
    c.c = *c_value;
    b.add("extra-bit-cancellation", c);
  }
  // Block size (Khattak and Mikaitis): products 2^(2h) and -2^(2h) at indices 0 and 1 and a
  // small one, 1.5 * 2^(2l), at index j, with h - l >= 15 so that the small one lies more than 26
  // bits below. In the block of the cancelling pair it falls below the grid and is lost
  // (result 0); in a later block it is alone and kept exactly. l >= -40 keeps it above the
  // alignment floor.
  {
    const int l = std::max(input.min_exponent(), -40);
    const int h = std::min(input.max_exponent(), l + 15);
    const auto big = b.in(false, 1, h), minus_big = b.in(true, 1, h);
    const auto small = b.in(false, 1, l), small_b = b.in(false, 3, l - 1);
    for (int j = 2; j < k && big && minus_big && small && small_b; ++j) {
      MmaCase c = b.blank();
      c.a[0] = *big;
      c.b[0] = *big;
      c.a[1] = *minus_big;
      c.b[1] = *big;
      c.a[static_cast<std::size_t>(j)] = *small;
      c.b[static_cast<std::size_t>(j)] = *small_b;
      b.add("block-size-small-term-at-" + std::to_string(j), c);
    }
  }
  // Rounding of the block result: 1 + 0.75 ulp(fp32 1) in one product (RN rounds up, RZ down).
  if (const auto small = b.in(false, 3, -14), small_b = b.in(false, 1, -12); small && small_b) {
    MmaCase c = b.blank();
    c.a[0] = *small;
    c.b[0] = *small_b;
    if (const auto c_value = b.acc(false, 1, 0)) {
      c.c = *c_value;
      b.add("block-rounding", c);
    }
  }
  return std::move(b.cases);
}

}  // namespace tcemu
