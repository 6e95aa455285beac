// explain block: one fused Tensor Core block (block_fma.hpp) on any datapath, step by step from
// its trace (traced_block_fma.hpp): the exact products, the alignment exponent, each
// term truncated to the grid with its dropped bits marked, the exact sum of what was kept, and
// its one rounding; beside the same block on other datapaths (--compare), bit by bit.
#include <bit>
#include <cmath>
#include <sstream>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/cases/printable.hpp>
#include <tcemu/emulator/block_fma.hpp>
#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/presets.hpp>

#include "datapath_options.hpp"
#include "explained_block.hpp"
#include "topics.hpp"
#include "traced_block_fma.hpp"
#include "values.hpp"

namespace tcemu::cli::explain {
namespace {

constexpr const char* kDefaultA =
    "1, 0x1p-13, 0x1p-13, 0x1p-13, 0x1p-13, 0x1p-13, 0x1p-13, "
    "0x1p-13, 0x1p-13, 0x1p-13, 0x1p-13, 0x1p-13, 0x1p-13, 0x1p-13, "
    "0x1p-13, 0x1p-13";
constexpr const char* kDefaultCompare = "--alignment-bits exact, exact-rn";

std::string usage() {
  return std::string(
             R"(usage: tcemu explain block [--a LIST --b LIST] [--c VALUE] [datapath options]
                           [--compare LIST] [--format F]

One Tensor Core block d = sum_i a_i b_i + c (block_fma.hpp) on the datapath the options name,
from the library's trace of it: each product exact, the block's alignment exponent, each term
truncated to the alignment grid with its dropped bits marked (^), the exact sum of the kept
terms, its rounding into the accumulator; then the same block on the --compare datapaths.
  --a LIST, --b LIST  at most block-terms values each, in the input format (--type)
  --c VALUE           in the accumulator format (--acc); default 0
  --compare LIST      comma-separated datapaths, each a preset name with overrides
                      ("exact-rn", "sm80 --alignment-bits 23") or overrides of the main
                      datapath ("--alignment-bits exact"); the input and accumulator formats
                      stay the main one's. Default: ")") +
         kDefaultCompare + R"("
Default block: 1 x 1 + 15 x (2^-13 x 2^-13) = 1 + 15 x 2^-26, c = 0: sm90 truncates each
2^-26 away (3f800000), exact alignment rounds the exact sum toward zero (3f800001), exact-rn
to nearest (3f800002).

)" + datapath_options_help();
}

// The datapath options given on the command line, as words.
std::vector<std::string> datapath_words(const session::Arguments& args) {
  std::vector<std::string> words;
  for (const std::string& name : datapath_option_names()) {
    if (const auto v = args.value(name)) {
      words.push_back("--" + name);
      words.push_back(*v);
    }
  }
  return words;
}

// This topic's block has no scales: a block-scaled datapath is the block-scaled topic's.
void refuse_block_scaled(const Datapath& dp) {
  if (dp.block_scaled()) {
    throw session::UsageError(
        "the datapath is block-scaled: `tcemu explain block-scaled` shows its block with the "
        "scales");
  }
}

// A --compare item as a datapath: a preset name (with the main formats) and overrides, or
// overrides of the main datapath's options.
Datapath compare_datapath(const session::Arguments& args, const Datapath& main,
                          const std::string& item) {
  std::vector<std::string> words;
  std::istringstream in(item);
  for (std::string w; in >> w;) words.push_back(w);
  if (words.empty()) throw session::UsageError("--compare: an empty datapath");
  std::vector<std::string> all;
  if (words[0].starts_with("--")) {
    all = datapath_words(args);
  } else {
    all = {
        "--type", std::string(main.input.name),       "--b-type", std::string(main.b_format().name),
        "--acc",  std::string(main.accumulator.name), "--arch"};
  }
  all.insert(all.end(), words.begin(), words.end());
  try {
    const Datapath dp = datapath_from(session::Arguments(all, datapath_option_names(), {}));
    if (!(dp.input == main.input) || !(dp.b_format() == main.b_format()) ||
        !(dp.accumulator == main.accumulator)) {
      throw session::UsageError("the input and accumulator formats must stay " +
                                std::string(main.input.name) +
                                " (b: " + std::string(main.b_format().name) + ") and " +
                                std::string(main.accumulator.name));
    }
    refuse_block_scaled(dp);
    return dp;
  } catch (const session::UsageError& e) {
    throw session::UsageError("--compare '" + printable(item) + "': " + e.what());
  }
}

// The block's operands: a and b in the input format, c in the accumulator format (bits).
struct Block {
  std::vector<std::uint32_t> a, b;
  std::uint32_t c;
};

// One datapath's run of the block: its trace, and the result after c where c enters after it.
struct Run {
  std::string name;
  Datapath dp;
  BlockTrace trace;
  std::uint32_t result;
};

Run run_block(const std::string& name, const Datapath& dp, const Block& x) {
  if (x.a.size() > static_cast<std::size_t>(dp.block_terms)) {
    throw session::UsageError(name + ": its block fuses " + std::to_string(dp.block_terms) +
                              " products, the block given has " + std::to_string(x.a.size()));
  }
  std::vector<Decoded> a, b;
  for (const std::uint32_t v : x.a) a.push_back(decode(dp.input, v));
  for (const std::uint32_t v : x.b) b.push_back(decode(dp.b_format(), v));
  Run r{name, dp, {}, 0};
  const bool after = dp.c_entry == AccumulatorEntry::added_after_blocks;
  r.result = traced_block_fma(dp, a, b, after ? encode_zero(dp.accumulator, false) : x.c, r.trace);
  if (after) r.result = accumulator_add(dp, r.result, x.c);
  return r;
}

// The labels of the trace's terms: the finite nonzero products in order, then c.
std::vector<std::string> term_labels(const Datapath& dp, const Block& x) {
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < x.a.size(); ++i) {
    const Decoded a = decode(dp.input, x.a[i]), b = decode(dp.b_format(), x.b[i]);
    if (a.value_class == ValueClass::finite && b.value_class == ValueClass::finite) {
      labels.push_back("a" + std::to_string(i) + " b" + std::to_string(i));
    }
  }
  if (dp.c_entry == AccumulatorEntry::aligned_in_first_block &&
      decode(dp.accumulator, x.c).value_class == ValueClass::finite) {
    labels.push_back("c");
  }
  return labels;
}

void show_run(Document& d, const Run& r, const Block& x) {
  const Datapath& dp = r.dp;
  d.heading("On " + r.name);
  d.paragraph(describe(dp));
  if (r.trace.special) {
    d.paragraph("A NaN or Inf decides the result before any arithmetic: " +
                to_hex(dp.accumulator, r.result) + " (" + value_text(dp.accumulator, r.result) +
                ").");
    return;
  }
  const std::vector<std::string> labels = term_labels(dp, x);
  std::optional<int> grid;
  if (r.trace.alignment_exponent) {
    grid = *r.trace.alignment_exponent - *dp.alignment_fraction_bits;
    d.paragraph("Alignment exponent E = " + std::to_string(*r.trace.alignment_exponent) +
                " (the largest leading-bit exponent of the terms' formats, at least the floor " +
                (dp.alignment_floor == kNoAlignmentFloor ? std::string("none")
                                                         : std::to_string(dp.alignment_floor)) +
                "); grid 2^(E - " + std::to_string(*dp.alignment_fraction_bits) + ") = 2^" +
                std::to_string(*grid) + ".");
    d.why("every term's magnitude is truncated toward zero to a multiple of 2^" +
          std::to_string(*grid) +
          ", no guard, round or sticky bit (datapath.hpp, step 2): the "
          "bits marked ^ are dropped.");
  } else {
    d.paragraph("Exact alignment: no term loses a bit.");
  }
  explain_terms_and_rounding(d, dp, r.trace, labels, grid, r.result);
}

Document run(const session::Arguments& args) {
  const Datapath dp = datapath_from(args);
  refuse_block_scaled(dp);
  Block x;
  x.a = values_bits("--a", args.value_or("a", kDefaultA), dp.input);
  x.b = values_bits("--b", args.value_or("b", kDefaultA), dp.b_format());
  x.c = value_bits("--c", args.value_or("c", "0"), dp.accumulator);
  if (x.a.empty() || x.a.size() != x.b.size()) {
    throw session::UsageError("--a and --b need the same number of values >= 1");
  }
  const std::string main_name = args.value_or("arch", "sm90");
  std::vector<Run> runs{run_block(main_name, dp, x)};
  for (std::string item : args.list_or("compare", kDefaultCompare)) {
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    const std::string name = item.starts_with("--") ? main_name + " " + item : item;
    runs.push_back(run_block("--compare " + name, compare_datapath(args, dp, item), x));
    runs.back().name = name;
  }

  Document d("One Tensor Core block: " + std::string(dp.input.name) + " products into " +
             std::string(dp.accumulator.name));
  d.heading("The products, each exact");
  Table products{{"i", "a_i", "b_i", "a_i b_i"}, {}};
  for (std::size_t i = 0; i < x.a.size(); ++i) {
    products.rows.push_back(
        {std::to_string(i), to_hex(dp.input, x.a[i]) + " = " + value_text(dp.input, x.a[i]),
         to_hex(dp.b_format(), x.b[i]) + " = " + value_text(dp.b_format(), x.b[i]),
         decimal(to_double(dp.input, x.a[i]) * to_double(dp.b_format(), x.b[i]))});
  }
  products.rows.push_back(
      {"c", to_hex(dp.accumulator, x.c) + " = " + value_text(dp.accumulator, x.c), "", ""});
  d.table(products);
  const int bits = dp.input.fraction_bits + 1;
  const int bits_b = dp.b_format().fraction_bits + 1;
  const std::string factors = dp.has_input_b
                                  ? "an " + std::string(dp.input.name) + " and an " +
                                        std::string(dp.input_b.name) + " significand of at most " +
                                        std::to_string(bits) + " and " + std::to_string(bits_b)
                                  : "two " + std::string(dp.input.name) +
                                        " significands of at most " + std::to_string(bits);
  d.why(factors + " bits multiply into at most " + std::to_string(bits + bits_b) +
        " bits: every product is exact (block_fma.hpp, TermList::add_product).");
  for (const Run& r : runs) show_run(d, r, x);

  d.heading("Side by side");
  std::vector<BitRow> results;
  Table summary{{"datapath", "alignment exponent", "grid", "rounding", "d"}, {}};
  for (const Run& r : runs) {
    const Decoded result = decode(r.dp.accumulator, r.result);
    if (is_number(result)) {
      results.push_back({r.name, binary_of(result), to_hex(r.dp.accumulator, r.result), {}});
    }
    const bool aligned = r.dp.alignment_fraction_bits.has_value();
    const auto e = r.trace.alignment_exponent;
    summary.rows.push_back(
        {r.name, e ? std::to_string(*e) : "-",
         e         ? "2^" + std::to_string(*e - *r.dp.alignment_fraction_bits)
         : aligned ? "-"
                   : "exact",
         std::string(name_of(r.dp.block_rounding)),
         to_hex(r.dp.accumulator, r.result) + " = " + value_text(r.dp.accumulator, r.result)});
  }
  d.table(summary);
  if (!results.empty()) d.bits(results);
  return d;
}

}  // namespace

Topic block_topic() {
  auto options = datapath_option_names();
  for (const char* o : {"a", "b", "c", "compare"}) options.insert(o);
  return {"block", "one tensor-core block on any preset, beside other datapaths", usage(), options,
          run};
}

}  // namespace tcemu::cli::explain
