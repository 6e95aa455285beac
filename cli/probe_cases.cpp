#include "probe_cases.hpp"

#include <tcemu/emulator/case_generator.hpp>

namespace tcemu::cli {

ProbeCases probe_cases(const Datapath& shape, int k, std::size_t random, std::uint64_t seed) {
  ProbeCases out;
  CaseGenerator generator(shape, seed);
  out.cases.resize(random);
  out.names.resize(random);
  for (MmaCase& c : out.cases) generator.next(c, static_cast<std::size_t>(k));
  for (NamedCase& nc : crafted_cases(shape.input, shape.accumulator, k)) {
    out.cases.push_back(std::move(nc.values));
    out.names.push_back(std::move(nc.name));
  }
  return out;
}

std::optional<std::pair<FloatFormat, FloatFormat>> named_pair(const Arguments& args) {
  if (!args.value("type") && !args.value("acc")) return std::nullopt;
  const auto input = format_by_name(args.value_or("type", "fp16"));
  const auto acc = format_by_name(args.value_or("acc", "fp32"));
  if (!input || !acc) throw UsageError("unknown --type or --acc format");
  return std::pair{*input, *acc};
}

}  // namespace tcemu::cli
