#include <algorithm>

#include <tcemu/backend/complex_product.hpp>

namespace tcemu {

ComplexProduct::ComplexProduct(Backend& backend, const ComplexMatrix& a, bool conjugate_a,
                               const ComplexMatrix& b, bool conjugate_b, Real value) {
  const std::int64_t m = a.rows, k = a.cols, n = b.cols;
  const Real parts = part_format(a.format);
  const auto bytes = [](std::int64_t rows, std::int64_t cols, Real r) {
    return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * real_bytes(r);
  };
  // A2 row-major and B2 column-major: both contiguous along the inner dimension 2k.
  a2_buffer_ = backend.allocate(bytes(m, 2 * k, parts));
  b2_buffer_ = backend.allocate(bytes(2 * k, 2 * n, parts));
  value_buffer_ = backend.allocate(bytes(m, 2 * n, value));
  a2_ = {&a2_buffer_, 0, parts, m, 2 * k, std::max<std::int64_t>(1, 2 * k), Layout::row_major};
  b2_ = {&b2_buffer_,         0, parts, 2 * k, 2 * n, std::max<std::int64_t>(1, 2 * k),
         Layout::column_major};
  value_ = {&value_buffer_, 0, value, m, 2 * n, std::max<std::int64_t>(1, m), Layout::column_major};
  backend.complex_real_form(a, conjugate_a, a2_);
  backend.complex_real_form(b, conjugate_b, b2_);
}

}  // namespace tcemu
