// The words of a case line and its fixed-width hex fields: what the float (case_file.cpp),
// integer (integer_case_file.cpp), fp64 (fp64_case_file.cpp) and sparse (sparse_case.cpp) case
// parsers share.
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

// The value of `word`, which must be exactly `digits` hex digits of format `format_name`, as a
// UInt (std::uint32_t for at most 8 digits, std::uint64_t for at most 16: the value always fits).
// Throws CaseFileError "FIELD 'WORD' must be N hex digit(s) (FORMAT)" or "... is not
// hexadecimal".
template <typename UInt>
UInt parse_hex_bits(std::string_view word, int digits, std::string_view format_name,
                    const std::string& field, std::size_t line) {
  const std::string quoted = field + " '" + printable(word) + "'";
  if (word.size() != static_cast<std::size_t>(digits)) {
    throw CaseFileError(line, quoted + " must be " + std::to_string(digits) +
                                  (digits == 1 ? " hex digit (" : " hex digits (") +
                                  std::string(format_name) + ")");
  }
  UInt value = 0;
  const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value, 16);
  if (error != std::errc() || end != word.data() + word.size()) {
    throw CaseFileError(line, quoted + " is not hexadecimal");
  }
  return value;
}

// parse_hex_bits for the fields of at most 8 digits.
inline std::uint32_t parse_hex_field(std::string_view word, int digits,
                                     std::string_view format_name, const std::string& field,
                                     std::size_t line) {
  return parse_hex_bits<std::uint32_t>(word, digits, format_name, field, line);
}

// K of a case line "K a_0..a_{K-1} b_0..b_{K-1} c [d]" of `words` (its first word, decimal), and
// whether the line has the recorded d. Throws CaseFileError for a K that is not a non-negative
// integer or a line of neither 2K + 2 nor 2K + 3 words.
struct DenseCaseShape {
  std::size_t k;
  bool has_d;
};
inline DenseCaseShape dense_case_shape(const std::vector<std::string_view>& words,
                                       std::size_t line) {
  std::size_t k = 0;
  const std::string_view first = words.front();
  const auto [end, error] = std::from_chars(first.data(), first.data() + first.size(), k, 10);
  if (error != std::errc() || end != first.data() + first.size()) {
    throw CaseFileError(line, "K '" + printable(first) + "' is not a non-negative integer");
  }
  // A K above words.size() / 2 cannot fit (and 2 + 2K could wrap): check it first.
  const bool fits = k <= words.size() / 2;
  const std::size_t expected = fits ? 2 + 2 * k : 0;
  if (!fits || (words.size() != expected && words.size() != expected + 1)) {
    throw CaseFileError(line, "K = " + std::to_string(k) + " needs 2K + 2 fields (K, " +
                                  std::to_string(k) + " a, " + std::to_string(k) +
                                  " b, c) or 2K + 3 with a recorded d, found " +
                                  std::to_string(words.size()));
  }
  return {k, words.size() == expected + 1};
}

}  // namespace tcemu::detail
