#include <tcemu/cases/fp64_case_file.hpp>

#include "case_words.hpp"

namespace tcemu {
namespace {

std::uint64_t parse_hex(std::string_view word, const char* role, std::size_t index,
                        std::size_t line) {
  return detail::parse_hex_bits<std::uint64_t>(word, 16, "fp64",
                                               detail::case_field_name(role, index), line);
}

}  // namespace

std::optional<Fp64MmaCase> parse_fp64_case_line(std::string_view text, std::size_t line) {
  const auto words = detail::split_case_words(text);
  if (words.empty() || words.front().front() == '#') return std::nullopt;
  const auto [k, has_d] = detail::dense_case_shape(words, line);
  Fp64MmaCase c;
  for (std::size_t i = 0; i < k; ++i) c.a.push_back(parse_hex(words[1 + i], "a", i, line));
  for (std::size_t i = 0; i < k; ++i) c.b.push_back(parse_hex(words[1 + k + i], "b", i, line));
  c.c = parse_hex(words[1 + 2 * k], "c", std::string_view::npos, line);
  if (has_d) {
    c.d = parse_hex(words.back(), "d", std::string_view::npos, line);
  }
  return c;
}

std::string fp64_hex(std::uint64_t bits) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (std::size_t i = out.size(); i-- > 0; bits >>= 4) out[i] = kDigits[bits & 0xF];
  return out;
}

std::string format_fp64_case_line(const Fp64MmaCase& c) {
  std::string out = std::to_string(c.a.size());
  for (std::uint64_t x : c.a) out += ' ' + fp64_hex(x);
  for (std::uint64_t x : c.b) out += ' ' + fp64_hex(x);
  out += ' ' + fp64_hex(c.c);
  if (c.d) out += ' ' + fp64_hex(*c.d);
  return out;
}

}  // namespace tcemu
