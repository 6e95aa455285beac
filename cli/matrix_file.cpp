#include "matrix_file.hpp"

#include <bit>
#include <charconv>
#include <fstream>
#include <iomanip>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>

#include <tcemu/emulator/printable.hpp>

#include "input_file.hpp"

namespace tcemu::cli {
namespace {

[[noreturn]] void bad(const std::string& path, std::size_t line, const std::string& what) {
  throw std::runtime_error(path + ":" + std::to_string(line) + ": " + what);
}

bool skipped(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r");
  return first == std::string::npos || text[first] == '#';
}

// A dimension of the 'ROWS COLS' line: decimal digits only (no sign, no '+3' or '-0' tail).
std::optional<std::int64_t> dimension(std::string_view word) {
  std::int64_t v = 0;
  if (word.empty() || word.find_first_not_of("0123456789") != std::string_view::npos) return {};
  const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), v, 10);
  if (error != std::errc() || end != word.data() + word.size()) return {};
  return v;
}

}  // namespace

DenseMatrix read_matrix_file(const std::string& path, Real type) {
  std::ifstream in = open_input(path);
  return read_matrix(in, path, type);
}

DenseMatrix read_matrix(std::istream& in, const std::string& path, Real type) {
  const int digits = type == Real::fp64 ? 16 : 8;
  DenseMatrix m;
  std::vector<double> row_major;  // grows with the rows read, not with the header's claim
  std::string text;
  std::size_t line = 0;
  bool have_shape = false;
  std::int64_t row = 0;
  while (std::getline(in, text)) {
    ++line;
    if (skipped(text)) continue;
    std::istringstream words(text);
    if (!have_shape) {
      std::string rows_word, cols_word, extra;
      const bool two_words =
          static_cast<bool>(words >> rows_word >> cols_word) && !(words >> extra);
      const auto rows = two_words ? dimension(rows_word) : std::nullopt;
      const auto cols = two_words ? dimension(cols_word) : std::nullopt;
      if (!rows || !cols) bad(path, line, "expected 'ROWS COLS', got '" + printable(text) + "'");
      m.rows = *rows;
      m.cols = *cols;
      if (m.rows != 0 && m.cols > std::numeric_limits<std::int64_t>::max() / m.rows) {
        bad(path, line,
            "ROWS x COLS = " + printable(rows_word) + " x " + printable(cols_word) +
                " overflows int64");
      }
      have_shape = true;
      // An R x 0 matrix has no row lines (each would be blank): its rows are all read.
      if (m.cols == 0) row = m.rows;
      continue;
    }
    if (row == m.rows) bad(path, line, "more than " + std::to_string(m.rows) + " rows");
    std::string word;
    std::int64_t col = 0;
    while (words >> word) {
      if (col == m.cols) bad(path, line, "more than " + std::to_string(m.cols) + " columns");
      std::uint64_t bits = 0;
      const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), bits, 16);
      if (static_cast<int>(word.size()) != digits || error != std::errc() ||
          end != word.data() + word.size()) {
        bad(path, line,
            "column " + std::to_string(col + 1) + ": expected " + std::to_string(digits) +
                " hex digits, got '" + printable(word) + "'");
      }
      row_major.push_back(type == Real::fp64 ? std::bit_cast<double>(bits)
                                             : static_cast<double>(std::bit_cast<float>(
                                                   static_cast<std::uint32_t>(bits))));
      ++col;
    }
    if (col != m.cols) {
      bad(path, line, std::to_string(col) + " columns, expected " + std::to_string(m.cols));
    }
    ++row;
  }
  if (!have_shape) bad(path, line, "no 'ROWS COLS' line");
  if (row != m.rows) {
    bad(path, line, std::to_string(row) + " rows, expected " + std::to_string(m.rows));
  }
  m.values.resize(row_major.size());
  // The loops follow the data: an R x 0 header of R = 9e18 has none (a loop over its rows alone
  // never ended in an unoptimised build; found by fuzz/fuzz_matrix_file).
  for (std::int64_t i = 0; !row_major.empty() && i < m.rows; ++i) {
    for (std::int64_t j = 0; j < m.cols; ++j) {
      m.values[static_cast<std::size_t>(j * m.rows + i)] =
          row_major[static_cast<std::size_t>(i * m.cols + j)];
    }
  }
  return m;
}

void write_matrix_file(const std::string& path, const DenseMatrix& m, Real type) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path);
  write_matrix(out, m, type);
  if (!out) throw std::runtime_error("error writing " + path);
}

void write_matrix(std::ostream& out, const DenseMatrix& m, Real type) {
  out << m.rows << ' ' << m.cols << '\n' << std::hex << std::setfill('0');
  // An R x 0 matrix has no row lines (each would be blank, and blank lines are skipped).
  for (std::int64_t i = 0; m.cols > 0 && i < m.rows; ++i) {
    for (std::int64_t j = 0; j < m.cols; ++j) {
      const double v = m.values[static_cast<std::size_t>(j * m.rows + i)];
      if (j > 0) out << ' ';
      if (type == Real::fp64) {
        out << std::setw(16) << std::bit_cast<std::uint64_t>(v);
      } else {
        out << std::setw(8) << std::bit_cast<std::uint32_t>(static_cast<float>(v));
      }
    }
    out << '\n';
  }
}

}  // namespace tcemu::cli
