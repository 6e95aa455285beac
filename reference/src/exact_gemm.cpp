#include <tcemu/reference/exact_gemm.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>

#include <tcemu/reference/mpfr_number.hpp>

namespace tcemu::reference {
namespace {

// One element: the exact sum of x_p y_p rounded once.
double element(std::int64_t k, const double* x, std::int64_t x_stride, const double* y,
               bool to_fp32) {
  int emax = -100000, emin = 100000;
  double special = 0.0;
  bool finite = true;
  for (std::int64_t p = 0; p < k; ++p) {
    const double product = x[p * x_stride] * y[p];  // only for exponents and special values
    if (!std::isfinite(x[p * x_stride]) || !std::isfinite(y[p])) {
      finite = false;
      special += product;
      continue;
    }
    if (x[p * x_stride] == 0.0 || y[p] == 0.0) continue;
    // The exact product lies in [2^(ea + eb), 2^(ea + eb + 2)).
    const int e = std::ilogb(x[p * x_stride]) + std::ilogb(y[p]);
    emax = std::max(emax, e + 2);
    emin = std::min(emin, e - 106);
  }
  if (!finite) return special;  // IEEE's NaN or Inf, as a standard DGEMM gives
  if (emax < emin) return 0.0;  // every product is zero: +0 (the sum of a +0 start)
  const auto bits = static_cast<mpfr_prec_t>(emax - emin + 64);
  MpfrNumber sum(Precision{bits}), product(Precision{120}), xp(Precision{53}), yp(Precision{53});
  for (std::int64_t p = 0; p < k; ++p) {
    const double xv = x[p * x_stride], yv = y[p];
    const double high = xv * yv;
    if (std::fabs(high) >= 0x1p-900 && std::isfinite(high)) {
      // x y = high + low exactly (the FMA's one rounding of x y - high is exact, as the product
      // is far from the subnormal range); both are added exactly.
      const double low = std::fma(xv, yv, -high);
      mpfr_add_d(sum.get(), sum.get(), high, MPFR_RNDN);
      mpfr_add_d(sum.get(), sum.get(), low, MPFR_RNDN);
      continue;
    }
    mpfr_set_d(xp.get(), xv, MPFR_RNDN);
    mpfr_set_d(yp.get(), yv, MPFR_RNDN);
    product.mul(xp, yp, MPFR_RNDN);    // exact in 106 bits
    sum.add(sum, product, MPFR_RNDN);  // exact: every partial sum fits `bits`
  }
  if (to_fp32) return static_cast<double>(mpfr_get_flt(sum.get(), MPFR_RNDN));
  return sum.to_double(MPFR_RNDN);
}

}  // namespace

std::vector<double> correctly_rounded_gemm(std::int64_t m, std::int64_t n, std::int64_t k,
                                           const std::vector<double>& a,
                                           const std::vector<double>& b, bool to_fp32,
                                           int threads) {
  std::vector<double> c(static_cast<std::size_t>(m * n));
  std::atomic<std::int64_t> next{0};
  auto work = [&] {
    for (std::int64_t j; (j = next.fetch_add(1)) < n;) {
      for (std::int64_t i = 0; i < m; ++i) {
        c[static_cast<std::size_t>(j * m + i)] =
            element(k, a.data() + i, m, b.data() + j * k, to_fp32);
      }
    }
  };
  const int workers =
      threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  {
    std::vector<std::jthread> pool;
    for (int t = 1; t < workers; ++t) pool.emplace_back(work);
    work();
  }
  return c;
}

}  // namespace tcemu::reference
