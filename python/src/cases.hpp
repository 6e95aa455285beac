// MMA cases (tcemu/cases/case_file.hpp MmaCase) between arrays and the libraries (the cases
// probe() and detect_gpu() run are tcemu::cases' probe_cases, case_generator.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/cases/sparse_case.hpp>
#include <tcemu/emulator/datapath.hpp>

#include "arrays.hpp"

namespace tcemu::python {

// Cases from a [cases, K] of `input`, b [cases, K] of `input_b` and c [cases] (and d [cases],
// recorded results, unless None) of `accumulator`. ValueError for shapes that do not agree.
std::vector<MmaCase> cases_from(nb::handle a, nb::handle b, nb::handle c, nb::handle d,
                                const FloatFormat& input, const FloatFormat& input_b,
                                const FloatFormat& accumulator);

// A dict of the cases as unsigned bit-pattern arrays: a, b [cases, K], c [cases], and d [cases]
// from `d`.
nb::dict cases_to(const std::vector<MmaCase>& cases, const std::vector<std::uint32_t>& d,
                  const FloatFormat& input, const FloatFormat& accumulator);

// The same in the datapath's formats: b in datapath.b_format() and, on a block-scaled datapath,
// scale_a and scale_b [cases, S] in their scale formats (S scales of each case).
nb::dict cases_to(const std::vector<MmaCase>& cases, const std::vector<std::uint32_t>& d,
                  const Datapath& datapath);

// The same for sparse cases with their results d: a [cases, K/2] (the kept values), index
// [cases, K/2] (uint8: each kept value's position in its group of four), b [cases, K], c, d
// [cases].
nb::dict sparse_cases_to(const std::vector<SparseMmaCase>& cases, const FloatFormat& input,
                         const FloatFormat& accumulator);

}  // namespace tcemu::python
