#include "traced_block_fma.hpp"

#include <stdexcept>
#include <string>

#include <tcemu/emulator/block_fma.hpp>

namespace tcemu::cli::explain {
namespace {

// round_sum's steps written into a BlockTrace.
struct TraceRecord {
  BlockTrace* trace;
  void special() { trace->special = true; }
  void alignment_exponent(int top) { trace->alignment_exponent = top; }
  void term(const detail::Term& t, std::uint64_t kept, int kept_lsb_exponent) {
    trace->terms.push_back({t.negative, t.significand, t.lsb_exponent, kept, kept_lsb_exponent});
  }
  void sum(bool negative, const ExactMagnitude& magnitude) {
    trace->sum_negative = negative;
    trace->sum = magnitude;
  }
};

}  // namespace

std::uint32_t traced_block_fma(const Datapath& datapath, std::span<const Decoded> a,
                               std::span<const Decoded> b, std::uint32_t c, BlockTrace& trace) {
  trace = {};
  trace.result = block_fma(datapath, a, b, c, TraceRecord{&trace});
  return trace.result;
}

std::uint32_t traced_scaled_block(const Datapath& dp, std::span<const Decoded> a,
                                  std::span<const Decoded> b, std::span<const Decoded> scale_a,
                                  std::span<const Decoded> scale_b, std::uint32_t c,
                                  ScaledBlockTrace& trace) {
  const BlockScaling& rule = dp.block_scaling;
  if (!dp.block_scaled()) {
    throw std::invalid_argument("traced_scaled_block: the datapath takes no scales");
  }
  const std::size_t n = a.size();
  const auto block = static_cast<std::size_t>(rule.scale_block);
  const std::size_t scales = (n + block - 1) / block;
  if (b.size() != n || n > static_cast<std::size_t>(dp.block_terms) || scale_a.size() != scales ||
      scale_b.size() != scales) {
    throw std::invalid_argument("traced_scaled_block: " + std::to_string(n) +
                                " products need b of " + "as many, at most " +
                                std::to_string(dp.block_terms) + ", and " + std::to_string(scales) +
                                " scales of A and of B");
  }
  trace = {};
  // detail::exact_scaled_block's loop, one group at a time so that each term is known by its
  // group: validate() makes group_terms divide scale_block, so a group never straddles a scale.
  detail::TermList list;
  const auto group = static_cast<std::size_t>(rule.group_terms);
  for (std::size_t i = 0; i < n; i += group) {
    const detail::ScalePair pair{scale_a[i / block], scale_b[i / block], rule};
    const std::size_t count = n - i < group ? n - i : group;
    const std::size_t before = list.size();
    if (group == 1) {
      list.add_scaled_product(dp.input, dp.b_format(), a[i], b[i], pair);
    } else {
      list.add_scaled_group(a.data() + i, b.data() + i, static_cast<int>(count), pair);
    }
    trace.groups.push_back(
        {i, count, list.size() > before ? std::optional<std::size_t>(before) : std::nullopt});
  }
  list.add_value(dp.accumulator, decode(dp.accumulator, c));
  const bool exact = !dp.alignment_fraction_bits.has_value();
  trace.block.result = detail::round_sum(dp, list, exact, exact ? 0 : *dp.alignment_fraction_bits,
                                         dp.alignment_floor, dp.block_rounding,
                                         dp.block_result_precision, TraceRecord{&trace.block});
  // A NaN or Inf decided the block before any term was recorded: no group has one.
  if (trace.block.special) {
    for (ScaledBlockTrace::Group& g : trace.groups) g.term = std::nullopt;
  }
  return trace.block.result;
}

}  // namespace tcemu::cli::explain
