// The host BLAS entry points of the LD_PRELOAD library libtcemu_blas_preload.so
// (docs/preload.md): the Fortran dgemm_ and cblas_dgemm, routed to the Ozaki scheme the
// environment names (tcemu/session/preload_route.hpp) on the emulator backend, the CPU backend that
// gives the GPU's bits (its integer MMA for dgemm-int8 and dgemm-crt, the sm90 fp16 -> fp32
// mma.sync preset for dgemm-tc), or passed to the next definition (dlsym(RTLD_NEXT): the BLAS the
// program links) when the scheme is off, the variables are bad, the call is below
// TCEMU_PRELOAD_MIN_SIZE, its arguments are not a valid DGEMM (the BLAS then reports them), or
// the scheme refuses the operands (C is untouched then: the handle works on copies).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>

#include <unistd.h>

#include <tcemu/host/host_backends.hpp>
#include <tcemu/ozaki/handle.hpp>
#include <tcemu/session/preload_route.hpp>

#include "next_definition.hpp"

namespace tcemu::preload {
namespace {

using session::HandleCache;
using session::Routing;

// Set while this thread is inside an intercepted call: a BLAS whose cblas_dgemm calls dgemm_
// (or the reverse) reaches the definitions below again, and must go straight through.
thread_local bool inside_call = false;

// The emulator backend and its handles (HandleCache), made at the first routed call and kept.
struct Engines {
  std::mutex mutex;
  std::unique_ptr<Backend> backend;
  HandleCache handles;
};

Engines& engines() {
  static Engines* e = new Engines;  // never destroyed: calls may come from exit handlers
  return *e;
}

Backend& backend() {
  Engines& e = engines();
  if (!e.backend) e.backend = host::make_emulator_backend();
  return *e.backend;
}

// Half of the physical memory still available, for the workspace of the calls to come.
std::size_t available_memory() {
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0
             ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) / 2
             : 0;
}

// A column-major DGEMM call (cblas_dgemm's row-major ones are turned into one).
struct Call {
  const char* entry;
  char transa, transb;  // 'N' or 'T' ('C' is 'T' for real matrices)
  std::int64_t m, n, k;
  double alpha;
  const double* a;
  std::int64_t lda;
  const double* b;
  std::int64_t ldb;
  double beta;
  double* c;
  std::int64_t ldc;
};

char normalised(char t) {
  switch (t) {
    case 'N':
    case 'n':
      return 'N';
    case 'T':
    case 't':
    case 'C':
    case 'c':
      return 'T';
    default:
      return 0;
  }
}

// The call's shape, as the checks and the log take it.
session::DgemmCall shape(const Call& c) {
  return {c.entry, c.transa, c.transb, c.m, c.n, c.k, c.lda, c.ldb, c.ldc};
}

// Routes `call` (Handle::dgemm works on copies in the backend's memory, so C is written only
// when the scheme succeeds) or passes it to `fall_through`, logging which.
template <class FallThrough>
void dispatch(const Call& call, FallThrough fall_through) {
  if (inside_call) return fall_through();
  inside_call = true;
  std::string why;
  const std::optional<Routing> r = session::routing_from_environment(why);
  if (r) {
    if (auto refused = session::refusal(shape(call), *r)) {
      why = *refused;
    } else {
      try {
        std::lock_guard lock(engines().mutex);
        ozaki::Handle& h = engines().handles.handle(backend(), *r, "sm90");
        const auto start = std::chrono::steady_clock::now();
        h.dgemm(call.transa, call.transb, call.m, call.n, call.k, call.alpha, call.a, call.lda,
                call.b, call.ldb, call.beta, call.c, call.ldc);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const ozaki::Report report = h.report();  // after_call may replace the handle
        const std::string note =
            engines().handles.after_call(backend(), *r, "sm90", available_memory());
        session::log_line(session::routed_line(shape(call), *r, " on the emulator", report,
                                               call.alpha, call.beta, seconds, note));
        inside_call = false;
        return;
      } catch (const std::exception& e) {
        why = std::string("the scheme failed (") + e.what() + ")";
      }
    }
  }
  const auto start = std::chrono::steady_clock::now();
  fall_through();
  std::ostringstream line;
  line << session::fell_through_line(shape(call), "the BLAS", why) << ", "
       << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s";
  session::log_line(line.str());
  inside_call = false;
}

}  // namespace
}  // namespace tcemu::preload

using tcemu::preload::Call;
using tcemu::preload::dispatch;
using tcemu::preload::next_definition;
using tcemu::preload::normalised;

extern "C" {

// The Fortran BLAS DGEMM (gfortran's calling convention: every argument by reference, then the
// lengths of the two character arguments).
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const double* alpha, const double* a, const int* lda, const double* b, const int* ldb,
            const double* beta, double* c, const int* ldc, std::size_t transa_length,
            std::size_t transb_length) {
  using Next = void (*)(const char*, const char*, const int*, const int*, const int*, const double*,
                        const double*, const int*, const double*, const int*, const double*,
                        double*, const int*, std::size_t, std::size_t);
  static const auto next = next_definition<Next>("dgemm_");
  dispatch(Call{"dgemm_", normalised(*transa), normalised(*transb), *m, *n, *k, *alpha, a, *lda, b,
                *ldb, *beta, c, *ldc},
           [&] {
             next(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, transa_length,
                  transb_length);
           });
}

// CBLAS's enumerations (cblas.h): CblasRowMajor 101, CblasColMajor 102; CblasNoTrans 111,
// CblasTrans 112, CblasConjTrans 113.
void cblas_dgemm(int order, int transa, int transb, int m, int n, int k, double alpha,
                 const double* a, int lda, const double* b, int ldb, double beta, double* c,
                 int ldc) {
  using Next = void (*)(int, int, int, int, int, int, double, const double*, int, const double*,
                        int, double, double*, int);
  static const auto next = next_definition<Next>("cblas_dgemm");
  auto fall_through = [&] {
    next(order, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  };
  auto op = [](int t) -> char { return t == 111 ? 'N' : t == 112 || t == 113 ? 'T' : 0; };
  if (order == 102) {
    dispatch(
        Call{"cblas_dgemm", op(transa), op(transb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc},
        fall_through);
  } else if (order == 101) {
    // Row-major C = op(A) op(B) is column-major C' = op(B)' op(A)': the same memory, with the
    // operands and m, n exchanged.
    dispatch(Call{"cblas_dgemm (row-major)", op(transb), op(transa), n, m, k, alpha, b, ldb, a, lda,
                  beta, c, ldc},
             fall_through);
  } else {
    fall_through();  // the BLAS reports the bad order
  }
}

}  // extern "C"
