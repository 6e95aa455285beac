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

std::vector<std::pair<FloatFormat, FloatFormat>> mma_sync_pairs(int compute_capability) {
  std::vector<std::pair<FloatFormat, FloatFormat>> pairs = {{formats::fp16, formats::fp32},
                                                            {formats::fp16, formats::fp16},
                                                            {formats::bf16, formats::fp32},
                                                            {formats::tf32, formats::fp32}};
  if (compute_capability >= 89) {
    for (const FloatFormat& f8 : {formats::e4m3, formats::e5m2}) {
      pairs.emplace_back(f8, formats::fp32);
      pairs.emplace_back(f8, formats::fp16);
    }
  }
  return pairs;
}

}  // namespace tcemu::cli
