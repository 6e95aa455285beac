// Inputs and references for the Ozaki tests: the papers' matrices, the correctly rounded product
// from MPFR, the plain DGEMM the papers compare against, and a bit-for-bit comparison of products.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/emulator/presets.hpp>
#include <tcemu/host/host_backends.hpp>
#include <tcemu/ozaki/options.hpp>
#include <tcemu/reference/exact_gemm.hpp>
#include <tcemu/reference/phi_values.hpp>
#include <tcemu/reference/plain_gemm.hpp>
#include <tcemu/test/same_bits.hpp>

namespace tcemu::ozaki::testing {

// A scheme with a correctly rounded mode, by its products, and the backend it runs on.
struct CrScheme {
  const char* name;  // "tc" for dgemm-tc and sgemm-tc, and so on
  Products products;
  bool cpu64;  // on the cpu64 backend (binary64 products), else on the emulator
};

// Every scheme that has mode cr: tensor-core slices, int8 slices, binary64 slices (cpu64), and
// Ozaki scheme II on the emulator and on cpu64.
inline std::vector<CrScheme> cr_schemes() {
  return {{"tc", TensorCoreProducts{preset("sm90", formats::fp16, formats::fp32)}, false},
          {"int8", IntegerProducts{}, false},
          {"fp64 slices on cpu64", Fp64Products{}, true},
          {"crt", CrtProducts{}, false},
          {"crt on cpu64", CrtProducts{}, true}};
}

inline std::unique_ptr<Backend> backend_for(const CrScheme& s) {
  return s.cpu64 ? host::make_cpu64_backend(2) : host::make_emulator_backend(2);
}

// A rows x cols matrix of (rand - 0.5) exp(phi randn), the inputs of Mukunoki et al.
inline std::vector<double> phi_matrix(std::int64_t rows, std::int64_t cols, double phi,
                                      std::uint64_t seed) {
  return reference::phi_values(rows * cols, phi, seed);
}

// The correctly rounded product (reference/exact_gemm.hpp).
inline std::vector<double> correctly_rounded_product(std::int64_t m, std::int64_t n, std::int64_t k,
                                                     const std::vector<double>& a,
                                                     const std::vector<double>& b) {
  return reference::correctly_rounded_gemm(m, n, k, a, b);
}

using reference::plain_dgemm;

// `got` has the bits of `expected`, both C = A B of m x n, A m x k and B k x n, column major; a
// failure lists the first differing elements with what row i of A and column j of B span.
inline ::testing::AssertionResult same_product_bits(const std::vector<double>& expected,
                                                    const std::vector<double>& got, std::int64_t m,
                                                    std::int64_t n, std::int64_t k,
                                                    const std::vector<double>& a,
                                                    const std::vector<double>& b) {
  return test::same_bits(expected, got, m, n,
                         {.inputs = test::gemm_inputs(m, k, a.data(), b.data())});
}

// `call` throws std::invalid_argument whose message contains `what` (an xerbla-style "dgemm:
// parameter 8 (lda)", a refused mode).
inline void expect_invalid_argument(const std::function<void()>& call, const std::string& what) {
  try {
    call();
    ADD_FAILURE() << "no error for " << what;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

// max |x - r| / |r| over the elements with r != 0 (elements with r == 0 count when x != 0).
inline double max_relative_error(const std::vector<double>& x, const std::vector<double>& r) {
  double worst = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (r[i] == 0.0) {
      if (x[i] != 0.0) worst = INFINITY;
      continue;
    }
    worst = std::fmax(worst, std::fabs(x[i] - r[i]) / std::fabs(r[i]));
  }
  return worst;
}

}  // namespace tcemu::ozaki::testing
