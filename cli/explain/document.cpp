#include "document.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>

#include <tcemu/cases/printable.hpp>
#include <tcemu/emulator/fp64_bits.hpp>
#include <tcemu/session/arguments.hpp>

namespace tcemu::cli::explain {
namespace {

// The weights of a Binary's highest and lowest set bits (a nonzero one).
int top_bit(const Binary& x) {
  return x.lsb_exponent + static_cast<int>(std::bit_width(x.significand)) - 1;
}
int low_bit(const Binary& x) {
  return x.lsb_exponent + std::countr_zero(x.significand);
}

// Aligned rows wider than this are shown each on its own exponent instead.
constexpr int kMaxAlignedDigits = 110;

// One rendered row: the text before the digits, the digits ('.' after the first), the text
// after them, and which characters of `digits` are dropped bits.
struct RowText {
  std::string lead, digits, tail;
  std::vector<bool> dropped;
};

std::vector<RowText> layout(const std::vector<BitRow>& rows) {
  int top = 0, bottom = 0;
  bool any = false;
  for (const BitRow& r : rows) {
    if (r.value.significand == 0) continue;
    top = any ? std::max(top, top_bit(r.value)) : top_bit(r.value);
    bottom = any ? std::min(bottom, low_bit(r.value)) : low_bit(r.value);
    any = true;
  }
  const bool aligned = top - bottom + 1 <= kMaxAlignedDigits;
  std::size_t label_width = 0;
  for (const BitRow& r : rows) label_width = std::max(label_width, r.label.size());
  std::vector<RowText> out;
  for (const BitRow& r : rows) {
    int hi = top, lo = bottom;
    if (!aligned) {
      hi = r.value.significand == 0 ? 0 : top_bit(r.value);
      lo = r.value.significand == 0 ? 0 : low_bit(r.value);
    }
    RowText t;
    t.lead = r.label + std::string(label_width - r.label.size(), ' ') + "  " +
             (r.value.negative ? "-" : "+");
    for (int e = hi; e >= lo; --e) {
      const int i = e - r.value.lsb_exponent;
      const bool one =
          r.value.significand != 0 && i >= 0 && i < 64 && (r.value.significand >> i) & 1;
      t.digits += one ? '1' : '0';
      t.dropped.push_back(r.drop_below && e < *r.drop_below && r.value.significand != 0 &&
                          e >= low_bit(r.value));
      if (e == hi && hi > lo) {
        t.digits += '.';
        t.dropped.push_back(false);
      }
    }
    t.tail = " x 2^" + std::to_string(hi) + (r.note.empty() ? "" : "  " + r.note);
    out.push_back(std::move(t));
  }
  // Rows on their own exponents: pad the digits so that the notes line up.
  std::size_t width = 0;
  for (const RowText& t : out) width = std::max(width, t.digits.size());
  for (RowText& t : out) {
    t.dropped.resize(width, false);
    t.digits += std::string(width - t.digits.size(), ' ');
  }
  return out;
}

// The marker line under a row with dropped bits ('^' under each), or nothing.
std::string marker_line(const RowText& t) {
  const auto last = std::find(t.dropped.rbegin(), t.dropped.rend(), true);
  if (last == t.dropped.rend()) return "";
  const std::size_t end = t.dropped.size() - static_cast<std::size_t>(last - t.dropped.rbegin());
  std::string line(t.lead.size(), ' ');
  for (std::size_t i = 0; i < end; ++i) line += t.dropped[i] ? '^' : ' ';
  return line + " dropped";
}

std::string plain_rows(const BitRows& b) {
  std::string s;
  for (const RowText& t : layout(b.rows)) {
    s += t.lead + t.digits + t.tail + '\n';
    if (const std::string m = marker_line(t); !m.empty()) s += m + '\n';
  }
  return s;
}

std::string escape(const std::string& text) {
  std::string s;
  for (const char c : text) {
    if (c == '&') {
      s += "&amp;";
    } else if (c == '<') {
      s += "&lt;";
    } else if (c == '>') {
      s += "&gt;";
    } else {
      s += c;
    }
  }
  return s;
}

std::string html_rows(const BitRows& b) {
  std::string s = "<pre>";
  for (const RowText& t : layout(b.rows)) {
    s += escape(t.lead);
    bool open = false;
    for (std::size_t i = 0; i < t.digits.size(); ++i) {
      if (t.dropped[i] != open) {
        s += open ? "</span>" : "<span class=\"dropped\">";
        open = t.dropped[i];
      }
      s += t.digits[i];
    }
    if (open) s += "</span>";
    s += escape(t.tail) + '\n';
    if (const std::string m = marker_line(t); !m.empty()) s += escape(m) + '\n';
  }
  return s + "</pre>\n";
}

std::string plain_table(const Table& t) {
  std::vector<std::size_t> width(t.header.size(), 0);
  const auto widen = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], row[i].size());
  };
  widen(t.header);
  for (const auto& row : t.rows) widen(row);
  const auto line = [&](const std::vector<std::string>& row) {
    std::string s = " ";
    for (std::size_t i = 0; i < width.size(); ++i) {
      const std::string cell = i < row.size() ? row[i] : "";
      s += ' ' + cell + (i + 1 < width.size() ? std::string(width[i] - cell.size() + 2, ' ') : "");
    }
    while (s.back() == ' ') s.pop_back();
    return s + '\n';
  };
  std::string s = line(t.header);
  std::string rule = " ";
  for (std::size_t i = 0; i < width.size(); ++i) {
    rule += ' ' + std::string(width[i], '-') + (i + 1 < width.size() ? "  " : "");
  }
  s += rule + '\n';
  for (const auto& row : t.rows) s += line(row);
  return s;
}

