#include "probe_cases.hpp"

namespace tcemu::cli {

std::optional<std::pair<FloatFormat, FloatFormat>> named_pair(const session::Arguments& args) {
  if (!args.value("type") && !args.value("acc")) return std::nullopt;
  const auto input = format_by_name(args.value_or("type", "fp16"));
  const auto acc = format_by_name(args.value_or("acc", "fp32"));
  if (!input || !acc) throw session::UsageError("unknown --type or --acc format");
  return std::pair{*input, *acc};
}

}  // namespace tcemu::cli
