// MMA cases (tcemu/emulator/case_file.hpp MmaCase) between arrays and the libraries, and the
// cases probe() and detect_gpu() run on a GPU, as `tcemu probe` and `tcemu detect` do.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <tcemu/emulator/case_file.hpp>
#include <tcemu/emulator/datapath.hpp>

#include "arrays.hpp"

namespace tcemu::python {

// `random` cases of CaseGenerator, then every crafted case, all of K terms; names[i] is the
// crafted case's name, "" for a random one.
struct ProbeCases {
  std::vector<MmaCase> cases;
  std::vector<std::string> names;
};
ProbeCases probe_cases(const Datapath& shape, int k, std::size_t random, std::uint64_t seed);

// Cases from a, b [cases, K] of `input` and c [cases] (and d [cases], recorded results, unless
// None) of `accumulator`. ValueError for shapes that do not agree.
std::vector<MmaCase> cases_from(nb::handle a, nb::handle b, nb::handle c, nb::handle d,
                                const FloatFormat& input, const FloatFormat& accumulator);

// A dict of the cases as unsigned bit-pattern arrays: a, b [cases, K], c [cases], and d [cases]
// from `d`.
nb::dict cases_to(const std::vector<MmaCase>& cases, const std::vector<std::uint32_t>& d,
                  const FloatFormat& input, const FloatFormat& accumulator);

}  // namespace tcemu::python
