// A program that multiplies matrices through the host BLAS only (the Fortran dgemm_ and
// cblas_dgemm, column- and row-major), run by CTest under LD_PRELOAD=libtcemu_blas_preload.so
// (preload/, docs/preload.md) with the TCEMU_PRELOAD_* variables of each test. It checks what
// the library did with each call, as cublas_only_program.cpp does for cuBLAS:
//   --expect routed            every call was routed (the log says so) and C holds, bit for bit,
//                              the product the scheme computes through the library's API
//                              (ozaki::Handle; in CR mode the binary64-slice scheme on the cpu64
//                              backend, an independent path to the correctly rounded product, on
//                              inputs where a plain FP64 sum differs from it)
//   --expect fallthrough=TEXT  every call fell through to the BLAS, the log giving TEXT as reason
// Exit status 0 when every check holds, 1 otherwise.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <tcemu/host/host_backends.hpp>

#include "blas_declarations.hpp"
#include "preload_checks.hpp"

namespace {

using namespace tcemu_preload_test;

// One DGEMM in column-major terms, C (ldc x n) := alpha op(A) op(B) + beta C, issued through
// `entry`; the row-major entry issues the same product as C' = op(B)' op(A)'.
struct Case {
  const char* name;
  char ta, tb;
  int m, n, k, lda, ldb, ldc;
  double alpha, beta;
  enum Entry { fortran, cblas_column_major, cblas_row_major } entry;
};

int usage(int status) {
  std::printf(
      "usage: preload_blas_program --expect routed|fallthrough=TEXT\n"
      "Run under LD_PRELOAD=libtcemu_blas_preload.so with TCEMU_PRELOAD_SCHEME, _MODE,\n"
      "_SPLITS or _MODULI, _MIN_SIZE, _WORKSPACE_MIB and TCEMU_PRELOAD_LOG set to a file\n"
      "(docs/preload.md).\n"
      "Calls dgemm_ and cblas_dgemm (column- and row-major) on several shapes, transposes,\n"
      "leading dimensions and scalars; with 'routed' checks every result bit for bit against\n"
      "the scheme through the library's API, with 'fallthrough=TEXT' that every call fell\n"
      "through for TEXT. Exit 0: all checks hold; 1: a check failed.\n");
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    return usage(0);
  }
  if (argc != 3 || std::strcmp(argv[1], "--expect") != 0) return usage(2);
  const std::string_view expect = argv[2];
  const bool routed = expect == "routed";
  const std::string fallthrough_reason =
      expect.starts_with("fallthrough=") ? std::string(expect.substr(12)) : "";
  if (!routed && fallthrough_reason.empty()) return usage(2);
  const std::string log_path = env("TCEMU_PRELOAD_LOG");
  if (log_path.empty() || log_path == "stderr") {
    std::fprintf(stderr, "FAIL: TCEMU_PRELOAD_LOG must name a file for this program\n");
    return 1;
  }
  std::remove(log_path.c_str());

  const Case cases[] = {
      {"dgemm_ NN 160 x 150 x 170 (blocked in a 1 MiB workspace)", 'N', 'N', 160, 150, 170, 160,
       170, 160, 1.0, 0.0, Case::fortran},
      {"dgemm_ NN", 'N', 'N', 37, 29, 53, 37, 53, 37, 1.0, 0.0, Case::fortran},
      {"dgemm_ TN, lds > rows, alpha -2 beta 0.5", 'T', 'N', 33, 41, 47, 50, 49, 40, -2.0, 0.5,
       Case::fortran},
      {"cblas_dgemm column-major NT", 'N', 'T', 24, 36, 61, 24, 36, 24, 1.0, 0.0,
       Case::cblas_column_major},
      {"cblas_dgemm row-major TT (as column-major)", 'T', 'T', 45, 27, 39, 39, 27, 45, 1.0, 0.0,
       Case::cblas_row_major},
  };
  const bool cr = env("TCEMU_PRELOAD_MODE") == "cr";
  std::unique_ptr<tcemu::Backend> host =
      cr ? tcemu::host::make_cpu64_backend() : tcemu::host::make_emulator_backend();
  std::mt19937_64 rng(20261124);
  int cases_where_plain_sum_differs = 0;
  for (const Case& c : cases) {
    const int a_cols = c.ta == 'N' ? c.k : c.m;
    const int b_cols = c.tb == 'N' ? c.n : c.k;
    const std::vector<double> a = random_matrix(std::size_t(c.lda) * a_cols, rng);
    const std::vector<double> b = random_matrix(std::size_t(c.ldb) * b_cols, rng);
    std::vector<double> c0 = random_matrix(std::size_t(c.ldc) * c.n, rng);
    if (c.beta == 0.0) std::fill(c0.begin(), c0.end(), std::nan(""));  // must not be read
    std::vector<double> got = c0;
    if (c.entry == Case::fortran) {
      dgemm_(&c.ta, &c.tb, &c.m, &c.n, &c.k, &c.alpha, a.data(), &c.lda, b.data(), &c.ldb, &c.beta,
             got.data(), &c.ldc, 1, 1);
    } else {
      auto op = [](char t) { return t == 'N' ? 111 : 112; };
      if (c.entry == Case::cblas_column_major) {
        cblas_dgemm(102, op(c.ta), op(c.tb), c.m, c.n, c.k, c.alpha, a.data(), c.lda, b.data(),
                    c.ldb, c.beta, got.data(), c.ldc);
      } else {
        cblas_dgemm(101, op(c.tb), op(c.ta), c.n, c.m, c.k, c.alpha, b.data(), c.ldb, a.data(),
                    c.lda, c.beta, got.data(), c.ldc);
      }
    }
    if (!routed) continue;
    const int plain_differs =
        check_routed(c.name, c.ta, c.tb, c.m, c.n, c.k, c.alpha, a, c.lda, b, c.ldb, c.beta, c0,
                     c.ldc, got, *reference_handle(*host, cr, "sm90"));
    if (plain_differs > 0) ++cases_where_plain_sum_differs;
  }
  if (routed && cr && cases_where_plain_sum_differs < 3) {
    fail(
        "the inputs should make the plain FP64 sum differ from the correctly rounded one in "
        "every alpha = 1, beta = 0 case; it did in " +
        std::to_string(cases_where_plain_sum_differs));
  }
  check_log(log_path, std::size(cases), routed, "fell through to the BLAS (", fallthrough_reason);
  std::printf("%s\n", failures == 0 ? "PASSED" : "FAILED");
  return failures == 0 ? 0 : 1;
}
