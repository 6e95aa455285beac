// The caller's floating-point state through libtcemu_blas_preload.so (caller_state_checks.hpp):
// dgemm_, cblas_dgemm and sgemm_ (its operands the binary32 roundings of dgemm's), C := A B of
// 64 x 64 x 64, under each rounding mode, FTZ and DAZ, and from several threads, against the bits
// of the product rounded in the caller's direction (to its own precision). Run by
// CTest with TCEMU_PRELOAD_SCHEME and TCEMU_PRELOAD_MODE set. Exit status 0 when every check holds,
// 1 otherwise.
#include <cmath>
#include <cstddef>
#include <vector>

#include "blas_declarations.hpp"
#include "caller_state_checks.hpp"

int main() {
  using namespace tcemu_preload_test;
  constexpr int n = 64;
  clear_log();
  std::vector<double> a, b;
  caller_state_inputs(a, b, n);
  const int fortran = check_caller_states<double>([&] {
    std::vector<double> c(a.size(), 0.25);
    const double alpha = 1, beta = 0;
    dgemm_("N", "N", &n, &n, &n, &alpha, a.data(), &n, b.data(), &n, &beta, c.data(), &n, 1, 1);
    return c;
  });
  const int cblas = check_caller_states<double>([&] {
    std::vector<double> c(a.size(), 0.25);
    cblas_dgemm(102, 111, 111, n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n);
    return c;
  });
  const std::vector<float> a32(a.begin(), a.end()), b32(b.begin(), b.end());
  const int single = check_caller_states<float>([&] {
    std::vector<float> c(a32.size(), 0.25f);
    const float alpha = 1, beta = 0;
    sgemm_("N", "N", &n, &n, &n, &alpha, a32.data(), &n, b32.data(), &n, &beta, c.data(), &n, 1, 1);
    return c;
  });
  const int fell_through = calls_fell_through();
  return fortran + cblas + single + fell_through == 0 ? 0 : 1;
}
