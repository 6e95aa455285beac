#include <tcemu/backend/blas_call.hpp>

#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tcemu {
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

bool check_trans(const char* routine, int number, const char* name, char t) {
  const auto is = transposed(t);
  if (!is) xerbla(routine, number, name, "= '" + std::string(1, t) + "' is not N, T or C");
  return *is;
}

void check_dimension(const char* routine, int number, const char* name, std::int64_t v) {
  if (v < 0) xerbla(routine, number, name, "= " + std::to_string(v) + " must be >= 0");
}

void check_ld(const char* routine, int number, const char* name, std::int64_t ld,
              std::int64_t rows) {
  if (ld < std::max<std::int64_t>(1, rows)) {
    xerbla(routine, number, name,
           "= " + std::to_string(ld) + " must be >= max(1, " + std::to_string(rows) + ")");
  }
}

void check_null(const char* routine, int number, const char* name, const void* p) {
  if (p == nullptr) xerbla(routine, number, name, "is null");
}

// Bytes of a column-major array of `cols` columns with leading dimension ld holding `rows`
// rows: BLAS reads no further than the last column's last row.
std::size_t extent_bytes(std::int64_t rows, std::int64_t cols, std::int64_t ld,
                         std::size_t element) {
  if (rows == 0 || cols == 0) return 0;
  return static_cast<std::size_t>((cols - 1) * ld + rows) * element;
}

// Element i of a BLAS vector of n elements with increment inc (negative: from the far end).
std::int64_t vector_index(std::int64_t i, std::int64_t n, std::int64_t inc) {
  return inc >= 0 ? i * inc : (n - 1 - i) * -inc;
}

template <RealType T>
constexpr Real real_of() {
  return std::is_same_v<T, double> ? Real::fp64 : Real::fp32;
}

// The operands' stored shapes of a ?gemm, after its argument checks in BLAS's order, numbered as
// its xerbla numbers them (the same for the real and the complex routines).
struct GemmShape {
  bool ta, tb;
  std::int64_t a_rows, a_cols, b_rows, b_cols;
};
GemmShape check_gemm(const char* routine, char transa, char transb, std::int64_t m, std::int64_t n,
                     std::int64_t k, std::int64_t lda, std::int64_t ldb, std::int64_t ldc) {
  const bool ta = check_trans(routine, 1, "transa", transa);
  const bool tb = check_trans(routine, 2, "transb", transb);
  check_dimension(routine, 3, "m", m);
  check_dimension(routine, 4, "n", n);
  check_dimension(routine, 5, "k", k);
  const GemmShape g{ta, tb, ta ? k : m, ta ? m : k, tb ? n : k, tb ? k : n};
  check_ld(routine, 8, "lda", lda, g.a_rows);
  check_ld(routine, 10, "ldb", ldb, g.b_rows);
  check_ld(routine, 13, "ldc", ldc, m);
  return g;
}

// A ?gemm's pointers past its quick return: A and B when there are products to form, C always.
void check_pointers(const char* routine, bool products, const void* a, const void* b,
                    const void* c) {
  if (products) {
    check_null(routine, 7, "a", a);
    check_null(routine, 9, "b", b);
  }
  check_null(routine, 12, "c", c);
}

bool conjugates(char t) {
  return t == 'C' || t == 'c';
}

// The stored rows x cols column-major array x (leading dimension ld) copied into `buffer` of
// `backend`, viewed as op(X): X, or (transposed) X^T, the stored array read as a row-major
// cols x rows matrix with the same ld. The view's buffer is left null (BlasCall::in sets it).
template <class Element, class Format>
BufferMatrixOf<Format> copied_in(Backend& backend, Buffer& buffer, const Element* x,
                                 std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                 bool transposed, Format format) {
  const std::size_t bytes = extent_bytes(rows, cols, ld, sizeof(Element));
  buffer = backend.allocate(bytes);
  backend.copy_in(x, buffer, bytes);
  return {nullptr,
          0,
          format,
          transposed ? cols : rows,
          transposed ? rows : cols,
          ld,
          transposed ? Layout::row_major : Layout::column_major};
}

}  // namespace

template <RealType T>
RealMatrix BlasCall::vector_in(Buffer& buffer, const T* x, std::int64_t n, std::int64_t inc) {
  constexpr Real type = real_of<T>();
  if (inc > 0) {
    const std::size_t bytes = extent_bytes(1, n, inc, sizeof(T));
    buffer = backend_->allocate(bytes);
    backend_->copy_in(x, buffer, bytes);
    return {nullptr, 0, type, n, 1, inc, Layout::row_major};
  }
  std::vector<T> gathered(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) gathered[i] = x[vector_index(i, n, inc)];
  buffer = backend_->allocate(gathered.size() * sizeof(T));
  backend_->copy_in(gathered.data(), buffer, gathered.size() * sizeof(T));
  return {nullptr, 0, type, n, 1, 1, Layout::row_major};
}

