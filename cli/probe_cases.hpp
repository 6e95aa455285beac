// The cases `tcemu probe` and `tcemu detect` run on a GPU: random cases from CaseGenerator, then
// the crafted cases, all of one instruction's K.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <tcemu/emulator/case_file.hpp>
#include <tcemu/emulator/datapath.hpp>

namespace tcemu::cli {

// `random` generated cases then every crafted one; names[i] is the crafted name or "".
struct ProbeCases {
  std::vector<MmaCase> cases;
  std::vector<std::string> names;
};
ProbeCases probe_cases(const Datapath& shape, int k, std::size_t random, std::uint64_t seed);

// The (input, accumulator) pairs mma.sync offers on a GPU of this compute capability (x10).
std::vector<std::pair<FloatFormat, FloatFormat>> mma_sync_pairs(int compute_capability);

}  // namespace tcemu::cli
