// Inputs and helpers of the accurate-BLAS tests.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <tcemu/test/same_bits.hpp>

namespace tcemu::accurate::testing {

// (rand - 0.5) * exp(phi * randn), the inputs of the Ozaki papers.
inline std::vector<double> phi_vector(std::int64_t count, double phi, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> x(static_cast<std::size_t>(count));
  for (double& v : x) v = (uniform(rng) - 0.5) * std::exp(phi * normal(rng));
  return x;
}

// The same rounded to binary32 values.
inline std::vector<double> as_fp32_values(std::vector<double> x) {
  for (double& v : x) v = static_cast<float>(v);
  return x;
}

inline std::string hex(double v) {
  char text[40];
  std::snprintf(text, sizeof text, "%a (0x%016llx)", v,
                static_cast<unsigned long long>(std::bit_cast<std::uint64_t>(v)));
  return text;
}

inline std::uint64_t bits(double v) {
  return std::bit_cast<std::uint64_t>(v);
}

// `got` has the bits of `expected`, both C = A B of m x n, A m x k and B k x n, column major; a
// failure lists the first differing elements with what row i of A and column j of B span.
template <typename T>
::testing::AssertionResult same_product_bits(const std::vector<T>& expected,
                                             const std::vector<T>& got, std::int64_t m,
                                             std::int64_t n, std::int64_t k,
                                             const std::vector<T>& a, const std::vector<T>& b) {
  return test::same_bits(expected, got, m, n,
                         {.inputs = test::gemm_inputs(m, k, a.data(), b.data())});
}

}  // namespace tcemu::accurate::testing