template <RealType T>
BlasCall BlasCall::gemm(Backend& backend, const char* routine, char transa, char transb,
                        std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,
                        std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c,
                        std::int64_t ldc) {
  const GemmShape g = check_gemm(routine, transa, transb, m, n, k, lda, ldb, ldc);
  BlasCall call(backend);
  if (m == 0 || n == 0 || ((alpha == 0 || k == 0) && beta == 1)) return call;
  const bool products = alpha != 0 && k > 0;
  check_pointers(routine, products, a, b, c);
  constexpr Real type = real_of<T>();
  call.alpha_ = alpha;
  call.beta_ = beta;
  call.c_ = copied_in(backend, call.c_buffer_, c, m, n, ldc, false, type);
  call.c_host_ = c;
  call.work_ = products ? Work::products : Work::scale_c;
  if (!products) return call;
  call.a_ = copied_in(backend, call.a_buffer_, a, g.a_rows, g.a_cols, lda, g.ta, type);
  call.b_ = copied_in(backend, call.b_buffer_, b, g.b_rows, g.b_cols, ldb, g.tb, type);
  return call;
}

template <RealType T>
BlasCall BlasCall::complex_gemm(Backend& backend, const char* routine, char transa, char transb,
                                std::int64_t m, std::int64_t n, std::int64_t k,
                                std::complex<T> alpha, const std::complex<T>* a, std::int64_t lda,
                                const std::complex<T>* b, std::int64_t ldb, std::complex<T> beta,
                                std::complex<T>* c, std::int64_t ldc, Real value) {
  const GemmShape g = check_gemm(routine, transa, transb, m, n, k, lda, ldb, ldc);
  BlasCall call(backend);
  const std::complex<T> zero = 0, one = 1;
  if (m == 0 || n == 0 || ((alpha == zero || k == 0) && beta == one)) return call;
  const bool products = alpha != zero && k > 0;
  check_pointers(routine, products, a, b, c);
  constexpr Complex type = std::is_same_v<T, double> ? Complex::c128 : Complex::c64;
  call.complex_ = true;
  call.complex_alpha_ = {alpha.real(), alpha.imag()};
  call.complex_beta_ = {beta.real(), beta.imag()};
  call.value_ = value;
  call.complex_c_ = copied_in(backend, call.complex_c_buffer_, c, m, n, ldc, false, type);
  call.c_host_ = c;
  call.work_ = products ? Work::products : Work::scale_c;
  if (!products) return call;
  const auto operand = [&](Buffer& buffer, const std::complex<T>* x, std::int64_t rows,
                           std::int64_t cols, std::int64_t ld, bool t) {
    ComplexMatrix view = copied_in(backend, buffer, x, rows, cols, ld, t, type);
    view.buffer = &buffer;
    return view;
  };
  Buffer a_buffer, b_buffer;  // the operands, needed only until their real forms are built
  call.form_ = std::make_unique<ComplexProduct>(
      backend, operand(a_buffer, a, g.a_rows, g.a_cols, lda, g.ta), conjugates(transa),
      operand(b_buffer, b, g.b_rows, g.b_cols, ldb, g.tb), conjugates(transb), value);
  return call;
}

template <RealType T>
BlasCall BlasCall::gemv(Backend& backend, const char* routine, char trans, std::int64_t m,
                        std::int64_t n, T alpha, const T* a, std::int64_t lda, const T* x,
                        std::int64_t incx, T beta, T* y, std::int64_t incy) {
  const bool t = check_trans(routine, 1, "trans", trans);
  check_dimension(routine, 2, "m", m);
  check_dimension(routine, 3, "n", n);
  check_ld(routine, 6, "lda", lda, m);
  if (incx == 0) xerbla(routine, 8, "incx", "= 0 must not be zero");
  if (incy == 0) xerbla(routine, 11, "incy", "= 0 must not be zero");
  BlasCall call(backend);
  if (m == 0 || n == 0 || (alpha == 0 && beta == 1)) return call;
  const std::int64_t rows = t ? n : m, k = t ? m : n;  // op(A) is rows x k
  if (alpha != 0) {
    check_null(routine, 5, "a", a);
    check_null(routine, 7, "x", x);
  }
  check_null(routine, 10, "y", y);
  call.alpha_ = alpha;
  call.beta_ = beta;
  call.c_ = call.vector_in(call.c_buffer_, y, rows, incy);
  call.c_host_ = y;
  call.c_inc_ = incy;
  call.work_ = alpha != 0 ? Work::products : Work::scale_c;
  if (alpha == 0) return call;
  call.a_ = copied_in(backend, call.a_buffer_, a, m, n, lda, t, real_of<T>());
  call.b_ = call.vector_in(call.b_buffer_, x, k, incx);
  return call;
}

