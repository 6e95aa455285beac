// explain block-scaled: one block of a block-scaled tensor core (OCP MX, NVFP4) step by step from
// its trace (traced_block_fma.hpp's traced_scaled_block: TermList's scaled groups and round_sum):
// each group's products and exact sum, its scales and the exponent it is aligned on, the block's
// alignment exponent, each term truncated to the grid, the exact sum of what was kept and its one
// rounding; then the same block with exact alignment.
#include <bit>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/emulator/block_fma.hpp>
#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>

#include "datapath_options.hpp"
#include "explained_block.hpp"
#include "topics.hpp"
#include "traced_block_fma.hpp"
#include "values.hpp"

namespace tcemu::cli::explain {
namespace {

// The default datapath (NVFP4 on sm100) where no --arch and no --instr is given.
const std::vector<std::string> kDefaultDatapath = {
    "--arch", "sm100", "--instr", "tcgen05.mxf4nvf4.block16.ue4m3", "--type", "e2m1"};

// K values, all 0 but those given at their k.
std::string sparse_list(std::size_t k, const std::vector<std::pair<std::size_t, std::string>>& at) {
  std::vector<std::string> values(k, "0");
  for (const auto& [i, v] : at) values[i] = v;
  std::string out;
  for (const std::string& v : values) out += (out.empty() ? "" : ", ") + v;
  return out;
}

// The default block: K = 48, three groups of 16 (usage()).
const std::string kDefaultA = sparse_list(48, {{0, "1"}, {16, "-1"}, {32, "0.5"}});
const std::string kDefaultB = sparse_list(48, {{0, "1"}, {16, "1"}, {32, "0.5"}});
constexpr const char* kDefaultScales = "448, 448, 0x1p-9";

std::string usage() {
  return std::string(
             R"(usage: tcemu explain block-scaled [--a LIST --b LIST --scale-a LIST --scale-b LIST]
                                  [--c VALUE] [datapath options] [--format F]

One block of a block-scaled tensor core (OCP MX and NVFP4: tcgen05.mma kind::mxf8f6f4, mxf4,
mxf4nvf4 and sm_120's block-scaled mma.sync; MMA-Sim 2.1.1's ST_FDPA and GST_FDPA), from the
library's trace of it (block_fma.hpp: TermList's scaled groups, round_sum): the groups of
group_terms consecutive products, each group's exact sum, its two scales and the exponent it is
aligned on, the block's alignment exponent, each term truncated to the alignment grid with its
dropped bits marked (^), the exact sum of the kept terms and its rounding; then d with exact
alignment beside it. Without --arch and --instr the datapath is NVFP4 on sm100 (--arch sm100
--instr tcgen05.mxf4nvf4.block16.ue4m3 --type e2m1); any block-scaled one may be named, with
overrides (--group-terms, --alignment-bits, --scale-format, ...).
  --a LIST, --b LIST  at most block-terms values each, in --type's format (b: --b-type's)
  --scale-a LIST      ceil(K / scale block) scales of A and of B, values the scale format holds
  --scale-b LIST      exactly (ue8m0: powers of two; ue4m3: 2^-9 to 448) or bits:HEX (bits:ff
                      is a ue8m0 NaN, bits:7f a ue4m3 one)
  --c VALUE           in the accumulator format (--acc); default 0
Default block: K = 48, three groups of 16 with one product each: 1 x 1 scaled by 448 x 448,
-1 x 1 by 448 x 448 (the two cancel) and 0.5 x 0.5 by 2^-9 x 2^-9 = 2^-20. The first two
scales put the alignment exponent at 16, so the grid of F = 35 bits is 2^-19 and the third
group truncates to 0: d = 0, where exact alignment gives 2^-20 (35800000).

)") + datapath_options_help();
}

// The datapath: the options given, on top of NVFP4 where they name no architecture and no
// instruction. Throws UsageError unless it is block-scaled.
Datapath scaled_datapath(const session::Arguments& args) {
  std::vector<std::string> words;
  if (!args.value("arch") && !args.value("instr")) words = kDefaultDatapath;
  for (const std::string& name : datapath_option_names()) {
    if (const auto v = args.value(name)) {
      words.push_back("--" + name);
      words.push_back(*v);
    }
  }
  const Datapath dp = datapath_from(session::Arguments(words, datapath_option_names(), {}));
  if (!dp.block_scaled()) {
    throw session::UsageError(
        "the datapath takes no scales: name a block-scaled --instr (tcgen05.mxf8f6f4.block32, "
        "tcgen05.mxf4nvf4.block16.ue4m3, ...: tcemu presets) or give --scale-block; `tcemu "
        "explain block` shows an unscaled block");
  }
  return dp;
}

