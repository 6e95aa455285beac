// A program that multiplies matrices through the host BLAS only (the Fortran ?gemm_ and
// cblas_?gemm for ? = d, s, z, c, column- and row-major, 'C' included), run by CTest under
// LD_PRELOAD=libtcemu_blas_preload.so (preload/, docs/preload.md) with the TCEMU_PRELOAD_*
// variables of each test. It checks what the library did with each call, as cublas_only_program.cpp
// does for cuBLAS:
//   --expect routed            every call was routed (the log says so) and C holds, bit for bit,
//                              the product the scheme computes through the library's API
//                              (ozaki::Handle; in CR mode the binary64-slice scheme on the cpu64
//                              backend, an independent path to the correctly rounded product, on
//                              inputs where a plain FP64 sum differs from it); single precision
//                              in mode sp for dp (tunable for tunable; cr: correctly rounded
//                              to binary32, the same oracle's)
//   --expect fallthrough=TEXT  every call fell through to the BLAS, the log giving TEXT as reason
// Exit status 0 when every check holds, 1 otherwise.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <tcemu/host/host_backends.hpp>

#include "blas_declarations.hpp"
#include "preload_checks.hpp"

namespace {

using namespace tcemu_preload_test;

using Z = std::complex<double>;
using C = std::complex<float>;

// One ?GEMM in column-major terms, C (ldc x n) := alpha op(A) op(B) + beta C, of precision
// `p`, issued through `entry`; the row-major entry issues the same product as C' = op(B)'
// op(A)'. Real precisions take the real parts of alpha and beta.
struct Case {
  const char* name;
  enum Precision { d, s, z, c } p;
  char ta, tb;
  int m, n, k, lda, ldb, ldc;
  Z alpha, beta;
  enum Entry { fortran, cblas_column_major, cblas_row_major } entry;
  bool single() const { return p == s || p == c; }
};

// The entry points of each element type.
void fortran(const char* ta, const char* tb, const int* m, const int* n, const int* k,
             const double* alpha, const double* a, const int* lda, const double* b, const int* ldb,
             const double* beta, double* c, const int* ldc) {
  dgemm_(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, 1, 1);
}
void fortran(const char* ta, const char* tb, const int* m, const int* n, const int* k,
             const float* alpha, const float* a, const int* lda, const float* b, const int* ldb,
             const float* beta, float* c, const int* ldc) {
  sgemm_(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, 1, 1);
}
void fortran(const char* ta, const char* tb, const int* m, const int* n, const int* k,
             const Z* alpha, const Z* a, const int* lda, const Z* b, const int* ldb, const Z* beta,
             Z* c, const int* ldc) {
  zgemm_(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, 1, 1);
}
void fortran(const char* ta, const char* tb, const int* m, const int* n, const int* k,
             const C* alpha, const C* a, const int* lda, const C* b, const int* ldb, const C* beta,
             C* c, const int* ldc) {
  cgemm_(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, 1, 1);
}
void cblas(int order, int ta, int tb, int m, int n, int k, double alpha, const double* a, int lda,
           const double* b, int ldb, double beta, double* c, int ldc) {
  cblas_dgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void cblas(int order, int ta, int tb, int m, int n, int k, float alpha, const float* a, int lda,
           const float* b, int ldb, float beta, float* c, int ldc) {
  cblas_sgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void cblas(int order, int ta, int tb, int m, int n, int k, Z alpha, const Z* a, int lda, const Z* b,
           int ldb, Z beta, Z* c, int ldc) {
  cblas_zgemm(order, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
}
void cblas(int order, int ta, int tb, int m, int n, int k, C alpha, const C* a, int lda, const C* b,
           int ldb, C beta, C* c, int ldc) {
  cblas_cgemm(order, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
}

// Runs case `c` with T elements through its entry point and, when `reference` is given, checks
// C's bits against it. Returns, for fp64 cases, check_routed's count of elements where a plain
// FP64 sum differs.
template <class T>
int run(const Case& c, std::mt19937_64& rng, tcemu::ozaki::Handle* reference) {
  const int a_cols = c.ta == 'N' ? c.k : c.m;
  const int b_cols = c.tb == 'N' ? c.n : c.k;
  const std::vector<T> a = random_values<T>(std::size_t(c.lda) * a_cols, rng);
  const std::vector<T> b = random_values<T>(std::size_t(c.ldb) * b_cols, rng);
  std::vector<T> c0 = random_values<T>(std::size_t(c.ldc) * c.n, rng);
  if (c.beta == 0.0) std::fill(c0.begin(), c0.end(), scalar<T>({NAN, NAN}));  // must not be read
  std::vector<T> got = c0;
  const T alpha = scalar<T>(c.alpha), beta = scalar<T>(c.beta);
  if (c.entry == Case::fortran) {
    fortran(&c.ta, &c.tb, &c.m, &c.n, &c.k, &alpha, a.data(), &c.lda, b.data(), &c.ldb, &beta,
            got.data(), &c.ldc);
  } else {
    auto op = [](char t) { return t == 'N' ? 111 : t == 'T' ? 112 : 113; };
    if (c.entry == Case::cblas_column_major) {
      cblas(102, op(c.ta), op(c.tb), c.m, c.n, c.k, alpha, a.data(), c.lda, b.data(), c.ldb, beta,
            got.data(), c.ldc);
    } else {
      cblas(101, op(c.tb), op(c.ta), c.n, c.m, c.k, alpha, b.data(), c.ldb, a.data(), c.lda, beta,
            got.data(), c.ldc);
    }
  }
  if (reference == nullptr) return 0;
  if constexpr (std::is_same_v<T, double>) {
    return check_routed(c.name, c.ta, c.tb, c.m, c.n, c.k, alpha, a, c.lda, b, c.ldb, beta, c0,
                        c.ldc, got, *reference);
  } else {
    check_routed_bits(c.name, c.ta, c.tb, c.m, c.n, c.k, alpha, a, c.lda, b, c.ldb, beta, c0, c.ldc,
                      got, *reference);
    return 0;
  }
}

int usage(int status) {
  std::printf(
      "usage: preload_blas_program --expect routed|fallthrough=TEXT\n"
      "Run under LD_PRELOAD=libtcemu_blas_preload.so with TCEMU_PRELOAD_SCHEME, _MODE,\n"
      "_SPLITS or _MODULI, _MIN_SIZE, _WORKSPACE_MIB and TCEMU_PRELOAD_LOG set to a file\n"
      "(docs/preload.md).\n"
      "Calls ?gemm_ and cblas_?gemm (? = d, s, z, c; column- and row-major) on several shapes,\n"
      "operations,\n"
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
      {"dgemm_ NN 160 x 150 x 170 (blocked in a 1 MiB workspace)", Case::d, 'N', 'N', 160, 150, 170,
       160, 170, 160, 1.0, 0.0, Case::fortran},
      {"dgemm_ NN", Case::d, 'N', 'N', 37, 29, 53, 37, 53, 37, 1.0, 0.0, Case::fortran},
      {"dgemm_ TN, lds > rows, alpha -2 beta 0.5", Case::d, 'T', 'N', 33, 41, 47, 50, 49, 40, -2.0,
       0.5, Case::fortran},
      {"cblas_dgemm column-major NT", Case::d, 'N', 'T', 24, 36, 61, 24, 36, 24, 1.0, 0.0,
       Case::cblas_column_major},
      {"cblas_dgemm row-major TT (as column-major)", Case::d, 'T', 'T', 45, 27, 39, 39, 27, 45, 1.0,
       0.0, Case::cblas_row_major},
      {"zgemm_ NN", Case::z, 'N', 'N', 21, 17, 33, 21, 33, 21, 1.0, 0.0, Case::fortran},
      {"zgemm_ CT, lds > rows, complex alpha and beta", Case::z, 'C', 'T', 19, 23, 31, 35, 25, 22,
       Z{0.5, -2.0}, Z{-1.0, 0.25}, Case::fortran},
      {"cblas_zgemm column-major NC", Case::z, 'N', 'C', 16, 14, 29, 16, 14, 16, 1.0, 0.0,
       Case::cblas_column_major},
      {"cblas_zgemm row-major CN (as column-major), complex alpha", Case::z, 'C', 'N', 18, 13, 27,
       27, 27, 18, Z{0.0, 1.0}, 0.0, Case::cblas_row_major},
      {"sgemm_ TN, alpha 1.5 beta -0.25", Case::s, 'T', 'N', 26, 31, 44, 44, 44, 26, 1.5, -0.25,
       Case::fortran},
      {"cblas_sgemm row-major NT (as column-major)", Case::s, 'N', 'T', 20, 28, 35, 20, 28, 20, 1.0,
       0.0, Case::cblas_row_major},
      {"cgemm_ TC, complex alpha and beta", Case::c, 'T', 'C', 15, 19, 26, 26, 19, 15,
       Z{-0.75, 1.0}, Z{0.5, 0.5}, Case::fortran},
      {"cblas_cgemm column-major CN", Case::c, 'C', 'N', 17, 12, 30, 30, 30, 17, 1.0, 0.0,
       Case::cblas_column_major},
  };
  const bool cr = env("TCEMU_PRELOAD_MODE") == "cr";
  std::unique_ptr<tcemu::Backend> host =
      cr ? tcemu::host::make_cpu64_backend() : tcemu::host::make_emulator_backend();
  const References references(*host, routed, cr, "sm90");
  std::mt19937_64 rng(20261124);
  int cases_where_plain_sum_differs = 0;
  std::vector<std::vector<std::string>> wanted;
  for (const Case& c : cases) {
    wanted.push_back(references.log("fell through to the BLAS (", fallthrough_reason));
    tcemu::ozaki::Handle* reference = references.reference(c.single());
    int plain_differs = 0;
    switch (c.p) {
      case Case::d:
        plain_differs = run<double>(c, rng, reference);
        break;
      case Case::s:
        run<float>(c, rng, reference);
        break;
      case Case::z:
        run<Z>(c, rng, reference);
        break;
      case Case::c:
        run<C>(c, rng, reference);
        break;
    }
    if (plain_differs > 0) ++cases_where_plain_sum_differs;
  }
  if (routed && cr && cases_where_plain_sum_differs < 3) {
    fail(
        "the inputs should make the plain FP64 sum differ from the correctly rounded one in "
        "every alpha = 1, beta = 0 case; it did in " +
        std::to_string(cases_where_plain_sum_differs));
  }
  check_log_lines(log_path, wanted);
  std::printf("%s\n", failures == 0 ? "PASSED" : "FAILED");
  return failures == 0 ? 0 : 1;
}