std::string markdown_table(const Table& t) {
  const auto line = [](const std::vector<std::string>& row) {
    std::string s = "|";
    for (const std::string& cell : row) {
      s += ' ';
      for (const char c : cell) s += c == '|' ? "\\|" : std::string(1, c);  // |x| in a cell
      s += " |";
    }
    return s + '\n';
  };
  std::string s = line(t.header) + "|";
  for (std::size_t i = 0; i < t.header.size(); ++i) s += " --- |";
  s += '\n';
  for (const auto& row : t.rows) s += line(row);
  return s;
}

std::string html_table(const Table& t) {
  std::string s = "<table>\n<tr>";
  for (const std::string& cell : t.header) s += "<th>" + escape(cell) + "</th>";
  s += "</tr>\n";
  for (const auto& row : t.rows) {
    s += "<tr>";
    for (const std::string& cell : row) s += "<td>" + escape(cell) + "</td>";
    s += "</tr>\n";
  }
  return s + "</table>\n";
}

// One part in one format.
struct Renderer {
  Format format;

  std::string operator()(const Heading& h) const {
    switch (format) {
      case Format::text:
        return h.text + '\n' + std::string(h.text.size(), '-') + '\n';
      case Format::markdown:
        return "## " + h.text + '\n';
      case Format::html:
        return "<h2>" + escape(h.text) + "</h2>\n";
    }
    return "";
  }
  std::string operator()(const Paragraph& p) const {
    return format == Format::html ? "<p>" + escape(p.text) + "</p>\n" : p.text + '\n';
  }
  std::string operator()(const Why& w) const {
    switch (format) {
      case Format::text:
        return "why: " + w.text + '\n';
      case Format::markdown:
        return "*Why:* " + w.text + '\n';
      case Format::html:
        return "<p class=\"why\"><em>Why:</em> " + escape(w.text) + "</p>\n";
    }
    return "";
  }
  std::string operator()(const BitRows& b) const {
    switch (format) {
      case Format::text:
        return plain_rows(b);
      case Format::markdown:
        return "```\n" + plain_rows(b) + "```\n";
      case Format::html:
        return html_rows(b);
    }
    return "";
  }
  std::string operator()(const Table& t) const {
    switch (format) {
      case Format::text:
        return plain_table(t);
      case Format::markdown:
        return markdown_table(t);
      case Format::html:
        return html_table(t);
    }
    return "";
  }
  std::string operator()(const Preformatted& p) const {
    switch (format) {
      case Format::text:
        return p.text;
      case Format::markdown:
        return "```\n" + p.text + "```\n";
      case Format::html:
        return "<pre>" + escape(p.text) + "</pre>\n";
    }
    return "";
  }
};

}  // namespace

Format format_named(const std::string& name) {
  if (name == "text") return Format::text;
  if (name == "markdown") return Format::markdown;
  if (name == "html") return Format::html;
  throw session::UsageError("--format must be one of text, markdown, html, got '" +
                            printable(name) + "'");
}

Binary binary_of(double x) {
  const fp64::Fields f = fp64::fields(x);
  return {f.negative, f.significand, f.exponent};
}

std::string Document::render(Format format) const {
  std::string s;
  switch (format) {
    case Format::text:
      s = title_ + '\n' + std::string(title_.size(), '=') + '\n';
      break;
    case Format::markdown:
      s = "# " + title_ + '\n';
      break;
    case Format::html:
      s = "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>" + escape(title_) +
          "</title>\n<style>\n.dropped { color: #c00; text-decoration: line-through; }\n"
          ".why { color: #555; }\ntd, th { padding: 0 0.6em; text-align: left; }\n</style>\n"
          "</head>\n<body>\n<h1>" +
          escape(title_) + "</h1>\n";
      break;
  }
  for (const auto& part : parts_) {
    if (format != Format::html && !s.empty()) s += '\n';
    s += std::visit(Renderer{format}, part);
  }
  return format == Format::html ? s + "</body>\n</html>\n" : s;
}

std::string decimal(double x) {
  char buffer[40];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, x).ptr;  // shortest round trip
  return std::string(buffer, end);
}

std::string hexfloat(double x) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%a", x);
  return buffer;
}

std::string hex64(double x) {
  char buffer[20];
  std::snprintf(buffer, sizeof buffer, "%016llx",
                static_cast<unsigned long long>(std::bit_cast<std::uint64_t>(x)));
  return buffer;
}

std::string decimal(const Binary& x) {
  const double v = std::ldexp(static_cast<double>(x.significand), x.lsb_exponent);
  return decimal(x.negative ? -v : v);
}

}  // namespace tcemu::cli::explain
