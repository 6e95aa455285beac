// explain dot2: Ogita, Rump and Oishi's Dot2 (SISC 26(6), 2005, Algorithm 5.3; the library's
// Dot2 in dot2.hpp) step by step, its error bound, and the result against the exact dot product
// rounded once (exact_dot.hpp).
#include <cmath>

#include <tcemu/backend/dot2.hpp>
#include <tcemu/backend/exact_dot.hpp>
#include <tcemu/backend/long_accumulator.hpp>

#include "topics.hpp"
#include "values.hpp"

namespace tcemu::cli::explain {
namespace {

constexpr const char* kUsage = R"(usage: tcemu explain dot2 [--x LIST --y LIST] [--format F]

Dot2 (Ogita, Rump and Oishi 2005, Algorithm 5.3; dot2.hpp) on x . y in binary64, one term at a
time: [h, r] = TwoProd(x_i, y_i), [s, q] = TwoSum(s, h), c = c + (q + r); result s + c. Then
its error bound u |x.y| + gamma_n^2 |x|.|y| beside the error it made and that of the plain
loop, both measured against the exact dot product (exact_dot.hpp, one rounding).
  --x LIST, --y LIST   n values each, comma or space separated
Default: x = (1e16, 1, -1e16, 0.1), y = (1, 1, 1, 3): the plain loop loses the 1.

)";

// |v - x.y| rounded once: the difference accumulated exactly (add_product, long_accumulator.hpp).
double error_of(double v, const std::vector<double>& x, const std::vector<double>& y) {
  LongAccumulator acc;
  acc.add(v);
  for (std::size_t i = 0; i < x.size(); ++i) acc.add_product(-x[i], y[i]);
  return std::fabs(acc.round_to_double());
}

Document run(const session::Arguments& args) {
  const std::vector<double> x = numbers("--x", args.value_or("x", "1e16, 1, -1e16, 0.1"));
  const std::vector<double> y = numbers("--y", args.value_or("y", "1, 1, 1, 3"));
  if (x.empty() || x.size() != y.size())
    throw session::UsageError("--x and --y need the same length >= 1");
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i]) || !std::isfinite(y[i]))
      throw session::UsageError("dot2 takes finite numbers");
  }
  const std::size_t n = x.size();
  Document d("Dot2 of " + std::to_string(n) + " terms (Ogita, Rump and Oishi 2005)");
  d.heading("Each term: TwoProd, then TwoSum into the running sum");
  Dot2<double> dot;
  double plain = 0, abs_dot = 0;
  Table steps{{"i", "x_i", "y_i", "h = RN(x_i y_i)", "r (TwoProd)", "s = RN(s + h)", "q (TwoSum)",
               "c = RN(c + RN(q + r))"},
              {}};
  for (std::size_t i = 0; i < n; ++i) {
    const SumAndError<double> h = two_prod(x[i], y[i]);
    const SumAndError<double> s = two_sum(dot.sum, h.sum);
    dot.add(x[i], y[i]);
    plain = add_rn(plain, mul_rn(x[i], y[i]));
    abs_dot = add_rn(abs_dot, std::fabs(mul_rn(x[i], y[i])));
    steps.rows.push_back({std::to_string(i), decimal(x[i]), decimal(y[i]), decimal(h.sum),
                          decimal(h.error), decimal(dot.sum), decimal(s.error),
                          decimal(dot.error)});
  }
  d.table(steps);
  d.why(
      "h + r = x_i y_i and s + q = s_old + h exactly (TwoProd, TwoSum: error_free.hpp), so "
      "s + (the exact sum of every r and q) is the exact dot product; c sums those errors in "
      "binary64, the one place where Dot2 rounds.");
  const double result = dot.result();
  ExactDot<double> exact_dot;
  for (std::size_t i = 0; i < n; ++i) exact_dot.add(x[i], y[i]);
  const double exact = exact_dot.result();
  d.heading("The result s + c and the exact dot product");
  d.bits({{"s", binary_of(dot.sum), decimal(dot.sum), {}},
          {"c", binary_of(dot.error), decimal(dot.error), {}},
          {"Dot2 = RN(s + c)", binary_of(result), decimal(result), {}},
          {"exact, rounded once", binary_of(exact), decimal(exact), {}},
          {"plain loop", binary_of(plain), decimal(plain), {}}});
  d.paragraph(std::string("Dot2 ") + (result == exact ? "equals" : "differs from") +
              " the exact dot product rounded once (ExactDot, exact_dot.hpp: a long "
              "accumulator).");

  d.heading("The bound it guarantees");
  const double u = 0x1p-53;
  const double nu = static_cast<double>(n) * u;
  const double gamma = nu / (1 - nu);
  const double bound = u * std::fabs(exact) + gamma * gamma * abs_dot;
  d.paragraph(
      "|Dot2 - x.y| <= u |x.y| + gamma_n^2 |x|.|y|, u = 2^-53, gamma_n = n u / (1 - n u) "
      "(Ogita, Rump and Oishi 2005, section 5; no underflow): as accurate as the "
      "plain loop in twice the working precision, then rounded.");
  d.table({{"quantity", "value"},
           {{"n", std::to_string(n)},
            {"gamma_n", decimal(gamma)},
            {"|x|.|y| (binary64)", decimal(abs_dot)},
            {"condition number |x|.|y| / |x.y|",
             exact == 0 ? "inf" : decimal(abs_dot / std::fabs(exact))},
            {"bound (binary64, approximate)", decimal(bound)},
            {"|Dot2 - x.y| (exact, rounded once)", decimal(error_of(result, x, y))},
            {"|plain - x.y| (exact, rounded once)", decimal(error_of(plain, x, y))}}});
  return d;
}

}  // namespace

Topic dot2_topic() {
  return {"dot2",
          "Dot2 step by step, with its error bound (Ogita, Rump and Oishi 2005)",
          kUsage,
          {"x", "y"},
          run};
}

}  // namespace tcemu::cli::explain
