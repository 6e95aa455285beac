// The `tcemu mma` case format for integer MMA, one output element per line as for the float
// formats (case_file.hpp):
//
//   K a_0 ... a_{K-1} b_0 ... b_{K-1} c [d]
//
// every operand the two's complement bit pattern of its format in hex without prefix: 2 digits
// per s8/u8 operand, 1 per s4/u4 operand, 8 for c and d (s32). Blank lines and lines starting
// with '#' carry no case. Malformed lines throw CaseFileError (case_file.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/emulator/integer_mma.hpp>

namespace tcemu {

struct IntegerMmaCase {
  std::vector<std::int32_t> a;  // values of the a format
  std::vector<std::int32_t> b;  // values of the b format
  std::int32_t c = 0;
  std::optional<std::int32_t> d;  // the recorded result, if the line has one
};

// The case on `text`, or nothing for a blank or comment line. Operands are read in a_format and
// b_format; a word of the wrong number of digits or not hexadecimal is a CaseFileError naming it.
std::optional<IntegerMmaCase> parse_integer_case_line(std::string_view text, std::size_t line,
                                                      const IntegerFormat& a_format,
                                                      const IntegerFormat& b_format);

// `value` as the hex digits of its format (s4 -1: "f", s8 -1: "ff", s32 -1: "ffffffff").
std::string to_hex(const IntegerFormat& format, std::int64_t value);

// The case as a line (the inverse of parse_integer_case_line).
std::string format_integer_case_line(const IntegerMmaCase& c, const IntegerFormat& a_format,
                                     const IntegerFormat& b_format);

}  // namespace tcemu
