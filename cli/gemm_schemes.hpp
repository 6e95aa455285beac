// The registry of GEMM schemes that `tcemu gemm --scheme NAME` runs. A scheme library (ozaki/,
// markidis/, ...) adds its entries in one function (ozaki_schemes() in ozaki_schemes.cpp) and
// one line in gemm_schemes(); the command itself does not change.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <tcemu/backend/backend.hpp>
#include <tcemu/session/arguments.hpp>
#include <tcemu/session/backends.hpp>

namespace tcemu::cli {

// C := alpha A B + beta C, column-major, lda = m, ldb = k, ldc = m; for an fp32 scheme every
// value is a binary32 value held in a double.
struct GemmProblem {
  std::int64_t m = 0, n = 0, k = 0;
  double alpha = 1.0, beta = 0.0;
  std::vector<double> a, b, c;
};

// Called with the fraction of a scheme's run done, 0 to 1, as it advances.
using ProgressHook = std::function<void(double fraction)>;

struct GemmScheme {
  std::string name;
  std::string summary;
  Real element;                   // fp64: dgemm-shaped, fp32: sgemm-shaped
  std::set<std::string> options;  // the options it reads besides the command's own
  std::string options_help;       // their help lines (the datapath options' are the command's)
  // Computes problem.c on `backend` (made by `choice`), telling `progress` (if set) how far it is
  // where the scheme has steps to count (the Ozaki schemes: slice products); returns lines
  // describing the run (slices, GEMM count, phase times). Throws UsageError for bad options.
  std::function<std::vector<std::string>(const session::Arguments&, Backend&,
                                         const session::BackendChoice& choice, GemmProblem&,
                                         const ProgressHook& progress)>
      run;
};

const std::vector<GemmScheme>& gemm_schemes();

// The Ozaki entries: dgemm-tc, sgemm-tc, dgemm-int8, sgemm-int8, dgemm-crt and sgemm-crt.
std::vector<GemmScheme> ozaki_schemes();
// The error-corrected SGEMM entries: markidis, halfhalf, tf32tf32, 3xtf32, bf16x3, bf16x9, ...
std::vector<GemmScheme> markidis_schemes();
// dot2 and exblas (accurate/handle.hpp).
std::vector<GemmScheme> accurate_schemes();

}  // namespace tcemu::cli
