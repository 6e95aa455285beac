// The formats `tcemu probe` and `tcemu detect` probe (the cases they run are tcemu::cases'
// probe_cases, tcemu/cases/case_generator.hpp).
#pragma once

#include <optional>
#include <utility>

#include <tcemu/emulator/format.hpp>
#include <tcemu/session/arguments.hpp>

namespace tcemu::cli {

// The one (input, accumulator) pair named by --type/--acc (defaults fp16, fp32), or nothing when
// neither is given. Throws UsageError for an unknown format.
std::optional<std::pair<FloatFormat, FloatFormat>> named_pair(const session::Arguments& args);

}  // namespace tcemu::cli
