// Binary32 operands whose product the double rounding exact -> binary64 -> binary32 gets wrong
// in every direction: the inputs of the correctly rounded sgemm and cgemm tests (host and GPU).
#pragma once

#include <cstdint>
#include <vector>

#include <tcemu/reference/phi_values.hpp>

namespace tcemu::test {

// A (m x kDoubleRoundingK) and B (kDoubleRoundingK x 4), column-major, every value a binary32
// number held in a double. B's columns: ones; 2^-100 (binary32's subnormal results); random
// values (phi = 1); minus ones. A's first rows sum three terms t1 + t2 + t3 (the other entries
// 0), each a case of x (column 0), x 2^-100 (column 1) and -x (column 3) where RN_53 lands on a
// binary32 number or midpoint that x is not:
//   1 + 2^-24 + 2^-80          RN_53 = the midpoint 1 + 2^-24: ties to even give 1, x rounds up
//   1 + 2^-80, 1 - 2^-80       RN_53 = 1: upward (downward) leaves 1, x goes to its neighbour
//   (2^-50 + 2^-120) 2^-100    RN_53 = 2^-150, half the least subnormal: 0 by ties to even,
//                              2^-149 correctly
//   2^-120 2^-100 = 2^-220     no double rounding: 2^-149 upward, 0 downward, toward zero and
//                              to nearest
//   2^127 + (2^127 - 2^103) - 2^40   RN_53 = 2^128 - 2^103, the midpoint of binary32's largest
//                              finite and 2^128: Inf by ties to even, the largest finite
//                              correctly
// The rows after them are random binary32 values (phi = 1, seed `seed`).
inline constexpr std::int64_t kDoubleRoundingK = 5;
struct DoubleRoundingCases {
  std::int64_t m, n, k;
  std::vector<double> a, b;
};
inline DoubleRoundingCases double_rounding_cases(std::int64_t random_rows, std::uint64_t seed) {
  const double cases[][3] = {{1.0, 0x1p-24, 0x1p-80},   {1.0, 0x1p-80, 0.0},
                             {1.0, -0x1p-80, 0.0},      {0x1p-50, 0x1p-120, 0.0},
                             {0x1p-120, 0.0, 0.0},      {0x1p127, 0x1p127 - 0x1p103, -0x1p40},
                             {-1.0, -0x1p-24, -0x1p-80}};
  constexpr std::int64_t kCases = sizeof(cases) / sizeof(cases[0]);
  DoubleRoundingCases c{kCases + random_rows, 4, kDoubleRoundingK, {}, {}};
  c.a.assign(static_cast<std::size_t>(c.m * c.k), 0.0);
  const std::vector<double> random = reference::phi_values(random_rows * c.k + c.k, 1.0, seed);
  for (std::int64_t i = 0; i < c.m; ++i) {
    for (std::int64_t p = 0; p < c.k; ++p) {
      const double v = i < kCases ? (p < 3 ? cases[i][p] : 0.0)
                                  : static_cast<float>(random[(i - kCases) * c.k + p]);
      c.a[static_cast<std::size_t>(p * c.m + i)] = v;
    }
  }
  c.b.resize(static_cast<std::size_t>(c.k * c.n));
  for (std::int64_t p = 0; p < c.k; ++p) {
    c.b[static_cast<std::size_t>(p)] = 1.0;
    c.b[static_cast<std::size_t>(c.k + p)] = 0x1p-100;
    c.b[static_cast<std::size_t>(2 * c.k + p)] = static_cast<float>(random[random_rows * c.k + p]);
    c.b[static_cast<std::size_t>(3 * c.k + p)] = -1.0;
  }
  return c;
}

}  // namespace tcemu::test
