#include <charconv>
#include <sstream>
#include <stdexcept>

#include <tcemu/cases/printable.hpp>
#include <tcemu/cases/sparse_case.hpp>
#include <tcemu/emulator/mma.hpp>

#include "case_words.hpp"

namespace tcemu {
namespace {

std::uint32_t parse_hex(std::string_view word, const FloatFormat& format, const std::string& role,
                        std::size_t line) {
  return detail::parse_hex_field(word, hex_digits(format), format.name, role, line);
}

}  // namespace

void check_sparse_case(const SparseMmaCase& c) {
  const std::size_t k = c.b.size();
  if (k % 4 != 0) {
    throw std::invalid_argument("sparse case: K = " + std::to_string(k) +
                                " is not a multiple of 4");
  }
  if (c.a.size() != k / 2 || c.index.size() != k / 2) {
    throw std::invalid_argument("sparse case: K = " + std::to_string(k) + " needs " +
                                std::to_string(k / 2) + " kept a and indices, found " +
                                std::to_string(c.a.size()) + " and " +
                                std::to_string(c.index.size()));
  }
  for (std::size_t j = 0; j < c.index.size(); ++j) {
    if (c.index[j] > 3) {
      throw std::invalid_argument("sparse case: index_" + std::to_string(j) + " = " +
                                  std::to_string(c.index[j]) + " is not a position 0-3");
    }
    if (j % 2 == 1 && c.index[j - 1] >= c.index[j]) {
      throw std::invalid_argument(
          "sparse case: indices " + std::to_string(c.index[j - 1]) + std::to_string(c.index[j]) +
          " of group " + std::to_string(j / 2) + " are not increasing (01 02 03 12 13 23)");
    }
  }
}

void check_sparse_case(const SparseMmaCase& c, const FloatFormat& input) {
  check_sparse_case(c);
  if (input != formats::tf32) return;
  for (std::size_t j = 0; j + 1 < c.index.size(); j += 2) {
    if (c.index[j] > 1 || c.index[j + 1] < 2) {
      throw std::invalid_argument("sparse case: indices " + std::to_string(c.index[j]) +
                                  std::to_string(c.index[j + 1]) + " of group " +
                                  std::to_string(j / 2) +
                                  " keep no single k of each pair, as tf32's 1:2 sparsity needs "
                                  "(02 03 12 13)");
    }
  }
}

MmaCase dense_case(const SparseMmaCase& c) {
  check_sparse_case(c);
  MmaCase out{.a = c.a, .b = {}, .c = c.c, .d = c.d};
  for (std::size_t j = 0; j < c.a.size(); ++j) out.b.push_back(c.b[4 * (j / 2) + c.index[j]]);
  return out;
}

std::uint32_t sparse_mma_element(const Datapath& kept, const SparseMmaCase& c) {
  if (c.b.size() != 2 * static_cast<std::size_t>(kept.instruction_k)) {
    throw std::invalid_argument(
        "sparse case of K = " + std::to_string(c.b.size()) +
        " for a sparse instruction of K = " + std::to_string(2 * kept.instruction_k));
  }
  const MmaCase dense = dense_case(c);
  return mma_element(kept, dense.a, dense.b, dense.c);
}

std::optional<SparseMmaCase> parse_sparse_case_line(std::string_view text, std::size_t line,
                                                    const FloatFormat& input,
                                                    const FloatFormat& accumulator) {
  const auto words = detail::split_case_words(text);
  if (words.empty() || words.front().front() == '#') return std::nullopt;
  std::size_t k = 0;
  const auto [end, error] =
      std::from_chars(words[0].data(), words[0].data() + words[0].size(), k, 10);
  if (error != std::errc() || end != words[0].data() + words[0].size() || k % 4 != 0 ||
      k > words.size()) {
    throw CaseFileError(
        line, "K '" + printable(words[0]) + "' is not a multiple of 4 that the line can hold");
  }
  // K, K/2 a, the metadata word, K b, c [, d].
  const std::size_t expected = 1 + k / 2 + 1 + k + 1;
  if (words.size() != expected && words.size() != expected + 1) {
    throw CaseFileError(line, "sparse K = " + std::to_string(k) + " needs " +
                                  std::to_string(expected) + " fields (K, " +
                                  std::to_string(k / 2) + " kept a, the metadata, " +
                                  std::to_string(k) + " b, c) or " + std::to_string(expected + 1) +
                                  " with a recorded d, found " + std::to_string(words.size()));
  }
  SparseMmaCase c;
  for (std::size_t j = 0; j < k / 2; ++j) {
    c.a.push_back(parse_hex(words[1 + j], input, "a_" + std::to_string(j), line));
  }
  const std::string_view metadata = words[1 + k / 2];
  if (metadata.size() != k / 2) {
    throw CaseFileError(line, "metadata '" + printable(metadata) + "' must be " +
                                  std::to_string(k / 2) + " digits 0-3 (one per kept a)");
  }
  for (char digit : metadata) {
    if (digit < '0' || digit > '3') {
      throw CaseFileError(line,
                          "metadata '" + printable(metadata) + "' has a digit other than 0-3");
    }
    c.index.push_back(static_cast<std::uint8_t>(digit - '0'));
  }
  for (std::size_t i = 0; i < k; ++i) {
    c.b.push_back(parse_hex(words[2 + k / 2 + i], input, "b_" + std::to_string(i), line));
  }
  c.c = parse_hex(words[2 + k / 2 + k], accumulator, "c", line);
  if (words.size() == expected + 1) c.d = parse_hex(words.back(), accumulator, "d", line);
  try {
    check_sparse_case(c, input);
  } catch (const std::invalid_argument& e) {
    throw CaseFileError(line, e.what());
  }
  return c;
}

std::string format_sparse_case_line(const SparseMmaCase& c, const FloatFormat& input,
                                    const FloatFormat& accumulator) {
  std::ostringstream out;
  out << c.b.size();
  for (std::uint32_t x : c.a) out << ' ' << to_hex(input, x);
  out << ' ';
  for (std::uint8_t i : c.index) out << static_cast<char>('0' + i);
  for (std::uint32_t x : c.b) out << ' ' << to_hex(input, x);
  out << ' ' << to_hex(accumulator, c.c);
  if (c.d) out << ' ' << to_hex(accumulator, *c.d);
  return out.str();
}

}  // namespace tcemu
