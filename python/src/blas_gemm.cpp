#include "blas_gemm.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace tcemu::python {
namespace {

std::string shape(const BlasMatrix& x) {
  return "[" + std::to_string(x.rows) + ", " + std::to_string(x.cols) + "]";
}

}  // namespace

BlasGemm blas_gemm(const Operand& a, const Operand& b, const std::optional<Operand>& c) {
  BlasMatrix ma = blas_matrix(a);
  require_real(b, ma.real);
  BlasMatrix mb = blas_matrix(b);
  if (ma.cols != mb.rows) {
    throw nb::value_error(("a " + shape(ma) + " and b " + shape(mb) + " do not multiply").c_str());
  }
  const std::int64_t m = ma.rows, n = mb.cols, k = ma.cols;
  NewArray out = new_array({static_cast<std::size_t>(m), static_cast<std::size_t>(n)},
                           dtype_of(ma.real), Layout::column_major);
  if (c) {
    require_real(*c, ma.real);
    const BlasMatrix mc = blas_matrix(*c);
    if (mc.rows != m || mc.cols != n) {
      throw nb::value_error(("c " + shape(mc) + " must be [" + std::to_string(m) + ", " +
                             std::to_string(n) + "] for a " + shape(ma) + " and b " + shape(mb))
                                .c_str());
    }
    const std::size_t size = real_bytes(ma.real);
    const auto* from = static_cast<const unsigned char*>(mc.data);
    auto* to = static_cast<unsigned char*>(out.data);
    for (std::int64_t j = 0; j < n; ++j) {
      for (std::int64_t i = 0; i < m; ++i) {
        const std::int64_t at = mc.trans == 'N' ? j * mc.ld + i : i * mc.ld + j;
        std::memcpy(to + static_cast<std::size_t>(j * m + i) * size,
                    from + static_cast<std::size_t>(at) * size, size);
      }
    }
  }
  return {ma.real, std::move(ma), std::move(mb), m, n, k, std::move(out)};
}

void run_gemm(BlasRoutines& routines, BlasGemm& g, double alpha, double beta) {
  const std::int64_t ldc = std::max<std::int64_t>(g.m, 1);
  nb::gil_scoped_release release;
  if (g.real == Real::fp64) {
    routines.dgemm(g.a.trans, g.b.trans, g.m, g.n, g.k, alpha, static_cast<const double*>(g.a.data),
                   g.a.ld, static_cast<const double*>(g.b.data), g.b.ld, beta,
                   static_cast<double*>(g.c.data), ldc);
  } else {
    routines.sgemm(g.a.trans, g.b.trans, g.m, g.n, g.k, static_cast<float>(alpha),
                   static_cast<const float*>(g.a.data), g.a.ld, static_cast<const float*>(g.b.data),
                   g.b.ld, static_cast<float>(beta), static_cast<float*>(g.c.data), ldc);
  }
}

}  // namespace tcemu::python
