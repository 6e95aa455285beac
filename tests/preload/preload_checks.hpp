// What the programs run under the LD_PRELOAD libraries (cublas_only_program.cpp,
// blas_only_program.cpp) share: their inputs, the host reference of a routed call, the log.
#pragma once

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <tcemu/emulator/presets.hpp>
#include <tcemu/ozaki/handle.hpp>

namespace tcemu_preload_test {

inline int failures = 0;

inline void fail(const std::string& what) {
  std::fprintf(stderr, "FAIL: %s\n", what.c_str());
  ++failures;
}

inline std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

// Values m 2^e with m uniform in [-1, 1) (53 random bits) and e in [-12, 12]: sums of their
// products cancel and round, so a plain FP64 sum is often not the correctly rounded one.
inline std::vector<double> random_matrix(std::size_t count, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> exponent(-12, 12);
  std::vector<double> x(count);
  for (double& v : x) {
    const double mantissa =
        static_cast<double>(static_cast<std::int64_t>(rng() >> 10) - (std::int64_t{1} << 53)) /
        std::ldexp(1.0, 53);
    v = std::ldexp(mantissa, exponent(rng));
  }
  return x;
}

// Whether T is a complex element type.
template <class T>
constexpr bool kComplex =
    std::is_same_v<T, std::complex<double>> || std::is_same_v<T, std::complex<float>>;

// random_matrix's values as T (double, float, std::complex<double> or <float>): rounded to float
// for single precision, pairs for complex.
template <class T>
inline std::vector<T> random_values(std::size_t count, std::mt19937_64& rng) {
  if constexpr (kComplex<T>) {
    const std::vector<double> parts = random_matrix(2 * count, rng);
    std::vector<T> x(count);
    for (std::size_t i = 0; i < count; ++i)
      x[i] = T(std::complex<double>{parts[2 * i], parts[2 * i + 1]});
    return x;
  } else {
    const std::vector<double> v = random_matrix(count, rng);
    return std::vector<T>(v.begin(), v.end());
  }
}

// x as a T: its real part for a real T.
template <class T>
inline T scalar(std::complex<double> x) {
  if constexpr (kComplex<T>) {
    return T(x);
  } else {
    return static_cast<T>(x.real());
  }
}

// The scheme and mode the TCEMU_PRELOAD_* variables name, as a host handle on `backend`; for
// `single` precision calls mode dp is sp (session::for_single_precision).
inline std::unique_ptr<tcemu::ozaki::Handle> reference_handle(tcemu::Backend& backend,
                                                              bool cr_oracle,
                                                              const std::string& arch,
                                                              bool single = false) {
  namespace oz = tcemu::ozaki;
  oz::Options options;
  options.mode =
      *oz::mode_by_name(env("TCEMU_PRELOAD_MODE").empty() ? "dp" : env("TCEMU_PRELOAD_MODE"));
  if (single && options.mode == oz::Mode::dp) options.mode = oz::Mode::sp;
  const std::string scheme = env("TCEMU_PRELOAD_SCHEME");
  const std::string count =
      env(scheme == "dgemm-crt" ? "TCEMU_PRELOAD_MODULI" : "TCEMU_PRELOAD_SPLITS");
  if (!count.empty()) options.splits = std::stoi(count);
  oz::Products products = oz::IntegerProducts{};
  if (cr_oracle) {
    products = oz::Fp64Products{};
  } else if (scheme == "dgemm-crt") {
    products = oz::CrtProducts{};
  } else if (scheme == "dgemm-tc") {
    products = oz::TensorCoreProducts{
        tcemu::preset(arch, tcemu::formats::fp16, tcemu::formats::fp32, "mma.sync")};
  }
  return std::make_unique<oz::Handle>(backend, products, options);
}

inline std::vector<std::string> log_lines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Compares C as a routed call left it (`got`) with the reference handle's result of the same
// call on the host, bit for bit, failing when any element differs. Returns how many elements a
// plain FP64 sum in k order gets different from the reference (for alpha = 1, beta = 0 calls;
// 0 otherwise): the elements on which a call that fell through would likely have failed.
inline int check_routed(const char* name, char ta, char tb, int m, int n, int k, double alpha,
                        const std::vector<double>& a, int lda, const std::vector<double>& b,
                        int ldb, double beta, const std::vector<double>& c0, int ldc,
                        const std::vector<double>& got, tcemu::ozaki::Handle& reference) {
  std::vector<double> want = c0;
  reference.dgemm(ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, want.data(), ldc);
  int wrong = 0, plain_differs = 0;
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < m; ++i) {
      const std::size_t at = std::size_t(j) * ldc + i;
      if (std::bit_cast<std::uint64_t>(got[at]) != std::bit_cast<std::uint64_t>(want[at])) {
        if (++wrong <= 3) {
          std::fprintf(stderr, "  %s: C(%d,%d) = %a, the host scheme gives %a\n", name, i, j,
                       got[at], want[at]);
        }
      }
      double plain = 0;  // the textbook FP64 sum, in k order
      for (int p = 0; p < k; ++p) {
        const double x = ta == 'N' ? a[std::size_t(p) * lda + i] : a[std::size_t(i) * lda + p];
        const double y = tb == 'N' ? b[std::size_t(j) * ldb + p] : b[std::size_t(p) * ldb + j];
        plain += x * y;
      }
      if (alpha == 1.0 && beta == 0.0 && plain != want[at]) ++plain_differs;
    }
  }
  if (wrong > 0) {
    fail(std::string(name) + ": " + std::to_string(wrong) + " of " + std::to_string(m * n) +
         " elements differ from the host scheme");
  } else {
    std::printf(
        "ok: %s (%d x %d x %d), bits equal to the host scheme; a plain FP64 sum "
        "differs in %d elements\n",
        name, m, n, k, plain_differs);
  }
  return plain_differs;
}

