#include <tcemu/reference/ill_conditioned.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

#include <tcemu/backend/exact_dot.hpp>
#include <tcemu/emulator/floating_point_scope.hpp>

namespace tcemu::reference {
namespace {

double exact_dot(const std::vector<double>& x, const std::vector<double>& y, std::size_t count) {
  ExactDot<double> sum;
  for (std::size_t i = 0; i < count; ++i) sum.add(x[i], y[i]);
  return sum.result();
}

}  // namespace

IllConditionedDot ill_conditioned_dot(std::int64_t n, double target_condition, std::uint64_t seed) {
  const FloatingPointScope scope;
  if (n < 6) throw std::invalid_argument("ill_conditioned_dot: n = " + std::to_string(n) + " < 6");
  if (!(target_condition >= 1)) throw std::invalid_argument("ill_conditioned_dot: condition < 1");
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto signed_unit = [&] { return 2 * unit(rng) - 1; };
  const double b = std::log2(target_condition);
  const auto size = static_cast<std::size_t>(n), half = size / 2;
  IllConditionedDot d;
  d.x.resize(size);
  d.y.resize(size);
  for (std::size_t i = 0; i < half; ++i) {
    double e = std::round(unit(rng) * b / 2);
    if (i == 0) e = std::round(b / 2) + 1;
    if (i == half - 1) e = 0;
    d.x[i] = std::ldexp(signed_unit(), static_cast<int>(e));
    d.y[i] = std::ldexp(signed_unit(), static_cast<int>(e));
  }
  const std::size_t rest = size - half;
  for (std::size_t i = half; i < size; ++i) {
    const double t = rest == 1 ? 0 : static_cast<double>(i - half) / static_cast<double>(rest - 1);
    const auto e = static_cast<int>(std::round(b / 2 * (1 - t)));  // linspace(b/2, 0)
    d.x[i] = std::ldexp(signed_unit(), e);
    d.y[i] = (std::ldexp(signed_unit(), e) - exact_dot(d.x, d.y, i)) / d.x[i];
  }
  std::vector<std::size_t> order(size);
  for (std::size_t i = 0; i < size; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<double> x(size), y(size);
  for (std::size_t i = 0; i < size; ++i) {
    x[i] = d.x[order[i]];
    y[i] = d.y[order[i]];
  }
  d.x = std::move(x);
  d.y = std::move(y);
  d.exact = exact_dot(d.x, d.y, size);
  ExactDot<double> absolute;
  for (std::size_t i = 0; i < size; ++i) absolute.add(std::fabs(d.x[i]), std::fabs(d.y[i]));
  d.condition = 2 * absolute.result() / std::fabs(d.exact);
  return d;
}

}  // namespace tcemu::reference
