#include <charconv>
#include <limits>
#include <sstream>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/cases/printable.hpp>

#include "case_words.hpp"

namespace tcemu {
namespace {

std::uint32_t parse_hex(std::string_view word, const FloatFormat& format, const char* role,
                        std::size_t index, std::size_t line) {
  return detail::parse_hex_field(word, hex_digits(format), format.name,
                                 detail::case_field_name(role, index), line);
}

}  // namespace

std::optional<MmaCase> parse_case_line(std::string_view text, std::size_t line,
                                       const FloatFormat& input, const FloatFormat& accumulator) {
  const auto words = detail::split_case_words(text);
  if (words.empty() || words.front().front() == '#') return std::nullopt;
  std::size_t k = 0;
  const auto [end, error] =
      std::from_chars(words[0].data(), words[0].data() + words[0].size(), k, 10);
  if (error != std::errc() || end != words[0].data() + words[0].size()) {
    throw CaseFileError(line, "K '" + printable(words[0]) + "' is not a non-negative integer");
  }
  // A K above words.size() / 2 cannot fit, and 2 + 2K would wrap for K near 2^63: check it first.
  const bool fits = k <= words.size() / 2;
  const std::size_t expected = fits ? 2 + 2 * k : 0;
  if (!fits || (words.size() != expected && words.size() != expected + 1)) {
    const bool small = k <= (std::numeric_limits<std::size_t>::max() - 3) / 2;
    throw CaseFileError(line, "K = " + std::to_string(k) + " needs " +
                                  (small ? std::to_string(2 + 2 * k) : "2K + 2") + " fields (K, " +
                                  std::to_string(k) + " a, " + std::to_string(k) + " b, c) or " +
                                  (small ? std::to_string(3 + 2 * k) : "2K + 3") +
                                  " with a recorded d, found " + std::to_string(words.size()));
  }
  MmaCase c;
  for (std::size_t i = 0; i < k; ++i) c.a.push_back(parse_hex(words[1 + i], input, "a", i, line));
  for (std::size_t i = 0; i < k; ++i) {
    c.b.push_back(parse_hex(words[1 + k + i], input, "b", i, line));
  }
  c.c = parse_hex(words[1 + 2 * k], accumulator, "c", std::string_view::npos, line);
  if (words.size() == expected + 1) {
    c.d = parse_hex(words.back(), accumulator, "d", std::string_view::npos, line);
  }
  return c;
}

std::string to_hex(const FloatFormat& format, std::uint32_t bits) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(static_cast<std::size_t>(hex_digits(format)), '0');
  for (std::size_t i = out.size(); i-- > 0; bits >>= 4) out[i] = kDigits[bits & 0xF];
  return out;
}

std::string format_case_line(const MmaCase& c, const FloatFormat& input,
                             const FloatFormat& accumulator) {
  std::ostringstream out;
  out << c.a.size();
  for (std::uint32_t x : c.a) out << ' ' << to_hex(input, x);
  for (std::uint32_t x : c.b) out << ' ' << to_hex(input, x);
  out << ' ' << to_hex(accumulator, c.c);
  if (c.d) out << ' ' << to_hex(accumulator, *c.d);
  return out.str();
}

}  // namespace tcemu
