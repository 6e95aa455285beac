#include <algorithm>
#include <array>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/emulator/block_fma.hpp>
#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/floating_point_scope.hpp>
#include <tcemu/emulator/mma.hpp>

namespace tcemu {
namespace {

[[noreturn]] void invalid(const std::string& what) {
  throw std::invalid_argument("invalid datapath: " + what);
}

// The widest datapath we accept keeps every grid shift inside the exact accumulator.
constexpr int kMaxAlignmentFractionBits = 400;
constexpr int kMaxInstructionK = 1024;

// Bits of the least significant bit of any nonzero value of `f`, and of its largest value.
int lowest_lsb(const FloatFormat& f) {
  return f.min_exponent() - f.fraction_bits;
}
int highest_lsb(const FloatFormat& f) {
  return f.max_exponent() - f.fraction_bits;
}

int ceil_log2(int x) {
  int bits = 0;
  while ((1 << bits) < x) ++bits;
  return bits;
}

// Bits of a group's exact sum times both scale significands, from the least significant bit any
// product of the group can have: each product lies below 2^(emax_a + 1 + emax_b + 1), G of them
// below G times that, and the scales' significands add their widths (ue8m0: 1, ue4m3: 4).
int group_sum_bits(const Datapath& dp) {
  const FloatFormat& fa = dp.input;
  const FloatFormat& fb = dp.b_format();
  const BlockScaling& s = dp.block_scaling;
  const int span = fa.max_exponent() + 1 + fb.max_exponent() + 1 - lowest_lsb(fa) - lowest_lsb(fb);
  return span + ceil_log2(s.group_terms) + s.scale_a.fraction_bits + 1 + s.scale_b.fraction_bits +
         1;
}

void validate_block_scaling(const Datapath& dp) {
  const BlockScaling& s = dp.block_scaling;
  if (!is_scale_format(s.scale_a) || !is_scale_format(s.scale_b)) {
    invalid("scale formats must be ue8m0 or ue4m3, got " + std::string(s.scale_a.name) + " and " +
            std::string(s.scale_b.name));
  }
  if (dp.instruction_k % s.scale_block != 0) {
    invalid("scale_block = " + std::to_string(s.scale_block) +
            " must divide instruction_k = " + std::to_string(dp.instruction_k));
  }
  if (s.group_terms < 1 || s.scale_block % s.group_terms != 0 ||
      dp.block_terms % s.group_terms != 0) {
    invalid("group_terms = " + std::to_string(s.group_terms) +
            " must divide scale_block and block_terms (a group never straddles a scale or block)");
  }
  if (s.group_terms > 1 && dp.k_group != dp.block_terms) {
    invalid("group_terms > 1 needs blocks in k order (k_group == block_terms)");
  }
  if (s.group_terms > 1 && group_sum_bits(dp) > 63) {
    invalid("a group of " + std::to_string(s.group_terms) + " " + std::string(dp.input.name) +
            " x " + std::string(dp.b_format().name) + " products with " +
            std::string(s.scale_a.name) + "/" + std::string(s.scale_b.name) + " scales needs " +
            std::to_string(group_sum_bits(dp)) +
            " bits, more than the 63 the emulator sums exactly");
  }
  // WideSum's shift bound (wide_sum.hpp): on a grid, a group term's last bit lies at most the
  // highest product lsb above its scales' alignment exponent; exactly summed, every term's last
  // bit and c's lie within kMaxShift of the lowest.
  const int product_low = lowest_lsb(dp.input) + lowest_lsb(dp.b_format());
  const int product_high = highest_lsb(dp.input) + highest_lsb(dp.b_format());
  const int widest_shift =
      dp.alignment_fraction_bits
          ? *dp.alignment_fraction_bits + std::max(0, product_high)
          : std::max(product_high + highest_lsb(s.scale_a) + highest_lsb(s.scale_b),
                     highest_lsb(dp.accumulator)) -
                std::min(product_low + lowest_lsb(s.scale_a) + lowest_lsb(s.scale_b),
                         lowest_lsb(dp.accumulator));
  if (widest_shift > detail::WideSum::kMaxShift) {
    invalid("the scaled terms span " + std::to_string(widest_shift) + " bits, more than the " +
            std::to_string(detail::WideSum::kMaxShift) + " the exact accumulator holds");
  }
}

void check_input_format(const FloatFormat& f, const char* role) {
  if (f.fraction_bits > 23 || f.exponent_bits > 8) {
    invalid(std::string(role) + " format " + std::string(f.name) + " is wider than fp32");
  }
  if (is_scale_format(f)) {
    invalid(std::string(role) + " format " + std::string(f.name) +
            " is a scale format (block_scaling takes it)");
  }
}

}  // namespace

void validate(const Datapath& dp) {
  if (!(dp.accumulator == formats::fp32) && !(dp.accumulator == formats::fp16)) {
    invalid("accumulator must be fp32 or fp16, got " + std::string(dp.accumulator.name));
  }
  check_input_format(dp.input, "input");
  if (dp.has_input_b) check_input_format(dp.input_b, "input_b");
  if (dp.block_scaling.scale_block < 0) {
    invalid("scale_block must be >= 0 (0: no block scaling), got " +
            std::to_string(dp.block_scaling.scale_block));
  }
  if (dp.block_terms < 1 || dp.block_terms > kMaxBlockTerms) {
    invalid("block_terms must be in [1, " + std::to_string(kMaxBlockTerms) + "], got " +
            std::to_string(dp.block_terms));
  }
  if (dp.instruction_k < 1 || dp.instruction_k > kMaxInstructionK ||
      dp.instruction_k % dp.block_terms != 0) {
    invalid("instruction_k must be a positive multiple of block_terms, got " +
            std::to_string(dp.instruction_k));
  }
  if (dp.k_group < 1 || dp.block_terms % dp.k_group != 0) {
    invalid("k_group must divide block_terms, got " + std::to_string(dp.k_group));
  }
  if (dp.alignment_fraction_bits && (*dp.alignment_fraction_bits < 0 ||
                                     *dp.alignment_fraction_bits > kMaxAlignmentFractionBits)) {
    invalid("alignment_fraction_bits must be in [0, " + std::to_string(kMaxAlignmentFractionBits) +
            "], got " + std::to_string(*dp.alignment_fraction_bits));
  }
  if (dp.block_result_precision < 1 ||
      dp.block_result_precision > dp.accumulator.fraction_bits + 1) {
    invalid("block_result_precision must be in [1, " +
            std::to_string(dp.accumulator.fraction_bits + 1) + "], got " +
            std::to_string(dp.block_result_precision));
  }
  // The NaN a datapath writes must be a NaN of its accumulator format, in that format's width.
  const int width = dp.accumulator.container_bits();
  if ((width < 32 && (dp.nan_bits >> width) != 0) ||
      decode(dp.accumulator, dp.nan_bits).value_class != ValueClass::nan) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%X", static_cast<unsigned>(dp.nan_bits));
    invalid("nan_bits = " + std::string(hex) + " is not a NaN of the accumulator format " +
            std::string(dp.accumulator.name));
  }
  if (dp.block_scaled()) validate_block_scaling(dp);
}

