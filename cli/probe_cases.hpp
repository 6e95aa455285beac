// The cases `tcemu probe` and `tcemu detect` run on a GPU: random cases from CaseGenerator, then
// the crafted cases, all of one instruction's K.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <tcemu/emulator/case_file.hpp>
#include <tcemu/emulator/datapath.hpp>

#include "arguments.hpp"

namespace tcemu::cli {

// `random` generated cases then every crafted one; names[i] is the crafted name or "".
struct ProbeCases {
  std::vector<MmaCase> cases;
  std::vector<std::string> names;
};
ProbeCases probe_cases(const Datapath& shape, int k, std::size_t random, std::uint64_t seed);

// The one (input, accumulator) pair named by --type/--acc (defaults fp16, fp32), or nothing when
// neither is given. Throws UsageError for an unknown format.
std::optional<std::pair<FloatFormat, FloatFormat>> named_pair(const Arguments& args);

}  // namespace tcemu::cli
