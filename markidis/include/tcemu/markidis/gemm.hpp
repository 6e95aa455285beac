// Running a Scheme (scheme.hpp) on a Backend: on matrices already in the backend's buffers, or
// BLAS-shaped on host memory (what `tcemu gemm` calls).
#pragma once

#include <cstdint>
#include <optional>

#include <tcemu/backend/backend.hpp>
#include <tcemu/emulator/datapath.hpp>
#include <tcemu/markidis/scheme.hpp>
#include <tcemu/markidis/workspace.hpp>

namespace tcemu::markidis {

// Seconds of each phase of one gemm() call, measured when RunOptions::phases is set (the backend
// is then synchronised at every phase boundary, which costs a little time of its own).
struct PhaseSeconds {
  double summaries = 0;    // summarize_fp32 of A and B (max |x|, NaN and Inf counts)
  double splits = 0;       // split_fp32 of A and B into their parts
  double products = 0;     // the GEMMs of every accumulator group
  double combination = 0;  // combine_fp32 (and propagate_nonfinite_fp32 when needed)
};

struct RunOptions {
  float alpha = 1.0f;
  float beta = 0.0f;
  int threads = 0;  // GemmOptions::threads of the products (0: every hardware thread)
  // Where the parts and accumulators live; nullptr: allocated for the call. Pass the same one to
  // repeated calls to allocate nothing after the first.
  Workspace* workspace = nullptr;
  PhaseSeconds* phases = nullptr;  // where to report the phase times; nullptr: not measured
};

// D = alpha A B + beta C by `scheme` with its products on `datapath`, every matrix fp32 in
// `backend`'s buffers (A m x k, B k x n, C and D m x n; any layout). C may be omitted when
// beta == 0 and may alias D exactly. Parts and accumulators go to options.workspace.
// Throws std::invalid_argument for an unusable scheme or datapath (validate), for mismatched
// shapes or formats, and for a part overflow when the scheme does not scale (naming the matrix).
void gemm(Backend& backend, const Scheme& scheme, const Datapath& datapath, const BufferMatrix& a,
          const BufferMatrix& b, const std::optional<BufferMatrix>& c, const BufferMatrix& d,
          const RunOptions& options = {});

// The BLAS SGEMM interface, column major: C = alpha op(A) op(B) + beta C with op(X) = X for
// trans 'N'/'n' and X^T for 'T'/'t'/'C'/'c'; A is lda x (k or m), B ldb x (n or k), C ldc x n,
// all in host memory, copied to `backend` and back through the BLAS call plumbing of every scheme
// (tcemu/backend/blas_call.hpp). As reference BLAS: nothing happens when m or n is 0 or when
// (alpha == 0 or k == 0) and beta == 1; when alpha == 0 or k == 0, C = beta C (RN(beta c), +0
// when beta == 0, C not read then) without touching A and B; C is not read when beta == 0.
// Throws std::invalid_argument naming the parameter as xerbla numbers it ("sgemm: parameter 8
// (lda) = 2 must be >= max(1, 3)"), and as gemm() for the scheme and datapath.
void sgemm(Backend& backend, const Scheme& scheme, const Datapath& datapath, char transa,
           char transb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
           std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
           std::int64_t ldc, int threads = 0);

}  // namespace tcemu::markidis