// The scales of `text` (comma- or space-separated): bit patterns, or values `format` holds
// exactly (a scale format has no rounding a user would want silently).
std::vector<std::uint32_t> scale_bits(const std::string& what, std::string text,
                                      const FloatFormat& format) {
  for (char& ch : text) ch = ch == ',' ? ' ' : ch;
  std::istringstream words(text);
  std::vector<std::uint32_t> bits;
  for (std::string word; words >> word;) {
    bits.push_back(value_bits(what, word, format));
    if (word.starts_with("bits:")) continue;
    const double x = number(what, word);
    if (std::signbit(x) || to_double(format, bits.back()) != x) {
      throw session::UsageError(what + ": " + word + " is not a " + std::string(format.name) +
                                " value (" +
                                (format == formats::ue8m0 ? "a power of two, 2^-127 to 2^127"
                                                          : "0, or 2^-9 to 448 in 4 bits") +
                                "; or bits:HEX)");
    }
  }
  return bits;
}

std::string operand(const FloatFormat& f, std::uint32_t bits) {
  return to_hex(f, bits) + " = " + value_text(f, bits);
}

// The block's operands as bits, and decoded.
struct Block {
  MmaCase bits;
  std::vector<Decoded> a, b, scale_a, scale_b;
};

// The block's d and its trace on `dp`; where c enters after the blocks, the block starts from +0
// and d = accumulator_add(block, c).
struct Run {
  ScaledBlockTrace trace;
  std::uint32_t result;
};
Run run_block(const Datapath& dp, const Block& x) {
  const bool after = dp.c_entry == AccumulatorEntry::added_after_blocks;
  Run r{{}, 0};
  try {
    r.result = traced_scaled_block(dp, x.a, x.b, x.scale_a, x.scale_b,
                                   after ? encode_zero(dp.accumulator, false) : x.bits.c, r.trace);
  } catch (const std::invalid_argument& e) {
    throw session::UsageError(e.what());
  }
  if (after) r.result = accumulator_add(dp, r.result, x.bits.c);
  return r;
}

// Why group g added no term.
std::string no_term_reason(const Block& x, std::size_t scale, bool special) {
  if (special) return "a NaN or Inf in the block (c included) decides d (below).";
  const Decoded& sa = x.scale_a[scale];
  const Decoded& sb = x.scale_b[scale];
  if (sa.value_class == ValueClass::zero || sb.value_class == ValueClass::zero) {
    return "a scale is zero: the group is a zero term, with no part in the alignment exponent.";
  }
  if (sa.value_class == ValueClass::nan || sb.value_class == ValueClass::nan) {
    return "a NaN scale over products that are all zero adds a zero (--nan-scale ignore-zero).";
  }
  return "every product is zero: a zero term, with no part in the alignment exponent (zeros take "
         "e_zero, the floor).";
}

