// Inferring a datapath from recorded results: the search behind `tcemu detect`.
//
// Given cases with the results a GPU produced (d set), fit_datapath searches the datapath fields
// one at a time (block size, k grouping, alignment bits, alignment floor, block rounding, result
// precision, how c enters, zero sign, overflow; on a block-scaled datapath also the exact group
// size G and the NaN-scale rule, with F up to 40 bits and every floor from -170 to -100, the
// exponent a zero product or scale takes), keeping for each the value that reproduces the most
// results, until a whole pass changes nothing. Random cases pin the alignment bits, the rounding
// and the precision; the crafted cases of crafted_cases() (or, block-scaled, the cancelling and
// extreme-scale cases of mmasim_evidence.hpp) pin the block size, G, the floor and the
// special-value rules. The NaN bits are the most frequent NaN among the results. A field whose
// candidates tie is reported as undetermined. The inputs' layout (the formats of A and B, the
// scale block and the scale formats) is the instruction's, given, never searched.
#pragma once

#include <span>
#include <string>
#include <vector>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/emulator/datapath.hpp>

namespace tcemu {

struct DatapathFit {
  Datapath datapath;
  std::size_t cases = 0;
  std::size_t mismatches = 0;             // of `datapath` on the cases
  std::vector<std::string> undetermined;  // fields the cases do not decide
};

// The neutral starting point of the search: one block per instruction of k terms, 24 alignment
// bits, floor -126, RZ (fp32) or RN (fp16) blocks, c aligned, IEEE zeros, overflow to Inf.
Datapath baseline_datapath(const FloatFormat& input, const FloatFormat& accumulator, int k);
// The same with the inputs' layout of `inputs`: B's format (input_b) and, block-scaled, the scale
// block and the scale formats; G starts at 1 and NaN scales poison.
Datapath baseline_datapath(const Datapath& inputs, int k);

// Every case must carry its recorded d and have K == start.instruction_k, and on a block-scaled
// `start` scale_count(start, K) scales of A and of B.
DatapathFit fit_datapath(const Datapath& start, std::span<const MmaCase> cases);

}  // namespace tcemu
