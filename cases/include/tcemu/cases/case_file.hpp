// The `tcemu mma` case format, one output element of one MMA instruction per line:
//
//   K a_0 ... a_{K-1} b_0 ... b_{K-1} c [d]
//
// every operand a hex bit pattern of its own format without prefix (fp16/bf16: 4 digits, tf32:
// the 8-digit fp32 container, e4m3/e5m2: 2 digits; c: 8 digits for an fp32 accumulator, 4 for
// fp16). The optional d is a result recorded on a GPU (`tcemu probe` writes it, `tcemu validate`
// checks it), in the accumulator format. Blank lines and lines starting with '#' carry no case.
// A result line of `tcemu mma` is the hex bit pattern of d.
//
// On a datapath whose b format differs from a's (Datapath::input_b) the b fields are b's format
// (e2m1: 1 digit, e2m3/e3m2: 2). On a block-scaled datapath (Datapath::block_scaled()) the scales
// follow c, S = ceil(K / scale_block) of A's row and S of B's column, in their scale formats
// (ue8m0, ue4m3: 2 digits), scale j covering k = j * scale_block onwards:
//
//   K a_0 ... a_{K-1} b_0 ... b_{K-1} c sa_0 ... sa_{S-1} sb_0 ... sb_{S-1} [d]
//
// A field must be a bit pattern of its format: a value above its bits (e2m3 '7f', ue4m3 '80') is
// refused, never read modulo the width.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/format.hpp>

namespace tcemu {

struct MmaCase {
  std::vector<std::uint32_t> a;
  std::vector<std::uint32_t> b;
  std::uint32_t c = 0;
  std::optional<std::uint32_t> d;  // the recorded result, if the line has one
  // A block-scaled case's scales (scale_count(datapath, K) each); empty otherwise.
  std::vector<std::uint32_t> scale_a = {};
  std::vector<std::uint32_t> scale_b = {};
};

// A malformed line: what() reads "line N: <what is wrong>".
class CaseFileError : public std::runtime_error {
 public:
  CaseFileError(std::size_t line, const std::string& what)
      : std::runtime_error("line " + std::to_string(line) + ": " + what), line_(line) {}
  std::size_t line() const { return line_; }

 private:
  std::size_t line_;
};

// The case on `text` (line number `line` for messages), or nothing for a blank or comment line.
std::optional<MmaCase> parse_case_line(std::string_view text, std::size_t line,
                                       const FloatFormat& input, const FloatFormat& accumulator);
// The same in the datapath's formats: b in datapath.b_format(), and the scales of a block-scaled
// datapath after c (a wrong count of scales is a CaseFileError naming the count expected).
std::optional<MmaCase> parse_case_line(std::string_view text, std::size_t line,
                                       const Datapath& datapath);

// d of the case on the datapath: mma_element with the case's scales on a block-scaled datapath
// (throws std::invalid_argument as mma_element does).
std::uint32_t mma_case_element(const Datapath& datapath, const MmaCase& c);

// `bits` as the exact number of hex digits of `format`, lower case.
std::string to_hex(const FloatFormat& format, std::uint32_t bits);

// The case as a line of the format (the inverse of parse_case_line).
std::string format_case_line(const MmaCase& c, const FloatFormat& input,
                             const FloatFormat& accumulator);
std::string format_case_line(const MmaCase& c, const Datapath& datapath);

}  // namespace tcemu
