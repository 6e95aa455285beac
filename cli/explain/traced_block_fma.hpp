// The trace of one block FMA that `tcemu explain block` shows: block_fma
// (tcemu/emulator/block_fma.hpp), the same computation, with a recorder of its steps.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu::cli::explain {

// What one block_fma did, step by step.
struct BlockTrace {
  // A finite nonzero term (the exact products in order, then c) before and after the truncation
  // to the alignment grid: (-1)^negative significand 2^lsb_exponent, and what was kept of its
  // magnitude, kept 2^kept_lsb_exponent (the term itself where nothing was dropped).
  struct Term {
    bool negative;
    std::uint64_t significand;
    int lsb_exponent;
    std::uint64_t kept;
    int kept_lsb_exponent;
  };
  std::vector<Term> terms;
  bool special = false;  // NaN or Inf decided before any arithmetic; nothing below is set
  // The largest alignment exponent (raised to the floor); nullopt on an exact datapath.
  std::optional<int> alignment_exponent;
  // The exact sum of the kept terms (zero: significand 0), its 64 leading bits as round_pack
  // receives them.
  bool sum_negative = false;
  ExactMagnitude sum{0, 0, false};
  std::uint32_t result = 0;
};

// block_fma, recording its steps in `trace`.
std::uint32_t traced_block_fma(const Datapath& datapath, std::span<const Decoded> a,
                               std::span<const Decoded> b, std::uint32_t c, BlockTrace& trace);

}  // namespace tcemu::cli::explain
