#include <tcemu/reference/plain_gemm.hpp>

#include <tcemu/emulator/floating_point_scope.hpp>

namespace tcemu::reference {

std::vector<double> plain_dgemm(std::int64_t m, std::int64_t n, std::int64_t k,
                                const std::vector<double>& a, const std::vector<double>& b) {
  const FloatingPointScope scope;
  const auto at = [](std::int64_t i) { return static_cast<std::size_t>(i); };
  std::vector<double> c(at(m * n), 0.0);
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = 0; i < m; ++i) {
      double s = 0.0;
      for (std::int64_t p = 0; p < k; ++p) s = s + a[at(p * m + i)] * b[at(j * k + p)];
      c[at(j * m + i)] = s;
    }
  }
  return c;
}

}  // namespace tcemu::reference