std::size_t scale_count(const Datapath& dp, std::size_t k) {
  const auto block = static_cast<std::size_t>(dp.block_scaling.scale_block);
  return (k + block - 1) / block;
}

namespace {

void check_lengths(const Datapath& dp, std::size_t a, std::size_t b, std::size_t scale_a,
                   std::size_t scale_b, bool scaled) {
  if (a != b) {
    throw std::invalid_argument("mma_element: a has " + std::to_string(a) + " values, b " +
                                std::to_string(b));
  }
  if (scaled != dp.block_scaled()) {
    throw std::invalid_argument(dp.block_scaled()
                                    ? "mma_element: the datapath is block-scaled: give the scales"
                                    : "mma_element: scales given to a datapath without scaling");
  }
  if (scaled && (scale_a != scale_count(dp, a) || scale_b != scale_count(dp, a))) {
    throw std::invalid_argument(
        "mma_element: K = " + std::to_string(a) + " needs " + std::to_string(scale_count(dp, a)) +
        " scales of A and of B (one per " + std::to_string(dp.block_scaling.scale_block) +
        " k), got " + std::to_string(scale_a) + " and " + std::to_string(scale_b));
  }
}

std::vector<Decoded> decoded(const FloatFormat& f, std::span<const std::uint32_t> bits) {
  std::vector<Decoded> out(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) out[i] = decode(f, bits[i]);
  return out;
}

}  // namespace

std::uint32_t mma_element_decoded(const Datapath& dp, std::span<const Decoded> a,
                                  std::span<const Decoded> b, std::uint32_t c) {
  const FloatingPointScope scope;
  check_lengths(dp, a.size(), b.size(), 0, 0, false);
  return detail::exact_mma_chain(dp, static_cast<std::int64_t>(a.size()), c, [&](std::int64_t p) {
    return detail::Operands{a[p], b[p]};
  });
}

std::uint32_t mma_element_decoded(const Datapath& dp, std::span<const Decoded> a,
                                  std::span<const Decoded> b, std::uint32_t c,
                                  std::span<const Decoded> scale_a,
                                  std::span<const Decoded> scale_b) {
  const FloatingPointScope scope;
  check_lengths(dp, a.size(), b.size(), scale_a.size(), scale_b.size(), true);
  const std::int64_t block = dp.block_scaling.scale_block;
  return detail::exact_mma_chain(dp, static_cast<std::int64_t>(a.size()), c, [&](std::int64_t p) {
    return detail::ScaledOperands{a[p], b[p], scale_a[p / block], scale_b[p / block]};
  });
}

std::uint32_t mma_element(const Datapath& dp, std::span<const std::uint32_t> a,
                          std::span<const std::uint32_t> b, std::uint32_t c) {
  const FloatingPointScope scope;
  check_lengths(dp, a.size(), b.size(), 0, 0, false);
  return mma_element_decoded(dp, decoded(dp.input, a), decoded(dp.b_format(), b), c);
}

std::uint32_t mma_element(const Datapath& dp, std::span<const std::uint32_t> a,
                          std::span<const std::uint32_t> b, std::uint32_t c,
                          std::span<const std::uint32_t> scale_a,
                          std::span<const std::uint32_t> scale_b) {
  const FloatingPointScope scope;
  check_lengths(dp, a.size(), b.size(), scale_a.size(), scale_b.size(), true);
  return mma_element_decoded(dp, decoded(dp.input, a), decoded(dp.b_format(), b), c,
                             decoded(dp.block_scaling.scale_a, scale_a),
                             decoded(dp.block_scaling.scale_b, scale_b));
}

}  // namespace tcemu
