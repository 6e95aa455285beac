// explain twoprod: the error-free product p + e = a b, with a fused multiply-add (error_free.hpp's
// two_prod) and without one, by Veltkamp's split and Dekker's product (Dekker 1971).
#include <cmath>

#include <tcemu/backend/error_free.hpp>
#include <tcemu/backend/long_accumulator.hpp>

#include "topics.hpp"
#include "values.hpp"

namespace tcemu::cli::explain {
namespace {

constexpr const char* kUsage = R"(usage: tcemu explain twoprod [A B] [--format F]

p + e = a b exactly, p = RN(a b): with a fused multiply-add (the library's two_prod,
error_free.hpp), then without one by Veltkamp's split into 26-bit halves and Dekker's product,
in binary64. Default: a = 0.1, b = 10 (p is exactly 1, e is what the rounding hid).

)";

BitRow row(const std::string& label, double x) {
  return {label, binary_of(x), decimal(x), {}};
}

// Veltkamp's split: hi + lo = x exactly, hi with at most 26 significant bits, lo with at most 26
// (Dekker 1971, with C = 2^27 + 1; no overflow of C x).
struct Halves {
  double gamma, delta, hi, lo;
};
Halves veltkamp(double x) {
  const double gamma = mul_rn(0x1p27 + 1, x);
  const double delta = sub_rn(gamma, x);
  const double hi = sub_rn(gamma, delta);
  return {gamma, delta, hi, sub_rn(x, hi)};
}

Document run(const session::Arguments& args) {
  const auto words = positional_values(args, 2, {"0.1", "10"});
  const double a = number("a", words[0]), b = number("b", words[1]);
  if (!std::isfinite(a) || !std::isfinite(b))
    throw session::UsageError("twoprod takes finite numbers");
  const SumAndError<double> r = two_prod(a, b);
  if (!std::isfinite(r.sum))
    throw session::UsageError("a b overflows: TwoProd needs a finite product");
  Document d("TwoProd of a = " + decimal(a) + " and b = " + decimal(b));
  d.heading("The operands");
  d.bits({row("a", a), row("b", b)});

  d.heading("With a fused multiply-add (two_prod in error_free.hpp)");
  d.table({{"step", "operation", "value", "binary64 bits"},
           {{"1", "p = RN(a b)", decimal(r.sum), hex64(r.sum)},
            {"2", "e = fma(a, b, -p) = RN(a b - p)", decimal(r.error), hex64(r.error)}}});
  d.why(
      "the error a b - p of a rounded product is a binary64 number (Dekker 1971) and the FMA "
      "rounds only once, so e is that error exactly, when p does not overflow and "
      "e_a + e_b >= -970 (Boldo and Muller).");
  d.bits({row("a b = p", r.sum), row("    + e", r.error)});
  LongAccumulator check;
  check.add_product(a, b);
  check.add(-r.sum);
  check.add(-r.error);
  d.paragraph(std::string("Check in the long accumulator (add_product, long_accumulator.hpp): "
                          "a b - p - e ") +
              (check.magnitude().significand == 0 ? "= 0 exactly." : "!= 0: NOT exact."));

  d.heading("Without an FMA: Veltkamp's split (C = 2^27 + 1)");
  const Halves ha = veltkamp(a), hb = veltkamp(b);
  d.table({{"operand", "gamma = RN(C x)", "delta = RN(gamma - x)", "hi = RN(gamma - delta)",
            "lo = RN(x - hi)"},
           {{"a", decimal(ha.gamma), decimal(ha.delta), decimal(ha.hi), decimal(ha.lo)},
            {"b", decimal(hb.gamma), decimal(hb.delta), decimal(hb.hi), decimal(hb.lo)}}});
  d.bits({row("a", a), row("a hi", ha.hi), row("a lo", ha.lo), row("b", b), row("b hi", hb.hi),
          row("b lo", hb.lo)});
  d.why(
      "hi keeps the leading 26 bits of x and lo = x - hi is exact with at most 26 bits "
      "(Dekker 1971), so every product of halves has at most 52 bits: exact in binary64.");

  d.heading("Dekker's product");
  const double p = mul_rn(a, b);
  const double t1 = sub_rn(mul_rn(ha.hi, hb.hi), p);
  const double t2 = add_rn(t1, mul_rn(ha.hi, hb.lo));
  const double t3 = add_rn(t2, mul_rn(ha.lo, hb.hi));
  const double e = add_rn(t3, mul_rn(ha.lo, hb.lo));
  d.table({{"step", "operation", "value"},
           {{"1", "p = RN(a b)", decimal(p)},
            {"2", "t1 = RN(a_hi b_hi - p)", decimal(t1)},
            {"3", "t2 = RN(t1 + a_hi b_lo)", decimal(t2)},
            {"4", "t3 = RN(t2 + a_lo b_hi)", decimal(t3)},
            {"5", "e = RN(t3 + a_lo b_lo)", decimal(e)}}});
  d.why(
      "each product of halves is exact, and each step removes the leading part of what is "
      "left of a b - p, so every subtraction and addition is exact too (Dekker 1971, "
      "mul12; no underflow): e = a b - p.");
  d.paragraph(std::string("Dekker's e ") +
              (e == r.error ? "equals the FMA's e." : "differs from the FMA's e (underflow?)."));
  return d;
}

}  // namespace

Topic twoprod_topic() {
  return {"twoprod", "TwoProd with an FMA, and by Veltkamp's split and Dekker's product",
          kUsage,    {},
          run,       true};
}

}  // namespace tcemu::cli::explain
