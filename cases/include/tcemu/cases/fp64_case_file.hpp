// The `tcemu mma` case format for fp64 MMA (DMMA), one output element per line as for the other
// formats (case_file.hpp):
//
//   K a_0 ... a_{K-1} b_0 ... b_{K-1} c [d]
//
// every operand, c and d the binary64 bit pattern in 16 hex digits without prefix. Blank lines and
// lines starting with '#' carry no case. Malformed lines throw CaseFileError (case_file.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tcemu/cases/case_file.hpp>

namespace tcemu {

struct Fp64MmaCase {
  std::vector<std::uint64_t> a;  // binary64 bit patterns
  std::vector<std::uint64_t> b;
  std::uint64_t c = 0;
  std::optional<std::uint64_t> d;  // the recorded result, if the line has one
};

// The case on `text`, or nothing for a blank or comment line. A word that is not 16 hex digits
// is a CaseFileError naming it ("a_0 '3ff0' must be 16 hex digits (fp64)").
std::optional<Fp64MmaCase> parse_fp64_case_line(std::string_view text, std::size_t line);

// `bits` as 16 hex digits.
std::string fp64_hex(std::uint64_t bits);

// The case as a line (the inverse of parse_fp64_case_line).
std::string format_fp64_case_line(const Fp64MmaCase& c);

}  // namespace tcemu
