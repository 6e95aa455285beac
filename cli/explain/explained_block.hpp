// What `tcemu explain block` and `tcemu explain block-scaled` show alike of a traced block
// (traced_block_fma.hpp): values of a format, and the block's terms, the exact sum of what was
// kept and its one rounding into d.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/decode.hpp>

#include "document.hpp"
#include "traced_block_fma.hpp"

namespace tcemu::cli::explain {

// x as a Binary (zero and finite values; Inf and NaN as a zero significand).
Binary binary_of(const Decoded& x);
// Zero or finite.
bool is_number(const Decoded& x);
// The value of `bits` in `f`: its decimal, "NaN", "Inf" or "-Inf".
std::string value_text(const FloatFormat& f, std::uint32_t bits);

// The rows of an explained block, the same in both topics: each term before and after its
// truncation to the grid 2^grid (the bits below it marked; nullopt: exact alignment), labelled by
// `labels` ("term" past them), the exact sum of the kept terms (its bits below the result's
// precision marked) and d (where the rounding overflowed, a paragraph saying so instead); then why
// d is that sum rounded once (the datapath's block_rounding to block_result_precision bits), and c
// entering after the block where it does.
void explain_terms_and_rounding(Document& d, const Datapath& dp, const BlockTrace& trace,
                                const std::vector<std::string>& labels, std::optional<int> grid,
                                std::uint32_t result);

}  // namespace tcemu::cli::explain
