#include <tcemu/cases/integer_case_file.hpp>

#include "case_words.hpp"

namespace tcemu {
namespace {

std::int32_t parse_hex(std::string_view word, const IntegerFormat& format, const char* role,
                       std::size_t index, std::size_t line) {
  const std::uint32_t bits = detail::parse_hex_field(word, hex_digits(format), format.name,
                                                     detail::case_field_name(role, index), line);
  return integer_from_bits(format, bits);  // the digit count keeps bits inside the format
}

}  // namespace

std::optional<IntegerMmaCase> parse_integer_case_line(std::string_view text, std::size_t line,
                                                      const IntegerFormat& a_format,
                                                      const IntegerFormat& b_format) {
  const auto words = detail::split_case_words(text);
  if (words.empty() || words.front().front() == '#') return std::nullopt;
  const auto [k, has_d] = detail::dense_case_shape(words, line);
  IntegerMmaCase c;
  for (std::size_t i = 0; i < k; ++i)
    c.a.push_back(parse_hex(words[1 + i], a_format, "a", i, line));
  for (std::size_t i = 0; i < k; ++i) {
    c.b.push_back(parse_hex(words[1 + k + i], b_format, "b", i, line));
  }
  c.c = parse_hex(words[1 + 2 * k], integer_formats::s32, "c", std::string_view::npos, line);
  if (has_d) {
    c.d = parse_hex(words.back(), integer_formats::s32, "d", std::string_view::npos, line);
  }
  return c;
}

std::string to_hex(const IntegerFormat& format, std::int64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::uint32_t bits = integer_to_bits(format, value);
  std::string out(static_cast<std::size_t>(hex_digits(format)), '0');
  for (std::size_t i = out.size(); i-- > 0; bits >>= 4) out[i] = kDigits[bits & 0xF];
  return out;
}

std::string format_integer_case_line(const IntegerMmaCase& c, const IntegerFormat& a_format,
                                     const IntegerFormat& b_format) {
  std::string out = std::to_string(c.a.size());
  for (std::int32_t x : c.a) out += ' ' + to_hex(a_format, x);
  for (std::int32_t x : c.b) out += ' ' + to_hex(b_format, x);
  out += ' ' + to_hex(integer_formats::s32, c.c);
  if (c.d) out += ' ' + to_hex(integer_formats::s32, *c.d);
  return out;
}

}  // namespace tcemu
