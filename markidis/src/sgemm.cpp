#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

#include <tcemu/backend/fp32_split_elements.hpp>
#include <tcemu/markidis/gemm.hpp>

namespace tcemu::markidis {
namespace {

[[noreturn]] void bad_parameter(const std::string& parameter, const std::string& what) {
  throw std::invalid_argument("sgemm: parameter " + parameter + " " + what);
}

bool no_trans(char t) {
  return t == 'N' || t == 'n';
}
bool valid_trans(char t) {
  return no_trans(t) || t == 'T' || t == 't' || t == 'C' || t == 'c';
}

// A column-major host matrix (rows x cols, leading dimension ld) into a dense buffer (ld = rows):
// one copy when it is dense already, one per column otherwise.
Buffer copy_in(Backend& backend, const float* host, std::int64_t rows, std::int64_t cols,
               std::int64_t ld) {
  const auto column = static_cast<std::size_t>(rows) * sizeof(float);
  Buffer buffer = backend.allocate(column * static_cast<std::size_t>(cols));
  if (ld == rows) {
    backend.copy_in(host, buffer, column * static_cast<std::size_t>(cols));
  } else {
    for (std::int64_t j = 0; j < cols; ++j) {
      backend.copy_in(host + j * ld, buffer, column, column * static_cast<std::size_t>(j));
    }
  }
  return buffer;
}

}  // namespace

void sgemm(Backend& backend, const Scheme& scheme, const Datapath& datapath, char transa,
           char transb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
           std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
           std::int64_t ldc, int threads) {
  // The checks of reference BLAS's sgemm, in its order.
  if (!valid_trans(transa)) bad_parameter("transa", "= '" + std::string(1, transa) + "'");
  if (!valid_trans(transb)) bad_parameter("transb", "= '" + std::string(1, transb) + "'");
  if (m < 0) bad_parameter("m", "= " + std::to_string(m) + " < 0");
  if (n < 0) bad_parameter("n", "= " + std::to_string(n) + " < 0");
  if (k < 0) bad_parameter("k", "= " + std::to_string(k) + " < 0");
  const std::int64_t a_rows = no_trans(transa) ? m : k, a_cols = no_trans(transa) ? k : m;
  const std::int64_t b_rows = no_trans(transb) ? k : n, b_cols = no_trans(transb) ? n : k;
  auto check_ld = [](const char* name, std::int64_t ld, std::int64_t rows) {
    if (ld < std::max<std::int64_t>(1, rows)) {
      bad_parameter(name, "= " + std::to_string(ld) + " < max(1, " + std::to_string(rows) + ")");
    }
  };
  check_ld("lda", lda, a_rows);
  check_ld("ldb", ldb, b_rows);
  check_ld("ldc", ldc, m);
  validate(scheme, datapath);

  if (m == 0 || n == 0 || ((alpha == 0.0f || k == 0) && beta == 1.0f)) return;
  if (alpha == 0.0f || k == 0) {
    // C = beta C without A B; C is not read when beta == 0.
    const auto beta_bits = std::bit_cast<std::uint32_t>(beta);
    for (std::int64_t j = 0; j < n; ++j) {
      for (std::int64_t i = 0; i < m; ++i) {
        float& x = c[j * ldc + i];
        x = beta == 0.0f
                ? 0.0f
                : std::bit_cast<float>(fp32_mul_rn(beta_bits, std::bit_cast<std::uint32_t>(x)));
      }
    }
    return;
  }

  const Buffer a_buffer = copy_in(backend, a, a_rows, a_cols, lda);
  const Buffer b_buffer = copy_in(backend, b, b_rows, b_cols, ldb);
  const auto c_bytes = static_cast<std::size_t>(m * n) * sizeof(float);
  Buffer c_buffer = beta != 0.0f ? copy_in(backend, c, m, n, ldc) : backend.allocate(c_bytes);
  // op(X) of a column-major X with leading dimension ld is X itself, or X^T: the same memory
  // read as a row-major matrix with the same ld.
  auto op = [](const Buffer& buffer, bool plain, std::int64_t rows, std::int64_t cols,
               std::int64_t stored_rows) {
    return BufferMatrix{&buffer,
                        0,
                        formats::fp32,
                        rows,
                        cols,
                        std::max<std::int64_t>(stored_rows, 1),
                        plain ? Layout::column_major : Layout::row_major};
  };
  const BufferMatrix a_matrix = op(a_buffer, no_trans(transa), m, k, a_rows);
  const BufferMatrix b_matrix = op(b_buffer, no_trans(transb), k, n, b_rows);
  const BufferMatrix c_matrix = op(c_buffer, true, m, n, m);
  gemm(backend, scheme, datapath, a_matrix, b_matrix,
       beta != 0.0f ? std::optional<BufferMatrix>(c_matrix) : std::nullopt, c_matrix,
       {.alpha = alpha, .beta = beta, .threads = threads});
  const auto column = static_cast<std::size_t>(m) * sizeof(float);
  for (std::int64_t j = 0; j < n; ++j) {
    backend.copy_out(c_buffer, c + j * ldc, column, column * static_cast<std::size_t>(j));
  }
}

}  // namespace tcemu::markidis