// Group `index` of the trace; `rule_why`: with the one line saying why a group is one term.
void show_group(Document& d, const Datapath& dp, const Block& x, const Run& r, std::size_t index,
                bool rule_why) {
  const ScaledBlockTrace::Group& g = r.trace.groups[index];
  const BlockScaling& rule = dp.block_scaling;
  const std::size_t scale = g.first / static_cast<std::size_t>(rule.scale_block);
  const bool one_product = rule.group_terms == 1;
  d.heading("Group " + std::to_string(index) + ": k = " + std::to_string(g.first) +
            (g.count > 1 ? " to " + std::to_string(g.first + g.count - 1) : ""));
  Table products{{"k", "a_k", "b_k", "a_k b_k"}, {}};
  std::size_t zeros = 0;
  for (std::size_t k = g.first; k < g.first + g.count; ++k) {
    if (x.a[k].value_class == ValueClass::zero || x.b[k].value_class == ValueClass::zero) {
      ++zeros;
      continue;
    }
    const double p = to_double(dp.input, x.bits.a[k]) * to_double(dp.b_format(), x.bits.b[k]);
    products.rows.push_back({std::to_string(k), operand(dp.input, x.bits.a[k]),
                             operand(dp.b_format(), x.bits.b[k]), decimal(p)});
  }
  if (!products.rows.empty()) d.table(products);
  if (zeros > 0 && !one_product) {
    d.paragraph(std::to_string(zeros) + " of its " + std::to_string(g.count) +
                " products are zero" + (products.rows.empty() ? "." : " (not listed)."));
  }
  const Decoded& sa = x.scale_a[scale];
  const Decoded& sb = x.scale_b[scale];
  d.paragraph("Scales (index " + std::to_string(scale) + ", one per " +
              std::to_string(rule.scale_block) + " k): A's " +
              operand(rule.scale_a, x.bits.scale_a[scale]) + ", B's " +
              operand(rule.scale_b, x.bits.scale_b[scale]) + ".");
  if (!g.term) {
    d.paragraph("No term: " + no_term_reason(x, scale, r.trace.block.special));
    return;
  }
  const BlockTrace::Term& t = r.trace.block.terms[*g.term];
  // The term is the group's exact sum times both scale significands (TermList): dividing them
  // out again is exact and gives the sum, shown beside the term.
  const std::uint64_t scale_significands = sa.significand * sb.significand;
  const Binary sum{t.negative, t.significand / scale_significands,
                   t.lsb_exponent - sa.lsb_exponent - sb.lsb_exponent};
  const Binary term{t.negative, t.significand, t.lsb_exponent};
  const int scale_exponent =
      sa.alignment_exponent(rule.scale_a) + sb.alignment_exponent(rule.scale_b);
  if (one_product) {
    const Decoded& a = x.a[g.first];
    const Decoded& b = x.b[g.first];
    const int e =
        a.alignment_exponent(dp.input) + b.alignment_exponent(dp.b_format()) + scale_exponent;
    d.paragraph("Term: a_k b_k x scales = " + decimal(sum) + " x " +
                value_text(rule.scale_a, x.bits.scale_a[scale]) + " x " +
                value_text(rule.scale_b, x.bits.scale_b[scale]) + " = " + decimal(term) +
                ", aligned on exponent " + std::to_string(e) +
                " (the leading-bit exponents of a_k, b_k and both scales).");
    if (rule_why)
      d.why(
          "group_terms = 1: each product carries its two scales in its exponent and is a term of "
          "its own, exact (TermList::add_scaled_product).");
  } else {
    d.paragraph("Exact group sum " + decimal(sum) + "; term: sum x scales = " + decimal(term) +
                ", aligned on exponent " + std::to_string(scale_exponent) +
                " (the scales' leading-bit exponents alone, whatever the sum's size).");
    if (rule_why)
      d.why("group_terms = " + std::to_string(rule.group_terms) +
            " (MMA-Sim's G): the products of a group are summed exactly before the scales apply, "
            "and the group is one term (TermList::add_scaled_group); one that cancels to 0 still "
            "takes part in the alignment exponent.");
  }
}

void show_block(Document& d, const Datapath& dp, const Run& r) {
  const BlockTrace& trace = r.trace.block;
  d.heading("Alignment, truncation and rounding");
  if (trace.special) {
    d.paragraph("A NaN or Inf decides the result before any arithmetic: " +
                operand(dp.accumulator, r.result) + ".");
    return;
  }
  std::vector<std::string> labels;
  for (std::size_t g = 0; g < r.trace.groups.size(); ++g) {
    if (r.trace.groups[g].term) labels.push_back("group " + std::to_string(g));
  }
  if (labels.size() < trace.terms.size()) labels.push_back("c");
  std::optional<int> grid;
  if (trace.alignment_exponent) {
    grid = *trace.alignment_exponent - *dp.alignment_fraction_bits;
    d.paragraph(
        "Alignment exponent E = " + std::to_string(*trace.alignment_exponent) +
        " (the largest exponent the terms are aligned on, c's included, at least e_zero = " +
        std::to_string(dp.alignment_floor) + "); grid 2^(E - F) with F = " +
        std::to_string(*dp.alignment_fraction_bits) + ": 2^" + std::to_string(*grid) + ".");
    d.why("every term's magnitude is truncated toward zero to a multiple of 2^" +
          std::to_string(*grid) +
          ", no guard, round or sticky bit: the bits marked ^ are dropped.");
  } else {
    d.paragraph("Exact alignment: no term loses a bit.");
  }
  explain_terms_and_rounding(d, dp, trace, labels, grid, r.result);
}