template <RealType T>
BlasCall BlasCall::dot(Backend& backend, const char* routine, std::int64_t n, const T* x,
                       std::int64_t incx, const T* y, std::int64_t incy, T* result) {
  check_null(routine, 0, "result", result);
  *result = 0;
  BlasCall call(backend);
  if (n <= 0) return call;
  check_null(routine, 2, "x", x);
  check_null(routine, 4, "y", y);
  call.c_buffer_ = backend.allocate(sizeof(T));
  backend.copy_in(result, call.c_buffer_, sizeof(T));
  call.c_ = {nullptr, 0, real_of<T>(), 1, 1, 1, Layout::column_major};
  call.c_host_ = result;
  call.work_ = Work::products;
  // x' as a 1 x n row: the column of the gathered or strided x, read as its transpose.
  RealMatrix row = call.vector_in(call.a_buffer_, x, n, incx);
  call.a_ = {row.buffer, 0, row.format, 1, n, row.ld, Layout::column_major};
  call.b_ = call.vector_in(call.b_buffer_, y, n, incy);
  return call;
}

void BlasCall::scale_c() {
  if (complex_) {
    backend_->complex_epilogue(std::nullopt, value_, complex_alpha_, complex_beta_, complex_c());
    return;
  }
  backend_->epilogue(std::nullopt, std::nullopt, alpha_, beta_, c(), std::nullopt, std::nullopt,
                     c());
}

void BlasCall::finish(fp64::Direction d) {
  if (work_ == Work::none) return;
  if (complex_) {
    if (form_) {
      backend_->complex_epilogue(form_->value(), value_, complex_alpha_, complex_beta_, complex_c(),
                                 d);
    }
    backend_->copy_out(complex_c_buffer_, c_host_,
                       extent_bytes(complex_c_.rows, complex_c_.cols, complex_c_.ld,
                                    element_bytes(complex_c_.format)));
    return;
  }
  const std::size_t element = real_bytes(c_.format);
  if (c_inc_ == 0) {
    backend_->copy_out(c_buffer_, c_host_, extent_bytes(c_.rows, c_.cols, c_.ld, element));
    return;
  }
  const std::int64_t n = c_.rows;
  if (c_inc_ > 0) {
    backend_->copy_out(c_buffer_, c_host_, extent_bytes(1, n, c_inc_, element));
    return;
  }
  std::vector<unsigned char> gathered(static_cast<std::size_t>(n) * element);
  backend_->copy_out(c_buffer_, gathered.data(), gathered.size());
  auto* out = static_cast<unsigned char*>(c_host_);
  for (std::int64_t i = 0; i < n; ++i) {
    std::memcpy(out + vector_index(i, n, c_inc_) * element, gathered.data() + i * element, element);
  }
}

#define TCEMU_BLAS_CALL(T)                                                                        \
  template BlasCall BlasCall::gemm<T>(Backend&, const char*, char, char, std::int64_t,            \
                                      std::int64_t, std::int64_t, T, const T*, std::int64_t,      \
                                      const T*, std::int64_t, T, T*, std::int64_t);               \
  template BlasCall BlasCall::gemv<T>(Backend&, const char*, char, std::int64_t, std::int64_t, T, \
                                      const T*, std::int64_t, const T*, std::int64_t, T, T*,      \
                                      std::int64_t);                                              \
  template BlasCall BlasCall::dot<T>(Backend&, const char*, std::int64_t, const T*, std::int64_t, \
                                     const T*, std::int64_t, T*);
TCEMU_BLAS_CALL(double)
TCEMU_BLAS_CALL(float)
template BlasCall BlasCall::complex_gemm<double>(Backend&, const char*, char, char, std::int64_t,
                                                 std::int64_t, std::int64_t, std::complex<double>,
                                                 const std::complex<double>*, std::int64_t,
                                                 const std::complex<double>*, std::int64_t,
                                                 std::complex<double>, std::complex<double>*,
                                                 std::int64_t, Real);
template BlasCall BlasCall::complex_gemm<float>(Backend&, const char*, char, char, std::int64_t,
                                                std::int64_t, std::int64_t, std::complex<float>,
                                                const std::complex<float>*, std::int64_t,
                                                const std::complex<float>*, std::int64_t,
                                                std::complex<float>, std::complex<float>*,
                                                std::int64_t, Real);
#undef TCEMU_BLAS_CALL

}  // namespace tcemu
