#include <tcemu/reference/exact_gemm.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include <tcemu/reference/mpfr_number.hpp>

#include "column_workers.hpp"

namespace tcemu::reference {
namespace {

// GCC/Clang's 128-bit integer: the exact product of two 53-bit significands.
__extension__ using Uint128 = unsigned __int128;

// |x| = significand * 2^exponent for a finite nonzero binary64 x, from its bit fields.
struct Unpacked {
  bool negative;
  std::uint64_t significand;
  int exponent;
};

Unpacked unpack(double x) {
  const auto raw = std::bit_cast<std::uint64_t>(x);
  const auto field = static_cast<int>((raw >> 52) & 0x7FF);
  const std::uint64_t fraction = raw & ((std::uint64_t{1} << 52) - 1);
  if (field == 0) return {(raw >> 63) != 0, fraction, -1074};
  return {(raw >> 63) != 0, fraction | (std::uint64_t{1} << 52), field - 1075};
}

// One element: the exact sum of x_p y_p rounded once in `rounding`. Every product is an exact
// integer (a 106-bit product of significands, times a power of two); they are summed exactly in a
// two's-complement fixed-point integer spanning the products' exponents (64 spare bits for
// carries), which MPFR takes over exactly (mpfr_set_z_2exp at that precision) and rounds once.
double element(std::int64_t k, const double* x, std::int64_t x_stride, const double* y,
               bool to_fp32, mpfr_rnd_t rounding, std::vector<std::uint64_t>& limbs) {
  int lo = 1 << 20, hi = -(1 << 20);
  double special = 0.0;
  bool finite = true;
  for (std::int64_t p = 0; p < k; ++p) {
    const double xv = x[p * x_stride], yv = y[p];
    if (!std::isfinite(xv) || !std::isfinite(yv)) {
      finite = false;
      special += xv * yv;
      continue;
    }
    if (xv == 0.0 || yv == 0.0) continue;
    const int e = unpack(xv).exponent + unpack(yv).exponent;
    lo = std::min(lo, e);
    hi = std::max(hi, e + 106);
  }
  if (!finite) return special;  // IEEE's NaN or Inf, as a standard DGEMM gives
  if (hi < lo) return 0.0;      // every product is zero: +0 (the sum of a +0 start)
  const std::size_t count = static_cast<std::size_t>((hi - lo + 64) / 64 + 2);
  limbs.assign(count, 0);
  for (std::int64_t p = 0; p < k; ++p) {
    const double xv = x[p * x_stride], yv = y[p];
    if (xv == 0.0 || yv == 0.0) continue;
    const Unpacked ux = unpack(xv), uy = unpack(yv);
    const Uint128 product = static_cast<Uint128>(ux.significand) * uy.significand;
    const int shift = ux.exponent + uy.exponent - lo;
    const std::size_t limb = static_cast<std::size_t>(shift / 64);
    const int offset = shift % 64;
    // product << offset spans three limbs (106 + 63 bits < 192).
    const auto low64 = static_cast<std::uint64_t>(product);
    const auto high64 = static_cast<std::uint64_t>(product >> 64);  // < 2^42
    const std::uint64_t parts[3] = {low64 << offset,
                                    (high64 << offset) | (offset == 0 ? 0 : low64 >> (64 - offset)),
                                    offset == 0 ? 0 : high64 >> (64 - offset)};
    const bool negative = ux.negative != uy.negative;
    std::uint64_t carry = 0;
    for (std::size_t i = limb; i < count; ++i) {
      const std::uint64_t part = i - limb < 3 ? parts[i - limb] : 0;
      if (!negative) {
        const std::uint64_t sum = limbs[i] + part;
        const std::uint64_t out = sum + carry;
        carry = static_cast<std::uint64_t>(sum < part) + static_cast<std::uint64_t>(out < sum);
        limbs[i] = out;
      } else {
        const std::uint64_t before = limbs[i];
        const std::uint64_t diff = before - part;
        const std::uint64_t out = diff - carry;
        carry =
            static_cast<std::uint64_t>(before < part) + static_cast<std::uint64_t>(diff < carry);
        limbs[i] = out;
      }
      if (carry == 0 && i >= limb + 2) break;
    }
  }
  const bool negative = (limbs.back() >> 63) != 0;
  if (negative) {  // two's complement negation
    std::uint64_t carry = 1;
    for (auto& l : limbs) {
      l = ~l + carry;
      carry = (carry != 0 && l == 0) ? 1 : 0;
    }
  }
  mpz_t z;
  mpz_init(z);
  mpz_import(z, count, -1, sizeof(std::uint64_t), 0, 0, limbs.data());
  if (negative) mpz_neg(z, z);
  MpfrNumber sum(Precision{static_cast<mpfr_prec_t>(count * 64)});
  mpfr_set_z_2exp(sum.get(), z, lo, MPFR_RNDN);  // exact: the precision holds every limb
  mpz_clear(z);
  if (sum.is_zero()) return 0.0;  // an exact cancellation: +0
  if (to_fp32) return static_cast<double>(mpfr_get_flt(sum.get(), rounding));
  return sum.to_double(rounding);
}

std::vector<double> rounded_gemm(std::int64_t m, std::int64_t n, std::int64_t k,
                                 const std::vector<double>& a, const std::vector<double>& b,
                                 bool to_fp32, mpfr_rnd_t rounding, int threads) {
  std::vector<double> c(static_cast<std::size_t>(m * n));
  detail::for_each_column(n, threads, [&](std::int64_t j) {
    std::vector<std::uint64_t> limbs;
    for (std::int64_t i = 0; i < m; ++i) {
      c[static_cast<std::size_t>(j * m + i)] =
          element(k, a.data() + i, m, b.data() + j * k, to_fp32, rounding, limbs);
    }
  });
  return c;
}

}  // namespace

std::vector<double> correctly_rounded_gemm(std::int64_t m, std::int64_t n, std::int64_t k,
                                           const std::vector<double>& a,
                                           const std::vector<double>& b, bool to_fp32,
                                           int threads) {
  return rounded_gemm(m, n, k, a, b, to_fp32, MPFR_RNDN, threads);
}

std::vector<double> correctly_rounded_gemm(std::int64_t m, std::int64_t n, std::int64_t k,
                                           const std::vector<double>& a,
                                           const std::vector<double>& b, fp64::Direction d,
                                           bool to_fp32, int threads) {
  if (d == fp64::Direction::to_odd) {
    throw std::invalid_argument("correctly_rounded_gemm: round to odd is not an oracle's");
  }
  const mpfr_rnd_t rounding = d == fp64::Direction::upward        ? MPFR_RNDU
                              : d == fp64::Direction::downward    ? MPFR_RNDD
                              : d == fp64::Direction::toward_zero ? MPFR_RNDZ
                                                                  : MPFR_RNDN;
  return rounded_gemm(m, n, k, a, b, to_fp32, rounding, threads);
}

}  // namespace tcemu::reference
