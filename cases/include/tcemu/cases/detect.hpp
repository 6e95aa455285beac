// Inferring a datapath from recorded results: the search behind `tcemu detect`.
//
// Given cases with the results a GPU produced (d set), fit_datapath searches the datapath fields
// one at a time (block size, k grouping, alignment bits, alignment floor, block rounding, result
// precision, how c enters, zero sign, overflow), keeping for each the value that reproduces the
// most results, until a whole pass changes nothing. Random cases pin the alignment bits, the
// rounding and the precision; the crafted cases of crafted_cases() pin the block size, the
// floor and the special-value rules. The NaN bits are the most frequent NaN among the results. A
// field whose candidates tie is reported as undetermined.
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

// Every case must carry its recorded d and have K == start.instruction_k.
DatapathFit fit_datapath(const Datapath& start, std::span<const MmaCase> cases);

}  // namespace tcemu
