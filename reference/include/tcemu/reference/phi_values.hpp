// The inputs of Mukunoki, Ozaki, Ogita and Imamura (ISC 2020) and the OzBLAS papers:
// (rand - 0.5) exp(phi randn), where phi sets the spread of the exponents (phi = 0: uniform in
// [-0.5, 0.5)). Every test, experiment and benchmark draws them here, so that a seed means the
// same values everywhere.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace tcemu::reference {

// `count` values from `rng`, a uniform and then a normal draw per value, each value computed in
// binary64 and converted to T (float: rounded to nearest).
template <class T = double>
std::vector<T> phi_values(std::int64_t count, double phi, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> uniform(-0.5, 0.5);
  std::normal_distribution<double> normal;
  std::vector<T> x(static_cast<std::size_t>(count));
  for (T& v : x) v = static_cast<T>(uniform(rng) * std::exp(phi * normal(rng)));
  return x;
}

// The same from a generator seeded with `seed`.
template <class T = double>
std::vector<T> phi_values(std::int64_t count, double phi, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  return phi_values<T>(count, phi, rng);
}

}  // namespace tcemu::reference
