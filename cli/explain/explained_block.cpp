#include "explained_block.hpp"

#include <bit>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/emulator/convert.hpp>

namespace tcemu::cli::explain {

Binary binary_of(const Decoded& x) {
  return {x.negative, x.value_class == ValueClass::finite ? x.significand : 0, x.lsb_exponent};
}

bool is_number(const Decoded& x) {
  return x.value_class == ValueClass::zero || x.value_class == ValueClass::finite;
}

std::string value_text(const FloatFormat& f, std::uint32_t bits) {
  const Decoded x = decode(f, bits);
  if (x.value_class == ValueClass::nan) return "NaN";
  if (x.value_class == ValueClass::infinity) return x.negative ? "-Inf" : "Inf";
  return decimal(to_double(f, bits));
}

void explain_terms_and_rounding(Document& d, const Datapath& dp, const BlockTrace& trace,
                                const std::vector<std::string>& labels, std::optional<int> grid,
                                std::uint32_t result) {
  std::vector<BitRow> rows;
  for (std::size_t i = 0; i < trace.terms.size(); ++i) {
    const BlockTrace::Term& t = trace.terms[i];
    const Binary before{t.negative, t.significand, t.lsb_exponent};
    const Binary kept{t.negative, t.kept, t.kept_lsb_exponent};
    const bool lost = t.lsb_exponent < t.kept_lsb_exponent &&
                      (t.kept << (t.kept_lsb_exponent - t.lsb_exponent)) != t.significand;
    rows.push_back({i < labels.size() ? labels[i] : "term", before,
                    decimal(before) + (lost ? " -> " + decimal(kept) : ""), grid});
  }
  const int precision = dp.block_result_precision;
  if (trace.sum.significand != 0) {
    const Binary sum{trace.sum_negative, trace.sum.significand, trace.sum.lsb_exponent};
    const int lead = sum.lsb_exponent + static_cast<int>(std::bit_width(sum.significand)) - 1;
    rows.push_back({"sum of kept", sum, "exact" + std::string(trace.sum.sticky ? " + sticky" : ""),
                    lead - precision + 1});
  }
  const Decoded decoded = decode(dp.accumulator, result);
  const std::string result_text = std::string(dp.accumulator.name) + " " +
                                  to_hex(dp.accumulator, result) + " = " +
                                  value_text(dp.accumulator, result);
  if (is_number(decoded)) rows.push_back({"d", binary_of(decoded), result_text, {}});
  d.bits(std::move(rows));
  if (!is_number(decoded)) d.paragraph("d = " + result_text + ": the rounding overflowed.");
  d.why(
      "the kept terms are summed exactly (block_fma.hpp's WideSum), then rounded once " +
      std::string(dp.block_rounding == Rounding::toward_zero ? "toward zero" : "to nearest even") +
      " to " + std::to_string(precision) + " significant bits (" +
      std::string(dp.accumulator.name) + ").");
  if (dp.c_entry == AccumulatorEntry::added_after_blocks) {
    d.paragraph("c enters after the block: d = RN(block + c) (accumulator_add).");
  }
}

}  // namespace tcemu::cli::explain
