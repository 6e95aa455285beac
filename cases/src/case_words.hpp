// The words of a case line and its fixed-width hex fields: what the float (case_file.cpp),
// integer (integer_case_file.cpp) and sparse (sparse_case.cpp) case parsers share.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/cases/printable.hpp>

namespace tcemu::detail {

// The words of `text` separated by spaces, tabs or carriage returns (views into `text`).
inline std::vector<std::string_view> split_case_words(std::string_view text) {
  const auto blank = [](char ch) { return ch == ' ' || ch == '\t' || ch == '\r'; };
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && blank(text[i])) ++i;
    const std::size_t start = i;
    while (i < text.size() && !blank(text[i])) ++i;
    if (i > start) words.push_back(text.substr(start, i - start));
  }
  return words;
}

// The name of field `index` of `role` in error messages: "a_3", or "c" when index is npos.
inline std::string case_field_name(std::string_view role, std::size_t index) {
  return std::string(role) + (index == std::string_view::npos ? "" : "_" + std::to_string(index));
}

// The value of `word`, which must be exactly `digits` hex digits of format `format_name`.
// Throws CaseFileError "FIELD 'WORD' must be N hex digit(s) (FORMAT)" or "... is not
// hexadecimal". With digits <= 8 the value fits in 32 bits.
inline std::uint32_t parse_hex_field(std::string_view word, int digits,
                                     std::string_view format_name, const std::string& field,
                                     std::size_t line) {
  const std::string quoted = field + " '" + printable(word) + "'";
  if (word.size() != static_cast<std::size_t>(digits)) {
    throw CaseFileError(line, quoted + " must be " + std::to_string(digits) +
                                  (digits == 1 ? " hex digit (" : " hex digits (") +
                                  std::string(format_name) + ")");
  }
  std::uint32_t value = 0;
  const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value, 16);
  if (error != std::errc() || end != word.data() + word.size()) {
    throw CaseFileError(line, quoted + " is not hexadecimal");
  }
  return value;
}

}  // namespace tcemu::detail
