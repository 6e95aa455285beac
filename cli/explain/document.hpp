// The document every `tcemu explain` topic builds: sections, paragraphs, one-line reasons why a
// step is exact, aligned binary rows with their dropped bits marked, tables and preformatted text;
// rendered as plain text for a terminal, or as Markdown or HTML for a handout (--format). The
// topics say what to show; only this file says how each format shows it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace tcemu::cli::explain {

enum class Format { text, markdown, html };

// --format's value: text, markdown or html. Throws UsageError otherwise.
Format format_named(const std::string& name);

// A finite binary number (-1)^negative significand 2^lsb_exponent; significand 0 is zero.
struct Binary {
  bool negative = false;
  std::uint64_t significand = 0;
  int lsb_exponent = 0;
};

// The finite double x as a Binary (its binary64 fields).
Binary binary_of(double x);

// One row of aligned binary: a label, the number, the digits below `drop_below` (a weight 2^e)
// marked as dropped when set, and a note beside it (usually the decimal value). The rows of one
// BitRows share one exponent, so that equal weights stand in one column, while they span at most
// 110 bits; wider ones (1e300 beside 1e-300) are each shown on their own exponent.
struct BitRow {
  std::string label;
  Binary value;
  std::string note;
  std::optional<int> drop_below;
};

struct Heading {
  std::string text;
};
struct Paragraph {
  std::string text;
};
// Why a step is exact (or what it loses), in one line.
struct Why {
  std::string text;
};
struct BitRows {
  std::vector<BitRow> rows;
};
struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};
struct Preformatted {
  std::string text;
};

class Document {
 public:
  explicit Document(std::string title) : title_(std::move(title)) {}

  void heading(std::string text) { parts_.emplace_back(Heading{std::move(text)}); }
  void paragraph(std::string text) { parts_.emplace_back(Paragraph{std::move(text)}); }
  void why(std::string text) { parts_.emplace_back(Why{std::move(text)}); }
  void bits(std::vector<BitRow> rows) { parts_.emplace_back(BitRows{std::move(rows)}); }
  void table(Table t) { parts_.emplace_back(std::move(t)); }
  void preformatted(std::string text) { parts_.emplace_back(Preformatted{std::move(text)}); }

  std::string render(Format format) const;

 private:
  std::string title_;
  std::vector<std::variant<Heading, Paragraph, Why, BitRows, Table, Preformatted>> parts_;
};

// Shortest decimal that reads back as x (%.17g trimmed by round trip), and C's %a.
std::string decimal(double x);
std::string hexfloat(double x);
// The 16 hex digits of x's binary64 bits.
std::string hex64(double x);
// The value of a Binary as the nearest double, in decimal (exact when it has <= 53 bits).
std::string decimal(const Binary& x);

}  // namespace tcemu::cli::explain
