// explain twosum: Knuth's TwoSum (error_free.hpp's two_sum, 6 operations, any order of
// magnitudes) and Dekker's FastTwoSum (3 operations, |a| >= |b|) on two binary64 numbers.
#include <cmath>

#include <tcemu/backend/error_free.hpp>
#include <tcemu/backend/long_accumulator.hpp>

#include "topics.hpp"
#include "values.hpp"

namespace tcemu::cli::explain {
namespace {

constexpr const char* kUsage = R"(usage: tcemu explain twosum [A B] [--format F]

s + e = a + b exactly, s = RN(a + b): Knuth's TwoSum (the library's two_sum, error_free.hpp)
step by step, then Dekker's FastTwoSum, in binary64. Default: a = 0.1, b = 0.2.

)";

BitRow row(const std::string& label, double x) {
  return {label, binary_of(x), decimal(x), {}};
}

// a + b - s - e in the long accumulator: zero exactly when s + e = a + b.
bool sums_match(double a, double b, double s, double e) {
  LongAccumulator acc;
  for (const double x : {a, b, -s, -e}) acc.add(x);
  return acc.magnitude().significand == 0;
}

Document run(const session::Arguments& args) {
  const auto words = positional_values(args, 2, {"0.1", "0.2"});
  const double a = number("a", words[0]), b = number("b", words[1]);
  if (!std::isfinite(a) || !std::isfinite(b))
    throw session::UsageError("twosum takes finite numbers");
  const SumAndError<double> r = two_sum(a, b);
  if (!std::isfinite(r.sum))
    throw session::UsageError("a + b overflows: TwoSum needs a finite sum");
  Document d("TwoSum and FastTwoSum of a = " + decimal(a) + " and b = " + decimal(b));
  d.heading("The operands");
  d.bits({row("a", a), row("b", b)});

  d.heading("TwoSum (Knuth 1969, Møller 1965), as two_sum in error_free.hpp computes it");
  const double bb = sub_rn(r.sum, a), ab = sub_rn(r.sum, bb);
  const double da = sub_rn(a, ab), db = sub_rn(b, bb);
  d.table({{"step", "operation", "value", "binary64 bits"},
           {{"1", "s = RN(a + b)", decimal(r.sum), hex64(r.sum)},
            {"2", "b' = RN(s - a)", decimal(bb), hex64(bb)},
            {"3", "a' = RN(s - b')", decimal(ab), hex64(ab)},
            {"4", "da = RN(a - a')", decimal(da), hex64(da)},
            {"5", "db = RN(b - b')", decimal(db), hex64(db)},
            {"6", "e = RN(da + db)", decimal(r.error), hex64(r.error)}}});
  d.why(
      "b' and a' are the parts of b and a that s holds, and a - a', b - b' and their sum are "
      "exact (Knuth 1969, TAOCP vol. 2, 4.2.2): s + e = a + b exactly for all finite a, b "
      "whose sum does not overflow, whatever their order of magnitude.");
  d.bits({row("a + b = s", r.sum), row("      + e", r.error)});
  d.paragraph(std::string("Check in the long accumulator (long_accumulator.hpp): a + b - s - e ") +
              (sums_match(a, b, r.sum, r.error) ? "= 0 exactly." : "!= 0: NOT exact."));

  d.heading("FastTwoSum (Dekker 1971): three operations when |a| >= |b|");
  const bool swap = std::fabs(a) < std::fabs(b);
  const double x = swap ? b : a, y = swap ? a : b;
  const double s = add_rn(x, y), z = sub_rn(s, x), e = sub_rn(y, z);
  d.paragraph(swap ? "|a| < |b|: the operands are swapped, x = b, y = a."
                   : "|a| >= |b|: x = a, y = b.");
  d.table({{"step", "operation", "value", "binary64 bits"},
           {{"1", "s = RN(x + y)", decimal(s), hex64(s)},
            {"2", "z = RN(s - x)", decimal(z), hex64(z)},
            {"3", "e = RN(y - z)", decimal(e), hex64(e)}}});
  d.why(
      "with |x| >= |y|, z = s - x and y - z are computed exactly (Dekker 1971), so s + e = x + y "
      "exactly; without that order e can be wrong.");
  d.paragraph(std::string("FastTwoSum ") + (s == r.sum && e == r.error
                                                ? "gives the same s and e as TwoSum."
                                                : "differs from TwoSum."));
  return d;
}

}  // namespace

Topic twosum_topic() {
  return {"twosum", "TwoSum and FastTwoSum: s + e = a + b exactly", kUsage, {}, run, true};
}

}  // namespace tcemu::cli::explain
