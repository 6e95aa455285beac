#include "blas_gemm.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace tcemu::python {
namespace {

std::string shape(const BlasMatrix& x) {
  return "[" + std::to_string(x.rows) + ", " + std::to_string(x.cols) + "]";
}

// Raises TypeError unless op has the dtype of `a` (the call's first operand).
void require_type_of(const Operand& op, const BlasMatrix& a) {
  if (!a.complex) {
    require_real(op, a.real);
    return;
  }
  require_complex(op, a.real == Real::fp64 ? Complex::c128 : Complex::c64);
}

}  // namespace

BlasGemm blas_gemm(const Operand& a, const Operand& b, const std::optional<Operand>& c) {
  BlasMatrix ma = blas_matrix(a);
  require_type_of(b, ma);
  BlasMatrix mb = blas_matrix(b);
  if (ma.cols != mb.rows) {
    throw nb::value_error(("a " + shape(ma) + " and b " + shape(mb) + " do not multiply").c_str());
  }
  const std::int64_t m = ma.rows, n = mb.cols, k = ma.cols;
  NewArray out =
      new_array({static_cast<std::size_t>(m), static_cast<std::size_t>(n)},
                ma.complex ? dtype_of(ma.real == Real::fp64 ? Complex::c128 : Complex::c64)
                           : dtype_of(ma.real),
                Layout::column_major);
  if (c) {
    require_type_of(*c, ma);
    const BlasMatrix mc = blas_matrix(*c);
    if (mc.rows != m || mc.cols != n) {
      throw nb::value_error(("c " + shape(mc) + " must be [" + std::to_string(m) + ", " +
                             std::to_string(n) + "] for a " + shape(ma) + " and b " + shape(mb))
                                .c_str());
    }
    const std::size_t size = real_bytes(ma.real) * (ma.complex ? 2 : 1);
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
  const Real real = ma.real;
  const bool complex = ma.complex;
  return {real, complex, std::move(ma), std::move(mb), m, n, k, std::move(out)};
}

void run_gemm(BlasRoutines& routines, BlasGemm& g, std::complex<double> alpha,
              std::complex<double> beta) {
  if (!g.complex && (alpha.imag() != 0 || beta.imag() != 0)) {
    throw nb::value_error("a complex alpha or beta needs complex arrays");
  }
  const std::int64_t ldc = std::max<std::int64_t>(g.m, 1);
  nb::gil_scoped_release release;
  using Z = std::complex<double>;
  using C = std::complex<float>;
  const auto single = [](Z x) {
    return C(static_cast<float>(x.real()), static_cast<float>(x.imag()));
  };
  if (g.complex && g.real == Real::fp64) {
    routines.zgemm(g.a.trans, g.b.trans, g.m, g.n, g.k, alpha, static_cast<const Z*>(g.a.data),
                   g.a.ld, static_cast<const Z*>(g.b.data), g.b.ld, beta, static_cast<Z*>(g.c.data),
                   ldc);
  } else if (g.complex) {
    routines.cgemm(g.a.trans, g.b.trans, g.m, g.n, g.k, single(alpha),
                   static_cast<const C*>(g.a.data), g.a.ld, static_cast<const C*>(g.b.data), g.b.ld,
                   single(beta), static_cast<C*>(g.c.data), ldc);
  } else if (g.real == Real::fp64) {
    routines.dgemm(g.a.trans, g.b.trans, g.m, g.n, g.k, alpha.real(),
                   static_cast<const double*>(g.a.data), g.a.ld,
                   static_cast<const double*>(g.b.data), g.b.ld, beta.real(),
                   static_cast<double*>(g.c.data), ldc);
  } else {
    routines.sgemm(g.a.trans, g.b.trans, g.m, g.n, g.k, static_cast<float>(alpha.real()),
                   static_cast<const float*>(g.a.data), g.a.ld, static_cast<const float*>(g.b.data),
                   g.b.ld, static_cast<float>(beta.real()), static_cast<float*>(g.c.data), ldc);
  }
}

}  // namespace tcemu::python
