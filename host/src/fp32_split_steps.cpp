// The fp32 split steps on the host: the element functions of fp32_split_elements.hpp and
// nonfinite_products.hpp on every element.
#include "fp32_split_steps.hpp"

#include <algorithm>
#include <vector>

#include <tcemu/backend/fp32_split_elements.hpp>
#include <tcemu/backend/nonfinite_products.hpp>

#include "host_matrix_view.hpp"

namespace tcemu::detail {

Fp32Summary host_summarize_fp32(const BufferMatrix& x) {
  const ConstMatrixView v = host_view(x);
  Fp32Summary summary;
  for (std::int64_t i = 0; i < x.rows; ++i) {
    for (std::int64_t j = 0; j < x.cols; ++j) {
      const std::uint32_t magnitude = v.get(i, j) & 0x7FFFFFFFu;
      if (magnitude > 0x7F800000u) {
        ++summary.nan_count;
      } else if (magnitude == 0x7F800000u) {
        ++summary.inf_count;
      } else {
        summary.max_abs_bits = std::max(summary.max_abs_bits, magnitude);
      }
    }
  }
  return summary;
}
std::int64_t host_split_fp32(const BufferMatrix& x, const BufferMatrix& part,
                             const std::optional<BufferMatrix>& residual, Rounding rounding,
                             int scale_exponent) {
  const ConstMatrixView from = host_view(x);
  const MatrixView to = host_view_mutable(part);
  std::optional<MatrixView> rest;
  if (residual) rest = host_view_mutable(*residual);
  std::int64_t overflows = 0;
  for (std::int64_t i = 0; i < x.rows; ++i) {
    for (std::int64_t j = 0; j < x.cols; ++j) {
      // Read before writing: the residual may alias x.
      const SplitElement e =
          split_fp32_element(from.get(i, j), part.format, rounding, scale_exponent);
      to.set(i, j, e.part);
      if (rest) rest->set(i, j, e.residual);
      overflows += e.overflow ? 1 : 0;
    }
  }
  return overflows;
}
void host_combine_fp32(const BufferMatrix& x, const std::optional<BufferMatrix>& y,
                       const std::optional<BufferMatrix>& c, const BufferMatrix& d,
                       const CombineOptions& options) {
  const ConstMatrixView xv = host_view(x);
  std::optional<ConstMatrixView> yv, cv;
  if (y) yv = host_view(*y);
  if (c) cv = host_view(*c);
  const MatrixView dv = host_view_mutable(d);
  for (std::int64_t i = 0; i < x.rows; ++i) {
    for (std::int64_t j = 0; j < x.cols; ++j) {
      dv.set(i, j,
             combine_fp32_element(xv.get(i, j), yv.has_value(), yv ? yv->get(i, j) : 0,
                                  options.beta == 0.0f ? 0 : cv->get(i, j), options.y_exponent,
                                  options.scale_exponent, options.alpha, options.beta));
    }
  }
}
void host_propagate_nonfinite_fp32(const BufferMatrix& a, const BufferMatrix& b,
                                   const BufferMatrix& d) {
  const ConstMatrixView av = host_view(a), bv = host_view(b);
  const MatrixView dv = host_view_mutable(d);
  const std::int64_t m = a.rows, k = a.cols, n = b.cols;
  auto nonfinite = [](std::uint32_t bits) { return (bits & 0x7F800000u) == 0x7F800000u; };
  // The k indices holding a NaN or Inf, per row of A and per column of B.
  std::vector<std::vector<std::int64_t>> row_special(m), col_special(n);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t p = 0; p < k; ++p) {
      if (nonfinite(av.get(i, p))) row_special[i].push_back(p);
    }
  }
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t p = 0; p < k; ++p) {
      if (nonfinite(bv.get(p, j))) col_special[j].push_back(p);
    }
  }
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      if (row_special[i].empty() && col_special[j].empty()) continue;
      NonfiniteProducts products;
      for (std::int64_t p : row_special[i]) products.add_fp32(av.get(i, p), bv.get(p, j));
      // A p in both lists is added twice, which changes nothing.
      for (std::int64_t p : col_special[j]) products.add_fp32(av.get(i, p), bv.get(p, j));
      dv.set(i, j, products.fp32_bits());
    }
  }
}

}  // namespace tcemu::detail
