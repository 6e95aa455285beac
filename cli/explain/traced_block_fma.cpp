#include "traced_block_fma.hpp"

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

}  // namespace tcemu::cli::explain
