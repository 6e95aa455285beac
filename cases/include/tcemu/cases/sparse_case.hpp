// One output element of a sparse MMA (PTX mma.sp, 2:4 structured sparsity of A): of every group
// of four consecutive k of A's row, two are kept; the case holds the K/2 kept values of A, the
// position (0-3) of each within its group of four (the metadata), all K values of B's column and
// c. The product of a kept a_j uses B's row of its original k = 4 * (j / 2) + index_j, so the
// sparse case is the dense case of K/2 terms (a_j, b_{4 (j / 2) + index_j}): dense_case().
//
// Case file line (`tcemu mma --sparse`, `tcemu probe --instr mma.sp.*`):
//
//   K a_0 ... a_{K/2-1} METADATA b_0 ... b_{K-1} c [d]
//
// K a multiple of 4; a, b, c, d hex bit patterns as in case_file.hpp; METADATA one word of K/2
// digits 0-3, index_0 first, the two digits of each group of four strictly increasing (the
// positions PTX's ordered metadata allows: 01 02 03 12 13 23). tf32 is 1:2 sparse: one kept
// value of each pair of k, i.e. a group of four keeps one of k 0, 1 and one of k 2, 3 (indices
// 02 03 12 13).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/format.hpp>

namespace tcemu {

struct SparseMmaCase {
  std::vector<std::uint32_t> a;     // K/2 kept values
  std::vector<std::uint8_t> index;  // K/2 positions in their group of four, 0-3
  std::vector<std::uint32_t> b;     // K values
  std::uint32_t c = 0;
  std::optional<std::uint32_t> d;  // the recorded result, if the line has one
};

// Throws std::invalid_argument naming the first problem: b.size() not a multiple of 4, a or
// index not b.size() / 2 long, an index above 3, or the two indices of a group not increasing.
void check_sparse_case(const SparseMmaCase& c);

// The same, and for tf32 inputs (1:2 sparsity) one index of each group in 0-1 and one in 2-3.
void check_sparse_case(const SparseMmaCase& c, const FloatFormat& input);

// The dense case of K/2 terms the sparse case computes: a, and B's row of each kept k.
MmaCase dense_case(const SparseMmaCase& c);

// d of one sparse case: the dense case through `kept`, the datapath of the kept products
// (sparse_preset, sparse_presets.hpp); the case's K must be twice its instruction_k.
std::uint32_t sparse_mma_element(const Datapath& kept, const SparseMmaCase& c);

// The case on `text`, or nothing for a blank or comment line; CaseFileError names the line and
// the field that is wrong.
std::optional<SparseMmaCase> parse_sparse_case_line(std::string_view text, std::size_t line,
                                                    const FloatFormat& input,
                                                    const FloatFormat& accumulator);

// The case as a line of the format (the inverse of parse_sparse_case_line).
std::string format_sparse_case_line(const SparseMmaCase& c, const FloatFormat& input,
                                    const FloatFormat& accumulator);

}  // namespace tcemu
