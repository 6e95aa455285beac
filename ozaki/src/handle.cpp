#include <tcemu/ozaki/handle.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <tcemu/ozaki/split_rule.hpp>

#include "scheme.hpp"

namespace tcemu::ozaki {
namespace {

[[noreturn]] void xerbla(const char* routine, int number, const char* name,
                         const std::string& what) {
  throw std::invalid_argument(std::string(routine) + ": parameter " + std::to_string(number) +
                              " (" + name + ") " + what);
}

// 'N' -> false, 'T' / 'C' -> true (real matrices: C is T); anything else is nothing.
std::optional<bool> transposed(char t) {
  switch (t) {
    case 'N':
    case 'n':
      return false;
    case 'T':
    case 't':
    case 'C':
    case 'c':
      return true;
    default:
      return std::nullopt;
  }
}

void check_ld(const char* routine, int number, const char* name, std::int64_t ld,
              std::int64_t rows) {
  if (ld < std::max<std::int64_t>(1, rows)) {
    xerbla(routine, number, name,
           "= " + std::to_string(ld) + " must be >= max(1, " + std::to_string(rows) + ")");
  }
}

// Bytes of a column-major array of `cols` columns with leading dimension ld holding `rows`
// rows: BLAS reads no further than the last column's last row.
std::size_t extent_bytes(std::int64_t rows, std::int64_t cols, std::int64_t ld,
                         std::size_t element) {
  if (rows == 0 || cols == 0) return 0;
  return static_cast<std::size_t>((cols - 1) * ld + rows) * element;
}

}  // namespace

Handle::Handle(Backend& backend, Products products, Options options)
    : backend_(backend), products_(std::move(products)), options_(options) {
  exact_product_bits(products_);  // refuses products that cannot be exact
  if (options_.mode == Mode::tunable && options_.splits < 1) {
    throw std::invalid_argument("ozaki: tunable mode needs splits >= 1, got " +
                                std::to_string(options_.splits));
  }
  if (options_.mode == Mode::cr && options_.max_splits < 1) {
    throw std::invalid_argument("ozaki: max_splits must be >= 1");
  }
  workspace_ = backend_.allocate(options_.workspace_bytes);
}

void Handle::dgemm(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k,
                   double alpha, const double* a, std::int64_t lda, const double* b,
                   std::int64_t ldb, double beta, double* c, std::int64_t ldc) {
  if (options_.mode == Mode::sp) {
    throw std::invalid_argument("dgemm: mode sp is SGEMM-TC; call sgemm");
  }
  gemm("dgemm", transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void Handle::sgemm(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k,
                   float alpha, const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
                   float beta, float* c, std::int64_t ldc) {
  if (options_.mode != Mode::sp && options_.mode != Mode::tunable) {
    throw std::invalid_argument("sgemm: modes sp and tunable only");
  }
  gemm("sgemm", transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

template <typename T>
void Handle::gemm(const char* routine, char transa, char transb, std::int64_t m, std::int64_t n,
                  std::int64_t k, double alpha, const T* a, std::int64_t lda, const T* b,
                  std::int64_t ldb, double beta, T* c, std::int64_t ldc) {
  // Checked in BLAS's order, numbered as its xerbla numbers them.
  const auto ta = transposed(transa), tb = transposed(transb);
  if (!ta) xerbla(routine, 1, "transa", "= '" + std::string(1, transa) + "' is not N, T or C");
  if (!tb) xerbla(routine, 2, "transb", "= '" + std::string(1, transb) + "' is not N, T or C");
  if (m < 0) xerbla(routine, 3, "m", "= " + std::to_string(m) + " must be >= 0");
  if (n < 0) xerbla(routine, 4, "n", "= " + std::to_string(n) + " must be >= 0");
  if (k < 0) xerbla(routine, 5, "k", "= " + std::to_string(k) + " must be >= 0");
  const std::int64_t a_rows = *ta ? k : m, a_cols = *ta ? m : k;
  const std::int64_t b_rows = *tb ? n : k, b_cols = *tb ? k : n;
  check_ld(routine, 8, "lda", lda, a_rows);
  check_ld(routine, 10, "ldb", ldb, b_rows);
  check_ld(routine, 13, "ldc", ldc, m);
  report_ = Report{};
  if (m == 0 || n == 0 || ((alpha == 0.0 || k == 0) && beta == 1.0)) return;
  const bool products_needed = alpha != 0.0 && k > 0;
  if (products_needed && (a == nullptr || b == nullptr)) {
    xerbla(routine, a == nullptr ? 7 : 9, a == nullptr ? "a" : "b", "is null");
  }
  if (c == nullptr) xerbla(routine, 12, "c", "is null");

  constexpr Real type = std::is_same_v<T, double> ? Real::fp64 : Real::fp32;
  const std::size_t element = sizeof(T);
  const std::size_t c_bytes = extent_bytes(m, n, ldc, element);
  Buffer c_buffer = backend_.allocate(c_bytes);
  backend_.copy_in(c, c_buffer, c_bytes);
  const RealMatrix c_matrix{&c_buffer, 0, type, m, n, ldc, Layout::column_major};
  // Without products A and B are not read (BLAS): empty views stand in for them.
  Buffer a_buffer, b_buffer;
  RealMatrix a_matrix{&a_buffer, 0, type, m, 0, std::max<std::int64_t>(1, m), Layout::column_major};
  RealMatrix b_matrix{&b_buffer, 0, type, 0, n, 1, Layout::column_major};
  if (products_needed) {
    const std::size_t a_bytes = extent_bytes(a_rows, a_cols, lda, element);
    const std::size_t b_bytes = extent_bytes(b_rows, b_cols, ldb, element);
    a_buffer = backend_.allocate(a_bytes);
    b_buffer = backend_.allocate(b_bytes);
    backend_.copy_in(a, a_buffer, a_bytes);
    backend_.copy_in(b, b_buffer, b_bytes);
    // A transposed, stored k x m column-major, is op(A) = m x k row-major with the same ld.
    a_matrix = {&a_buffer, 0, type, m, k, lda, *ta ? Layout::row_major : Layout::column_major};
    b_matrix = {&b_buffer, 0, type, k, n, ldb, *tb ? Layout::row_major : Layout::column_major};
  }
  run(alpha, a_matrix, b_matrix, beta, c_matrix);
  backend_.copy_out(c_buffer, c, c_bytes);
}

void Handle::gemm(double alpha, const RealMatrix& a, const RealMatrix& b, double beta,
                  const RealMatrix& c) {
  auto refuse = [](const std::string& what) {
    throw std::invalid_argument("ozaki::Handle::gemm: " + what);
  };
  auto shape = [](const RealMatrix& x) {
    return std::to_string(x.rows) + " x " + std::to_string(x.cols);
  };
  if (a.cols != b.rows || c.rows != a.rows || c.cols != b.cols) {
    refuse("A " + shape(a) + " times B " + shape(b) + " does not give C " + shape(c));
  }
  if (a.type != b.type || a.type != c.type) refuse("A, B and C must hold the same type");
  const bool fp64 = a.type == Real::fp64;
  const bool mode_takes_it = options_.mode == Mode::tunable || fp64 == (options_.mode != Mode::sp);
  if (!mode_takes_it) {
    refuse(std::string("mode ") +
           (options_.mode == Mode::sp ? "sp takes fp32" : "dp and cr take fp64") + " matrices");
  }
  report_ = Report{};
  if (c.rows == 0 || c.cols == 0 || ((alpha == 0.0 || a.cols == 0) && beta == 1.0)) return;
  run(alpha, a, b, beta, c);
}

void Handle::run(double alpha, const RealMatrix& a, const RealMatrix& b, double beta,
                 const RealMatrix& c) {
  if (alpha == 0.0 || a.cols == 0) {
    backend_.epilogue(std::nullopt, std::nullopt, alpha, beta, c, std::nullopt, std::nullopt, c);
    return;
  }
  detail::run_scheme(backend_, products_, options_, workspace_,
                     {a, b, c, alpha, beta, a.type == Real::fp64 ? 53 : 24}, report_);
}

}  // namespace tcemu::ozaki
