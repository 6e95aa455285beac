#include <tcemu/test/same_bits.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace tcemu::test {

std::string hex(std::uint64_t bits, int digits) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%0*llx", digits, static_cast<unsigned long long>(bits));
  return text;
}

namespace detail {
namespace {

// Every line of `text` after the first indented by `indent` spaces.
std::string indented(const std::string& text, std::size_t indent) {
  std::string out;
  for (const char ch : text) {
    out += ch;
    if (ch == '\n') out.append(indent, ' ');
  }
  return out;
}

}  // namespace

namespace {

// NaN and Inf by name (their bits are on the line already); finite values in decimal with
// `digits` significant digits, enough to tell neighbours apart, and in %a.
std::string real_value(double v, int digits) {
  if (std::isnan(v)) return std::signbit(v) ? "-NaN" : "NaN";
  if (std::isinf(v)) return v < 0 ? "-Inf" : "Inf";
  char text[64];
  std::snprintf(text, sizeof text, "%.*g, %a", digits, v, v);
  return text;
}

}  // namespace

std::string float_value(float v) {
  return real_value(static_cast<double>(v), 9);
}

std::string double_value(double v) {
  return real_value(v, 17);
}

std::string signed_value(std::int64_t v) {
  return std::to_string(v);
}

std::string unsigned_value(std::uint64_t v) {
  return std::to_string(v);
}

BitComparison refused(const std::string& why) {
  BitComparison c;
  c.differing = -1;
  c.result = ::testing::AssertionFailure() << "not compared: " << why;
  return c;
}

BitComparison compare(std::int64_t rows, std::int64_t cols, int digits,
                      const std::function<ElementPair(std::int64_t, std::int64_t)>& at,
                      const std::function<std::string(std::uint64_t)>& natural_value,
                      const SameBitsOptions& options) {
  if (rows < 0 || cols < 0) {
    return refused("bad shape: " + std::to_string(rows) + " x " + std::to_string(cols));
  }
  const auto& value = options.value ? options.value : natural_value;
  const bool by_columns = options.order == Order::column_major;
  const std::int64_t outer = by_columns ? cols : rows, inner = by_columns ? rows : cols;
  BitComparison c;
  c.total = rows * cols;
  std::ostringstream listing;
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t n = 0; n < inner; ++n) {
      const std::int64_t i = by_columns ? n : o, j = by_columns ? o : n;
      const ElementPair e = at(i, j);
      if (e.expected == e.got) continue;
      if (c.differing++ >= options.listed) continue;
      const std::string where = "  (" + std::to_string(i) + ", " + std::to_string(j) + "): ";
      const std::string pad(where.size(), ' ');
      listing << where << "expected " << hex(e.expected, digits) << " (" << value(e.expected)
              << ")\n"
              << pad << "got      " << hex(e.got, digits) << " (" << value(e.got) << ")\n";
      if (options.inputs) {
        listing << pad << "inputs   " << indented(options.inputs(i, j), pad.size() + 9) << "\n";
      }
    }
  }
  std::ostringstream summary;
  summary << c.differing << " of " << c.total << " elements (" << rows << " x " << cols << ", "
          << (by_columns ? "column" : "row") << " major";
  if (options.ld > 0 && options.ld != inner) summary << ", ld " << options.ld;
  summary << ") differ";
  if (c.differing == 0) {
    c.result = ::testing::AssertionSuccess() << summary.str();
    return c;
  }
  const std::int64_t listed = std::min(c.differing, std::max<std::int64_t>(options.listed, 0));
  c.result = ::testing::AssertionFailure() << summary.str() << ":\n" << listing.str();
  if (listed < c.differing) c.result << "  ... and " << c.differing - listed << " more\n";
  return c;
}

}  // namespace detail

std::string hex_values(std::int64_t count, const std::function<std::uint64_t(std::int64_t)>& at,
                       int digits, std::int64_t shown) {
  std::string out;
  for (std::int64_t p = 0; p < std::min(count, shown); ++p) {
    char text[24];
    std::snprintf(text, sizeof text, "%0*llx", digits, static_cast<unsigned long long>(at(p)));
    out += (p ? " " : "");
    out += text;
  }
  if (count > shown) out += " ...";
  out += " (" + std::to_string(count) + (count == 1 ? " value)" : " values)");
  return out;
}

std::string value_range(std::int64_t count, const std::function<double(std::int64_t)>& at) {
  std::int64_t zeros = 0, nans = 0, infs = 0;
  double smallest = std::numeric_limits<double>::infinity(), largest = 0.0;
  for (std::int64_t p = 0; p < count; ++p) {
    const double x = at(p);
    if (std::isnan(x)) {
      ++nans;
    } else if (std::isinf(x)) {
      ++infs;
    } else if (x == 0.0) {
      ++zeros;
    } else {
      smallest = std::fmin(smallest, std::fabs(x));
      largest = std::fmax(largest, std::fabs(x));
    }
  }
  std::ostringstream out;
  out << count << (count == 1 ? " value" : " values");
  if (largest > 0.0) {
    char text[80];
    std::snprintf(text, sizeof text, ", |x| in [%a, %a]", smallest, largest);
    out << text;
  }
  if (zeros) out << ", " << zeros << (zeros == 1 ? " zero" : " zeros");
  if (nans) out << ", " << nans << " NaN";
  if (infs) out << ", " << infs << " Inf";
  return out.str();
}

std::string fp32_value(std::uint64_t bits) {
  return detail::float_value(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
}

std::string fp64_value(std::uint64_t bits) {
  return detail::double_value(std::bit_cast<double>(bits));
}

}  // namespace tcemu::test
