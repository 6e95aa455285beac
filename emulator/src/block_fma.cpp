#include <stdexcept>
#include <string>

#include <tcemu/emulator/block_fma.hpp>
#include <tcemu/emulator/exact_block.hpp>

namespace tcemu {
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

void check_lengths(std::span<const Decoded> a, std::span<const Decoded> b) {
  if (a.size() != b.size() || a.size() > static_cast<std::size_t>(kMaxBlockTerms)) {
    throw std::invalid_argument("block_fma: a and b must have the same length, at most " +
                                std::to_string(kMaxBlockTerms));
  }
}

}  // namespace

std::uint32_t block_fma(const Datapath& dp, std::span<const Decoded> a, std::span<const Decoded> b,
                        std::uint32_t c) {
  check_lengths(a, b);
  return detail::exact_block(dp, a.data(), b.data(), a.size(), c);
}

std::uint32_t block_fma(const Datapath& dp, std::span<const Decoded> a, std::span<const Decoded> b,
                        std::uint32_t c, BlockTrace& trace) {
  check_lengths(a, b);
  trace = {};
  trace.result = detail::exact_block(dp, a.data(), b.data(), a.size(), c, TraceRecord{&trace});
  return trace.result;
}

std::uint32_t accumulator_add(const Datapath& dp, std::uint32_t x, std::uint32_t y) {
  return detail::exact_accumulator_add(dp, x, y);
}

}  // namespace tcemu
