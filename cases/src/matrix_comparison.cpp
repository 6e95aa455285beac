#include <tcemu/cases/matrix_comparison.hpp>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <stdexcept>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/decode.hpp>

namespace tcemu {
namespace {

bool is_nan(const FloatFormat& f, std::uint32_t bits) {
  return decode(f, bits).value_class == ValueClass::nan;
}

// The place of a non-NaN pattern in value order: storage bits <= 32, so the magnitude fits 31
// bits and the signed ordinal an int64 without overflow.
std::int64_t ordinal(const FloatFormat& f, std::uint32_t bits) {
  const std::uint32_t storage = (bits >> f.padding_bits) & ((f.sign_mask() << 1) - 1);
  const auto magnitude = static_cast<std::int64_t>(storage & (f.sign_mask() - 1));
  return (storage & f.sign_mask()) != 0 ? -magnitude : magnitude;
}

// The value with as many significant digits as round-trip the format's precision.
std::string value_text(const FloatFormat& f, std::uint32_t bits) {
  const int digits = (f.fraction_bits + 1) * 30103 / 100000 + 2;
  char text[400];  // %g of a double never needs more
  std::snprintf(text, sizeof text, "%.*g", digits, to_double(f, bits));
  return text;
}

std::string bucket_name(int width) {
  if (width == 0) return "0 (sign of zero)";
  if (width == 1) return "1";
  const std::uint64_t low = std::uint64_t{1} << (width - 1);
  return std::to_string(low) + "-" + std::to_string(low + (low - 1));
}

}  // namespace

std::optional<std::uint64_t> ulp_distance(const FloatFormat& f, std::uint32_t a, std::uint32_t b) {
  if (is_nan(f, a) || is_nan(f, b)) return std::nullopt;
  const std::int64_t d = ordinal(f, a) - ordinal(f, b);
  return static_cast<std::uint64_t>(d < 0 ? -d : d);
}

MatrixComparison compare_matrices(ConstMatrixView expected, ConstMatrixView got,
                                  std::int64_t listed) {
  if (expected.rows != got.rows || expected.cols != got.cols) {
    throw std::invalid_argument("compare_matrices: expected is " + std::to_string(expected.rows) +
                                " x " + std::to_string(expected.cols) + ", got is " +
                                std::to_string(got.rows) + " x " + std::to_string(got.cols));
  }
  if (!(expected.format == got.format)) {
    throw std::invalid_argument("compare_matrices: expected holds " +
                                std::string(expected.format.name) + ", got holds " +
                                std::string(got.format.name));
  }
  MatrixComparison result;
  result.format = got.format;
  result.rows = got.rows;
  result.cols = got.cols;
  for (std::int64_t i = 0; i < got.rows; ++i) {
    for (std::int64_t j = 0; j < got.cols; ++j) {
      const std::uint32_t e = expected.get(i, j);
      const std::uint32_t g = got.get(i, j);
      if (e == g) continue;
      ++result.differing;
      const auto ulps = ulp_distance(got.format, e, g);
      if (ulps) {
        result.max_ulps = std::max(result.max_ulps, *ulps);
        ++result.ulp_histogram[static_cast<std::size_t>(std::bit_width(*ulps))];
      } else {
        ++result.nan_involved;
      }
      if (std::ssize(result.first) < listed) result.first.push_back({i, j, e, g, ulps});
    }
  }
  return result;
}

std::string format_comparison(
    const MatrixComparison& c,
    const std::function<std::string(std::int64_t row, std::int64_t col)>& inputs) {
  char share[32];
  std::snprintf(share, sizeof share, "%.3g%%", 100.0 * c.share());
  std::string text = std::to_string(c.differing) + " of " + std::to_string(c.rows * c.cols) +
                     " elements (" + std::to_string(c.rows) + " x " + std::to_string(c.cols) +
                     ", " + std::string(c.format.name) + ") differ";
  if (c.differing == 0) return text + "\n";
  text += " (" + std::string(share) + ")";
  if (c.differing > c.nan_involved)
    text += "; max distance " + std::to_string(c.max_ulps) + " ulps";
  if (c.nan_involved > 0) text += "; " + std::to_string(c.nan_involved) + " with a NaN";
  text += '\n';
  for (std::size_t w = 0; w < c.ulp_histogram.size(); ++w) {
    if (c.ulp_histogram[w] == 0) continue;
    text += "  ulps " + bucket_name(static_cast<int>(w)) + ": " +
            std::to_string(c.ulp_histogram[w]) + '\n';
  }
  for (const DifferingElement& d : c.first) {
    const std::string at = "  (" + std::to_string(d.row) + ", " + std::to_string(d.col) + "): ";
    text += at + "expected 0x" + to_hex(c.format, d.expected) + " (" +
            value_text(c.format, d.expected) + "), got 0x" + to_hex(c.format, d.got) + " (" +
            value_text(c.format, d.got) + "), " +
            (d.ulps ? std::to_string(*d.ulps) + (*d.ulps == 1 ? " ulp" : " ulps") : "NaN") + '\n';
    if (inputs) text += std::string(at.size(), ' ') + "inputs " + inputs(d.row, d.col) + '\n';
  }
  if (std::ssize(c.first) < c.differing) {
    text += "  ... " + std::to_string(c.differing - std::ssize(c.first)) + " more\n";
  }
  return text;
}

}  // namespace tcemu