// The reference routine of element type T on a handle (BlasRoutines' ?gemm).
inline void reference_gemm(tcemu::ozaki::Handle& h, char ta, char tb, int m, int n, int k,
                           double alpha, const double* a, int lda, const double* b, int ldb,
                           double beta, double* c, int ldc) {
  h.dgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
inline void reference_gemm(tcemu::ozaki::Handle& h, char ta, char tb, int m, int n, int k,
                           float alpha, const float* a, int lda, const float* b, int ldb,
                           float beta, float* c, int ldc) {
  h.sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
inline void reference_gemm(tcemu::ozaki::Handle& h, char ta, char tb, int m, int n, int k,
                           std::complex<double> alpha, const std::complex<double>* a, int lda,
                           const std::complex<double>* b, int ldb, std::complex<double> beta,
                           std::complex<double>* c, int ldc) {
  h.zgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
inline void reference_gemm(tcemu::ozaki::Handle& h, char ta, char tb, int m, int n, int k,
                           std::complex<float> alpha, const std::complex<float>* a, int lda,
                           const std::complex<float>* b, int ldb, std::complex<float> beta,
                           std::complex<float>* c, int ldc) {
  h.cgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// Compares C as a routed call of any element type left it (`got`) with the reference handle's
// result of the same call, bit for bit (each part of a complex element), failing when any
// element differs.
template <class T>
void check_routed_bits(const char* name, char ta, char tb, int m, int n, int k, T alpha,
                       const std::vector<T>& a, int lda, const std::vector<T>& b, int ldb, T beta,
                       const std::vector<T>& c0, int ldc, const std::vector<T>& got,
                       tcemu::ozaki::Handle& reference) {
  std::vector<T> want = c0;
  reference_gemm(reference, ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, want.data(),
                 ldc);
  int wrong = 0;
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < m; ++i) {
      const std::size_t at = std::size_t(j) * ldc + i;
      if (std::memcmp(&got[at], &want[at], sizeof(T)) != 0 && ++wrong <= 3) {
        std::fprintf(stderr, "  %s: C(%d,%d) differs from the host scheme's\n", name, i, j);
      }
    }
  }
  if (wrong > 0) {
    fail(std::string(name) + ": " + std::to_string(wrong) + " of " + std::to_string(m * n) +
         " elements differ from the host scheme");
  } else {
    std::printf("ok: %s (%d x %d x %d), bits equal to the host scheme\n", name, m, n, k);
  }
}

// Checks the log of a run: one line per call, line i holding every string of wanted[i]. A test
// may ask for a note of the library's in some line (TCEMU_PRELOAD_TEST_LOG_CONTAINS).
inline void check_log_lines(const std::string& log_path,
                            const std::vector<std::vector<std::string>>& wanted) {
  const std::vector<std::string> lines = log_lines(log_path);
  if (lines.size() != wanted.size()) {
    fail("the log " + log_path + " has " + std::to_string(lines.size()) + " lines for " +
         std::to_string(wanted.size()) + " calls");
  }
  const std::string note = env("TCEMU_PRELOAD_TEST_LOG_CONTAINS");
  bool note_seen = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    std::printf("log: %s\n", line.c_str());
    for (const std::string& needle : i < wanted.size() ? wanted[i] : std::vector<std::string>{}) {
      if (line.find(needle) == std::string::npos)
        fail("log line without '" + needle + "': " + line);
    }
    note_seen = note_seen || (!note.empty() && line.find(note) != std::string::npos);
  }
  if (!note.empty() && !note_seen) fail("no log line with '" + note + "'");
}

// What a log line says of a call: routed to TCEMU_PRELOAD_SCHEME's scheme, or `fell_through`
// for `fallthrough_reason`.
inline std::vector<std::string> log_expectation(bool routed, const std::string& fell_through,
                                                const std::string& fallthrough_reason) {
  if (routed) return {"routed to " + env("TCEMU_PRELOAD_SCHEME")};
  return {fell_through, fallthrough_reason};
}

// The host handles a run checks its routed calls against (reference_handle; none when the run's
// calls fall through, whose variables may be bad): fp64 for D and Z calls, fp32 (mode sp for
// dp; in mode cr correctly rounded to binary32, the cr oracle's) for S and C calls.
struct References {
  std::unique_ptr<tcemu::ozaki::Handle> fp64, fp32;
  bool routed;

  References(tcemu::Backend& host, bool routed_, bool cr, const std::string& arch)
      : routed(routed_) {
    if (!routed) return;
    fp64 = reference_handle(host, cr, arch);
    fp32 = reference_handle(host, cr, arch, true);
  }
  // The handle to check a routed call against; null when the run's calls fall through.
  tcemu::ozaki::Handle* reference(bool single) const {
    return !routed ? nullptr : single ? fp32.get() : fp64.get();
  }
  // The log line a call expects (log_expectation): routed, or fallen through to `target`
  // ("fell through to the BLAS (") for the run's `reason`.
  std::vector<std::string> log(const std::string& target, const std::string& reason) const {
    return log_expectation(routed, target, reason);
  }
};

// Checks the log of a run of `calls` calls: one line each, naming the scheme of
// TCEMU_PRELOAD_SCHEME when `routed`, else `fell_through` and `reason`.
inline void check_log(const std::string& log_path, std::size_t calls, bool routed,
                      const std::string& fell_through, const std::string& fallthrough_reason) {
  check_log_lines(log_path, std::vector<std::vector<std::string>>(
                                calls, log_expectation(routed, fell_through, fallthrough_reason)));
}

}  // namespace tcemu_preload_test
