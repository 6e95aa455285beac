#include "matrix_file.hpp"

#include <bit>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include <tcemu/cases/input_error.hpp>
#include <tcemu/cases/line_reader.hpp>
#include <tcemu/cases/printable.hpp>
#include <tcemu/session/output_file.hpp>

#include "input_file.hpp"
#include "npy_file.hpp"

namespace tcemu::cli {
namespace {

[[noreturn]] void bad(const std::string& path, std::size_t line, const std::string& what) {
  throw InputError(path + ":" + std::to_string(line) + ": " + what);
}

// The longest a row line of `cols` elements of `digits` hex digits may be: the elements with a
// blank after each, and LineReader's bound for the rest (more blanks, a carriage return). So a
// row costs at most a few bytes per element the header promised, which the matrix needs anyway.
std::size_t longest_row(std::int64_t cols, int digits) {
  const auto per_element = static_cast<std::size_t>(digits) + 1;
  const std::size_t most = std::numeric_limits<std::size_t>::max() - LineReader::kLongestLine;
  return static_cast<std::uint64_t>(cols) > most / per_element
             ? std::numeric_limits<std::size_t>::max()
             : static_cast<std::size_t>(cols) * per_element + LineReader::kLongestLine;
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

bool is_npy(const std::string& path) {
  return path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
}

void append(std::vector<unsigned char>& bytes, std::uint64_t bits, int count) {
  for (int b = 0; b < count; ++b) bytes.push_back(static_cast<unsigned char>(bits >> (8 * b)));
}

}  // namespace

ElementType element_type(const FloatFormat& format) {
  const int bits = static_cast<int>(container_bytes(format)) * 8;
  const bool numpy_float =
      format == formats::fp16 || format == formats::fp32 || format == formats::tf32;
  return {std::string(format.name), bits, numpy_float, "", true};
}

ElementType element_type(Real real) {
  // The scheme (tcemu gemm --scheme) gives its element type.
  return real == Real::fp64 ? ElementType{"fp64", 64, true, "--scheme", true}
                            : ElementType{"fp32", 32, true, "--scheme", true};
}

std::uint64_t BitMatrix::get(std::int64_t i, std::int64_t j) const {
  const std::int64_t index = layout == Layout::row_major ? i * cols + j : j * rows + i;
  const unsigned char* p = bytes.data() + static_cast<std::size_t>(index) * type.bytes();
  std::uint64_t bits = 0;
  for (int b = 0; b < type.bytes(); ++b) bits |= std::uint64_t{p[b]} << (8 * b);
  return bits;
}

ConstMatrixView BitMatrix::view(const FloatFormat& format) const {
  const bool row_major = layout == Layout::row_major;
  return {bytes.data(), format, rows, cols, std::max<std::int64_t>(1, row_major ? cols : rows),
          layout};
}

BitMatrix read_bit_matrix_file(const std::string& path, const ElementType& type) {
  std::ifstream in = open_input(path);
  if (is_npy(path)) return read_npy(in, path, type);
  return read_text_matrix(in, path, type);
}

void write_bit_matrix_file(const std::string& path, const BitMatrix& m) {
  session::OutputFile out(path);
  if (is_npy(path)) {
    write_npy(out.stream(), m);
  } else {
    write_text_matrix(out.stream(), m);
  }
  out.close();
}

BitMatrix read_text_matrix(std::istream& in, const std::string& path, const ElementType& type) {
  BitMatrix m;
  m.type = type;
  std::string text;
  std::size_t line = 0;
  bool have_shape = false;
  std::int64_t row = 0;
  LineReader lines(in, path);
  while (lines.next(text)) {
    line = lines.line();
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
      lines.set_longest(longest_row(m.cols, type.hex_digits()));
      // An R x 0 matrix has no row lines (each would be blank): its rows are all read.
      if (m.cols == 0) row = m.rows;
      continue;
    }
    if (row == m.rows) bad(path, line, "more than " + std::to_string(m.rows) + " rows");
    std::string word;
    std::int64_t col = 0;
    // The elements grow with the rows read, not with the header's claim.
    while (words >> word) {
      if (col == m.cols) bad(path, line, "more than " + std::to_string(m.cols) + " columns");
      std::uint64_t bits = 0;
      const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), bits, 16);
      if (static_cast<int>(word.size()) != type.hex_digits() || error != std::errc() ||
          end != word.data() + word.size()) {
        bad(path, line,
            "column " + std::to_string(col + 1) + ": expected " +
                std::to_string(type.hex_digits()) + " hex digits (" + type.name + "), got '" +
                printable(word) + "'");
      }
      append(m.bytes, bits, type.bytes());
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
  return m;
}

void write_text_matrix(std::ostream& out, const BitMatrix& m) {
  out << m.rows << ' ' << m.cols << '\n' << std::hex << std::setfill('0');
  // An R x 0 matrix has no row lines (each would be blank, and blank lines are skipped). The
  // loops follow the data: an R x 0 matrix of R = 9e18 has none (fuzz/fuzz_matrix_file).
  for (std::int64_t i = 0; m.cols > 0 && i < m.rows; ++i) {
    for (std::int64_t j = 0; j < m.cols; ++j) {
      if (j > 0) out << ' ';
      out << std::setw(m.type.hex_digits()) << m.get(i, j);
    }
    out << '\n';
  }
  out << std::dec;
}

DenseMatrix to_dense(const BitMatrix& m) {
  DenseMatrix d{m.rows, m.cols, {}};
  d.values.resize(m.bytes.size() / static_cast<std::size_t>(m.type.bytes()));
  for (std::int64_t j = 0; !d.values.empty() && j < m.cols; ++j) {
    for (std::int64_t i = 0; i < m.rows; ++i) {
      const std::uint64_t bits = m.get(i, j);
      d.values[static_cast<std::size_t>(j * m.rows + i)] =
          m.type.bits == 64
              ? std::bit_cast<double>(bits)
              : static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
    }
  }
  return d;
}

BitMatrix to_bits(const DenseMatrix& d, Real type) {
  BitMatrix m{.type = element_type(type),
              .rows = d.rows,
              .cols = d.cols,
              .layout = Layout::column_major,
              .bytes = {},
              .npy_dtype = {}};
  m.bytes.reserve(d.values.size() * static_cast<std::size_t>(m.type.bytes()));
  for (const double v : d.values) {
    append(m.bytes,
           type == Real::fp64 ? std::bit_cast<std::uint64_t>(v)
                              : std::bit_cast<std::uint32_t>(static_cast<float>(v)),
           m.type.bytes());
  }
  return m;
}

DenseMatrix read_matrix_file(const std::string& path, Real type) {
  return to_dense(read_bit_matrix_file(path, element_type(type)));
}

void write_matrix_file(const std::string& path, const DenseMatrix& m, Real type) {
  write_bit_matrix_file(path, to_bits(m, type));
}

}  // namespace tcemu::cli
