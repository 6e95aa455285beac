// The fused block operation of a Tensor Core: sum_i a_i * b_i + c in one step (datapath.hpp), on
// the host; its arithmetic is exact_block.hpp's, which the GPU runs too.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/exact_block.hpp>

namespace tcemu {

// One block: a and b decoded from datapath.input (same length, at most kMaxBlockTerms), c the bits
// of the accumulator format. Returns the block result in the accumulator format.
std::uint32_t block_fma(const Datapath& datapath, std::span<const Decoded> a,
                        std::span<const Decoded> b, std::uint32_t c);

// What one block_fma did, for `tcemu explain block`: the same computation, step by step.
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
std::uint32_t block_fma(const Datapath& datapath, std::span<const Decoded> a,
                        std::span<const Decoded> b, std::uint32_t c, BlockTrace& trace);

// x + y in the accumulator format: the exact sum rounded once to nearest even, with the
// datapath's NaN bits, zero sign and overflow rule. Used where c enters after the blocks.
std::uint32_t accumulator_add(const Datapath& datapath, std::uint32_t x, std::uint32_t y);

}  // namespace tcemu
