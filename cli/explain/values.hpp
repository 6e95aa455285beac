// The numbers a topic of `tcemu explain` reads. One convention for every topic: a value is a
// decimal ("0.1", "-2.5e-3"), a C hex float ("0x1.8p-3") or a bit pattern "bits:HEX" in the
// format the topic works in (binary64 for twosum, twoprod, dot2 and long-accumulator; fp32 for
// markidis; the datapath's input format for block's a and b, its accumulator format for c).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <tcemu/emulator/format.hpp>

namespace tcemu::cli::explain {

// A binary64 value; `what` names it in the UsageError for a malformed word.
double number(const std::string& what, const std::string& word);
// The values of a comma- or space-separated list.
std::vector<double> numbers(const std::string& what, const std::string& text);
// A value of `format` as its bits: a number rounded to nearest even (round_pack; NaN and Inf as
// the format encodes them), or the bits.
std::uint32_t value_bits(const std::string& what, const std::string& word,
                         const FloatFormat& format);
std::vector<std::uint32_t> values_bits(const std::string& what, const std::string& text,
                                       const FloatFormat& format);

}  // namespace tcemu::cli::explain
