// The trace of one block FMA that `tcemu explain block` shows: block_fma
// (tcemu/emulator/block_fma.hpp), the same computation, with a recorder of its steps; and of one
// block of a block-scaled datapath for `tcemu explain block-scaled`.
#pragma once

#include <cstddef>
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

// One block of a block-scaled datapath, step by step: its groups of group_terms consecutive
// products (one product each where group_terms is 1), each group's term, then round_sum's steps.
struct ScaledBlockTrace {
  // Group g covers the products first .. first + count - 1 and the scales of scale index
  // first / scale_block. `term` is the index of its term in block.terms, or nullopt where it
  // added none (every product zero, a zero scale) or where a NaN or Inf anywhere decided the block
  // (block.special: round_sum recorded no term).
  struct Group {
    std::size_t first;
    std::size_t count;
    std::optional<std::size_t> term;
  };
  std::vector<Group> groups;
  // The terms are those of the groups, in order, then c where it is finite and nonzero.
  BlockTrace block;
};

// The block of the n = a.size() products a[i] * b[i] (b decoded from datapath.b_format()), the
// scales scale_a[i / scale_block] and scale_b[i / scale_block], and c, through TermList's
// add_scaled_group (add_scaled_product for group_terms 1) and round_sum, recording the steps in
// `trace`; the result is detail::exact_scaled_block's. Throws std::invalid_argument unless the
// datapath is block-scaled, a and b have one length of at most block_terms and there are
// ceil(n / scale_block) scales of each.
std::uint32_t traced_scaled_block(const Datapath& datapath, std::span<const Decoded> a,
                                  std::span<const Decoded> b, std::span<const Decoded> scale_a,
                                  std::span<const Decoded> scale_b, std::uint32_t c,
                                  ScaledBlockTrace& trace);

}  // namespace tcemu::cli::explain
