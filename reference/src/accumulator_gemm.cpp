#include <tcemu/reference/accumulator_gemm.hpp>

#include <tcemu/backend/exact_dot.hpp>

#include "column_workers.hpp"

namespace tcemu::reference {
namespace {

// Row i of column-major A (lda = m) against column j of B, exactly, rounded once.
template <RealType T>
double element(std::int64_t m, std::int64_t k, const double* a_row, const double* b_col) {
  ExactDot<T> sum;
  for (std::int64_t p = 0; p < k; ++p) {
    sum.add(static_cast<T>(a_row[p * m]), static_cast<T>(b_col[p]));
  }
  return static_cast<double>(sum.result());
}

}  // namespace

std::vector<double> accumulator_gemm(std::int64_t m, std::int64_t n, std::int64_t k,
                                     const std::vector<double>& a, const std::vector<double>& b,
                                     bool to_fp32, int threads) {
  std::vector<double> c(static_cast<std::size_t>(m * n));
  detail::for_each_column(n, threads, [&](std::int64_t j) {
    for (std::int64_t i = 0; i < m; ++i) {
      c[static_cast<std::size_t>(j * m + i)] =
          to_fp32 ? element<float>(m, k, a.data() + i, b.data() + j * k)
                  : element<double>(m, k, a.data() + i, b.data() + j * k);
    }
  });
  return c;
}

}  // namespace tcemu::reference
