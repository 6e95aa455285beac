// libFuzzer target: the bounded line reader every text input goes through
// (cases/include/tcemu/cases/line_reader.hpp).
//
// Input: byte 0 gives the bound (1 to 256 bytes); the rest is the text. Properties: the lines
// read are std::getline's lines of the text, in order, each at most the bound, with their
// numbers; the reader refuses the text exactly when one of those lines is longer than the bound,
// naming that line first.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include <tcemu/cases/input_error.hpp>
#include <tcemu/cases/line_reader.hpp>

namespace {

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "line reader: %s\n", what.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t bound = std::size_t{data[0]} + 1;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  // The reference: std::getline's lines, and the first one over the bound.
  std::vector<std::string> expected;
  std::size_t first_long = 0;
  {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      expected.push_back(line);
      if (first_long == 0 && line.size() > bound) first_long = expected.size();
    }
  }
  std::istringstream in(text);
  tcemu::LineReader reader(in, "fuzz", bound);
  std::vector<std::string> lines;
  try {
    for (std::string line; reader.next(line);) {
      lines.push_back(line);
      if (reader.line() != lines.size()) finding("a line number is off");
      if (line.size() > bound) finding("a line over the bound was returned");
    }
  } catch (const tcemu::InputError& e) {
    const std::string prefix = "fuzz:" + std::to_string(first_long) + ": line longer than";
    if (first_long == 0) finding(std::string("refused a text without a long line: ") + e.what());
    if (!std::string(e.what()).starts_with(prefix)) finding(std::string("refusal: ") + e.what());
    if (lines.size() != first_long - 1) finding("refused at another line");
    return 0;
  }
  if (first_long != 0) finding("a line over the bound was not refused");
  if (lines != expected) finding("the lines are not std::getline's");
  return 0;
}
