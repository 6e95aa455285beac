// explain long-accumulator: Kulisch's long accumulator (the library's LongAccumulator,
// long_accumulator.hpp): where each binary64 value lands among its 64-bit limbs, the carries and
// borrows that run into higher limbs, and the one rounding at the end.
#include <bit>
#include <cmath>
#include <cstdio>

#include <tcemu/backend/long_accumulator.hpp>
#include <tcemu/emulator/fp64_bits.hpp>

#include "topics.hpp"
#include "values.hpp"

namespace tcemu::cli::explain {
namespace {

constexpr const char* kUsage = R"(usage: tcemu explain long-accumulator [VALUE...] [--format F]

Adds binary64 values one by one into the library's long accumulator (long_accumulator.hpp:
67 limbs of 64 bits, a two's-complement integer times 2^-2148) and shows which limbs each value
lands in, which limbs a carry or borrow reaches, the limbs at the end, and the one rounding to
binary64. Default: 0x1.fffffffffffffp27 0x1p-25 -1 0.1 (a carry into limb 34, a borrow back).

)";

using Acc = LongAccumulator;

std::string hex_limb(std::uint64_t limb) {
  char buffer[20];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(limb));
  return buffer;
}

std::string limb_range(int first, int last) {
  return first == last ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(last);
}

Document run(const session::Arguments& args) {
  std::vector<double> values;
  for (const std::string& w :
       args.positional().empty()
           ? std::vector<std::string>{"0x1.fffffffffffffp27", "0x1p-25", "-1", "0.1"}
           : args.positional()) {
    values.push_back(number("value", w));
    if (!std::isfinite(values.back()))
      throw session::UsageError("long-accumulator takes finite numbers");
  }
  Document d("The long accumulator on " + std::to_string(values.size()) + " values");
  d.paragraph("The accumulator holds a two's-complement integer in " + std::to_string(Acc::kLimbs) +
              " little-endian 64-bit limbs times 2^" + std::to_string(Acc::kLsbExponent) +
              ": bit j of limb i has weight 2^(64 i + j - " + std::to_string(-Acc::kLsbExponent) +
              ").");
  d.why(
      "a finite binary64 value is an integer M < 2^53 times 2^e with e >= -1074, so it is a "
      "whole number of accumulator bits below 2^1024: every add is an exact integer addition "
      "(Kulisch; long_accumulator.hpp).");
  d.heading("Each value and where it lands");
  Acc acc;
  Table adds{
      {"value", "M x 2^e (M odd)", "bits set (bit 0: 2^-2148)", "limbs", "carry or borrow into"},
      {}};
  for (const double x : values) {
    const fp64::Fields f = fp64::fields(x);
    std::uint64_t before[Acc::kLimbs];
    for (int i = 0; i < Acc::kLimbs; ++i) before[i] = acc.limb(i);
    acc.add(x);
    if (f.significand == 0) {
      adds.rows.push_back({decimal(x), "0", "-", "-", "-"});
      continue;
    }
    // M without its trailing zeros: the bits the value sets.
    const int zeros = std::countr_zero(f.significand);
    const std::uint64_t m = f.significand >> zeros;
    const int e = f.exponent + zeros;
    const int first = e - Acc::kLsbExponent;
    const int last = first + static_cast<int>(std::bit_width(m)) - 1;
    // The limbs above the value's own that changed: a carry or borrow runs through consecutive
    // limbs, so they are one range.
    int carry_first = -1, carry_last = -1;
    for (int i = last / 64 + 1; i < Acc::kLimbs; ++i) {
      if (acc.limb(i) != before[i]) {
        if (carry_first < 0) carry_first = i;
        carry_last = i;
      }
    }
    const std::string carried = carry_first < 0 ? "" : limb_range(carry_first, carry_last);
    adds.rows.push_back(
        {decimal(x),
         std::string(f.negative ? "-" : "") + std::to_string(m) + " x 2^" + std::to_string(e),
         limb_range(first, last), limb_range(first / 64, last / 64),
         carried.empty() ? "-" : carried});
  }
  d.table(adds);
  d.why(
      "a negative value is subtracted: the borrow runs up while it is nonzero, as the carry "
      "of an addition does (add_shifted).");

  d.heading("The limbs at the end");
  Table limbs{{"limb", "weight of its bit 0", "hex"}, {}};
  int top = Acc::kLimbs - 1;
  const std::uint64_t fill = acc.negative() ? ~std::uint64_t{0} : 0;
  while (top > 0 && acc.limb(top - 1) == fill) --top;
  for (int i = 0; i < Acc::kLimbs; ++i) {
    if (i == top && fill != 0) {
      limbs.rows.push_back(
          {limb_range(i, Acc::kLimbs - 1), "", hex_limb(fill) + " (the sign, extended)"});
      break;
    }
    if (acc.limb(i) != 0) {
      limbs.rows.push_back({std::to_string(i), "2^" + std::to_string(64 * i + Acc::kLsbExponent),
                            hex_limb(acc.limb(i))});
    }
  }
  d.table(limbs);

  d.heading("The one rounding");
  const ExactMagnitude m = acc.magnitude();
  const double result = acc.round_to_double();
  if (m.significand == 0) {
    d.paragraph("The sum is exactly zero: the result is +0.");
    return d;
  }
  const int lead = m.lsb_exponent + static_cast<int>(std::bit_width(m.significand)) - 1;
  d.paragraph("magnitude() reads the leading 64 bits of |sum|" +
              std::string(m.sticky ? " and a sticky bit (nonzero bits below them)" : "") +
              "; round_nearest_even keeps 53 of them and rounds to nearest, ties to even.");
  std::vector<BitRow> rows{{"|sum|",
                            {false, m.significand, m.lsb_exponent},
                            m.sticky ? "+ sticky" : "exact",
                            lead - 52}};
  if (std::isfinite(result))
    rows.push_back({"result", binary_of(std::fabs(result)), decimal(result), {}});
  d.bits(rows);
  d.why(std::isfinite(result)
            ? "the accumulator is exact, so this is the only rounding: the result is the exact "
              "sum rounded once (" +
                  hexfloat(result) + ")."
            : "the exact sum rounds above the largest binary64: the result is " + decimal(result) +
                  ".");
  return d;
}

}  // namespace

Topic long_accumulator_topic() {
  return {"long-accumulator",
          "the long accumulator: limbs, carries, the final rounding",
          kUsage,
          {},
          run,
          true};
}

}  // namespace tcemu::cli::explain
