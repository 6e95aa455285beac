// libFuzzer target: the case-file parser (tcemu/cases/case_file.hpp).
//
// Input: one byte choosing the input and accumulator formats, then the text of a case file.
// Every line goes through parse_case_line; a malformed line (CaseFileError, a std::runtime_error)
// is a normal outcome. A line that parses must survive the round trip through
// format_case_line: parsing the formatted line gives the same case, bit for bit.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/emulator/format.hpp>

#include "text_lines.hpp"

namespace {

constexpr tcemu::FloatFormat kInputs[] = {tcemu::formats::fp16, tcemu::formats::bf16,
                                          tcemu::formats::tf32, tcemu::formats::e4m3,
                                          tcemu::formats::e5m2, tcemu::formats::fp32};
constexpr tcemu::FloatFormat kAccumulators[] = {tcemu::formats::fp32, tcemu::formats::fp16};

bool same(const tcemu::MmaCase& x, const tcemu::MmaCase& y) {
  return x.a == y.a && x.b == y.b && x.c == y.c && x.d == y.d;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const tcemu::FloatFormat& input = kInputs[data[0] % std::size(kInputs)];
  const tcemu::FloatFormat& accumulator = kAccumulators[(data[0] / 8) % 2];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  tcemu_fuzz::for_each_line(text, [&](std::size_t line, std::string_view one) {
    std::optional<tcemu::MmaCase> parsed;
    try {
      parsed = tcemu::parse_case_line(one, line, input, accumulator);
    } catch (const std::runtime_error&) {
      return;  // CaseFileError: a malformed line, reported with its number
    } catch (const std::invalid_argument&) {
      return;
    }
    if (!parsed) return;
    const std::string again = tcemu::format_case_line(*parsed, input, accumulator);
    const auto reparsed = tcemu::parse_case_line(again, line, input, accumulator);
    if (!reparsed || !same(*parsed, *reparsed)) {
      std::fprintf(stderr, "case-file round trip differs (%.*s, %.*s): line '%.*s' -> '%s'\n",
                   static_cast<int>(input.name.size()), input.name.data(),
                   static_cast<int>(accumulator.name.size()), accumulator.name.data(),
                   static_cast<int>(one.size()), one.data(), again.c_str());
      std::abort();
    }
  });
  return 0;
}