Document run(const session::Arguments& args) {
  const Datapath dp = scaled_datapath(args);
  const BlockScaling& rule = dp.block_scaling;
  Block x;
  x.bits.a = values_bits("--a", args.value_or("a", kDefaultA), dp.input);
  x.bits.b = values_bits("--b", args.value_or("b", kDefaultB), dp.b_format());
  x.bits.c = value_bits("--c", args.value_or("c", "0"), dp.accumulator);
  const std::size_t n = x.bits.a.size();
  if (n == 0 || n != x.bits.b.size()) {
    throw session::UsageError("--a and --b need the same number of values >= 1");
  }
  if (n > static_cast<std::size_t>(dp.block_terms)) {
    throw session::UsageError("the block fuses " + std::to_string(dp.block_terms) +
                              " products, --a has " + std::to_string(n));
  }
  x.bits.scale_a = scale_bits("--scale-a", args.value_or("scale-a", kDefaultScales), rule.scale_a);
  x.bits.scale_b = scale_bits("--scale-b", args.value_or("scale-b", kDefaultScales), rule.scale_b);
  const std::size_t scales = scale_count(dp, n);
  for (const auto& [name, list] :
       {std::pair{"--scale-a", &x.bits.scale_a}, std::pair{"--scale-b", &x.bits.scale_b}}) {
    if (list->size() != scales) {
      throw session::UsageError(std::string(name) + ": K = " + std::to_string(n) + " takes " +
                                std::to_string(scales) + " scales (one per " +
                                std::to_string(rule.scale_block) + " k), got " +
                                std::to_string(list->size()));
    }
  }
  for (const std::uint32_t v : x.bits.a) x.a.push_back(decode(dp.input, v));
  for (const std::uint32_t v : x.bits.b) x.b.push_back(decode(dp.b_format(), v));
  for (const std::uint32_t v : x.bits.scale_a) x.scale_a.push_back(decode(rule.scale_a, v));
  for (const std::uint32_t v : x.bits.scale_b) x.scale_b.push_back(decode(rule.scale_b, v));
  const Run r = run_block(dp, x);

  Document d("One block-scaled tensor-core block: " + std::string(dp.input.name) +
             (dp.has_input_b ? " x " + std::string(dp.input_b.name) : std::string()) +
             " products, " + std::string(rule.scale_a.name) + " scales, into " +
             std::string(dp.accumulator.name));
  d.paragraph(describe(dp));
  d.paragraph("K = " + std::to_string(n) + ": " + std::to_string(r.trace.groups.size()) +
              (rule.group_terms == 1 ? " products, each with the scales of its k"
               : r.trace.groups.size() == 1
                   ? " group of up to " + std::to_string(rule.group_terms) + " products"
                   : " groups of up to " + std::to_string(rule.group_terms) + " products") +
              "; one scale of A and one of B per " + std::to_string(rule.scale_block) +
              " k; c = " + operand(dp.accumulator, x.bits.c) + ". The case line (tcemu mma):");
  d.preformatted(format_case_line(x.bits, dp) + "\n");
  // Why a group is one term, said once: at the first group that has one.
  // Groups whose products are all zero (their scales numbers) add no term and are counted, not
  // shown: with group_terms 1 every zero product is one.
  bool said = false;
  std::size_t zero_groups = 0;
  for (std::size_t g = 0; g < r.trace.groups.size(); ++g) {
    const ScaledBlockTrace::Group& group = r.trace.groups[g];
    const std::size_t scale = group.first / static_cast<std::size_t>(rule.scale_block);
    bool all_zero = !group.term && is_number(x.scale_a[scale]) && is_number(x.scale_b[scale]);
    for (std::size_t k = group.first; all_zero && k < group.first + group.count; ++k) {
      all_zero = x.a[k].value_class == ValueClass::zero || x.b[k].value_class == ValueClass::zero;
    }
    if (all_zero) {
      ++zero_groups;
      continue;
    }
    show_group(d, dp, x, r, g, group.term && !said);
    said = said || group.term;
  }
  if (zero_groups > 0) {
    d.paragraph(std::to_string(zero_groups) +
                (rule.group_terms == 1 ? " more products are zero" : " more groups are all zero") +
                " (not shown): zero terms, with no part in the alignment exponent "
                "(zeros take e_zero, the floor).");
  }
  show_block(d, dp, r);

  if (!dp.alignment_fraction_bits) return d;  // the datapath is exact already
  Datapath exact = dp;
  exact.alignment_fraction_bits = std::nullopt;
  d.heading("With exact alignment");
  try {
    validate(exact);  // the exact accumulator must hold the scaled terms' span
  } catch (const std::invalid_argument& e) {
    d.paragraph(std::string("This datapath with --alignment-bits exact is beyond the emulator: ") +
                e.what() + ".");
    return d;
  }
  const Run e = run_block(exact, x);
  d.paragraph(
      "The same block with --alignment-bits exact (no term truncated, the exact sum "
      "rounded once " +
      std::string(dp.block_rounding == Rounding::toward_zero ? "toward zero" : "to nearest even") +
      "): d = " + operand(dp.accumulator, e.result) +
      (e.result == r.result
           ? ", the same."
           : ", where the datapath gives " + to_hex(dp.accumulator, r.result) + "."));
  return d;
}

}  // namespace

Topic block_scaled_topic() {
  auto options = datapath_option_names();
  for (const char* o : {"a", "b", "c", "scale-a", "scale-b"}) options.insert(o);
  return {"block-scaled", "one block-scaled (MX, NVFP4) block: groups, scales, truncation", usage(),
          options, run};
}

}  // namespace tcemu::cli::explain
