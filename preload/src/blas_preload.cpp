// The host BLAS entry points of the LD_PRELOAD library libtcemu_blas_preload.so
// (docs/preload.md): the Fortran dgemm_ and cblas_dgemm, and the same under the names of the
// OpenBLAS that NumPy's and SciPy's wheels bundle (scipy_dgemm_, scipy_cblas_dgemm with 32-bit
// integers; scipy_dgemm_64_, scipy_cblas_dgemm64_ with 64-bit ones, what NumPy 2's `a @ b` calls;
// dgemm_64_, cblas_dgemm64_, the names of older NumPy wheels), routed to the Ozaki scheme the
// environment names (tcemu/session/preload_route.hpp) on the emulator backend, the CPU backend that
// gives the GPU's bits (its integer MMA for dgemm-int8 and dgemm-crt, the sm90 fp16 -> fp32
// mma.sync preset for dgemm-tc), or passed to the BLAS the program loaded (next_definition.hpp)
// when the scheme is off, the variables are bad, the call is below TCEMU_PRELOAD_MIN_SIZE, its
// arguments are not a valid DGEMM (the BLAS then reports them), or the scheme refuses the
// operands (C is untouched then: the handle works on copies). A call made while the calling
// thread rounds upward, downward or toward zero is routed in mode cr rounded in that direction
// (session::with_caller_rounding). Where no loaded object defines the entry point, a call that
// falls through is not computed: a line on stderr says so once, and the call returns with C
// unchanged, as a BLAS does for an argument error (xerbla), instead of taking the process down.

#include <cfenv>
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
// when the scheme succeeds) or passes it to `fall_through` (which returns false when there is no
// BLAS to pass it to), logging which.
template <class FallThrough>
void dispatch(const Call& call, FallThrough fall_through) {
  if (inside_call) {
    fall_through();
    return;
  }
  const int caller_mode = std::fegetround();  // before any scope of the libraries sets its own
  inside_call = true;
  std::string why;
  std::optional<Routing> r = session::routing_from_environment(why);
  if (r) {
    r = session::with_caller_rounding(*r, caller_mode);
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
  const bool computed = fall_through();
  std::ostringstream line;
  if (computed) {
    line << session::fell_through_line(shape(call), "the BLAS", why) << ", "
         << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s";
  } else {
    line << session::call_shape(shape(call)) << ": not computed, no BLAS in this process defines "
         << call.entry << " (" << why << "); C unchanged";
  }
  session::log_line(line.str());
  inside_call = false;
}

// What a call that finds no BLAS does (find_definition's report).
constexpr const char* kNoBlas = "return with C unchanged, as a BLAS does for an argument error";

// The Fortran DGEMM (gfortran's calling convention: every argument by reference, then the
// lengths of the two character arguments), with integers of type Int (int: LP64; std::int64_t:
// ILP64, the `64_` names), under `name`.
template <class Int>
using FortranDgemm = void (*)(const char*, const char*, const Int*, const Int*, const Int*,
                              const double*, const double*, const Int*, const double*, const Int*,
                              const double*, double*, const Int*, std::size_t, std::size_t);

template <class Int>
void fortran_dgemm(NextDefinition<FortranDgemm<Int>>& next, const char* name, const char* transa,
                   const char* transb, const Int* m, const Int* n, const Int* k,
                   const double* alpha, const double* a, const Int* lda, const double* b,
                   const Int* ldb, const double* beta, double* c, const Int* ldc,
                   std::size_t transa_length, std::size_t transb_length) {
  dispatch(Call{name, normalised(*transa), normalised(*transb), *m, *n, *k, *alpha, a, *lda, b,
                *ldb, *beta, c, *ldc},
           [&] {
             const auto f = next.get();
             if (f != nullptr) {
               f(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, transa_length,
                 transb_length);
             }
             return f != nullptr;
           });
}

// CBLAS's dgemm with integers of type Int under `name`. CBLAS's enumerations (cblas.h, int-sized
// in every ABI): CblasRowMajor 101, CblasColMajor 102; CblasNoTrans 111, CblasTrans 112,
// CblasConjTrans 113.
template <class Int>
using CblasDgemm = void (*)(int, int, int, Int, Int, Int, double, const double*, Int, const double*,
                            Int, double, double*, Int);

template <class Int>
void cblas_dgemm_as(NextDefinition<CblasDgemm<Int>>& next, const char* name, int order, int transa,
                    int transb, Int m, Int n, Int k, double alpha, const double* a, Int lda,
                    const double* b, Int ldb, double beta, double* c, Int ldc) {
  auto fall_through = [&] {
    const auto f = next.get();
    if (f != nullptr) f(order, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return f != nullptr;
  };
  auto op = [](int t) -> char { return t == 111 ? 'N' : t == 112 || t == 113 ? 'T' : 0; };
  if (order == 102) {
    dispatch(Call{name, op(transa), op(transb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc},
             fall_through);
  } else if (order == 101) {
    // Row-major C = op(A) op(B) is column-major C' = op(B)' op(A)': the same memory, with the
    // operands and m, n exchanged.
    const std::string entry = std::string(name) + " (row-major)";
    dispatch(
        Call{entry.c_str(), op(transb), op(transa), n, m, k, alpha, b, ldb, a, lda, beta, c, ldc},
        fall_through);
  } else if (!fall_through()) {  // the BLAS reports the bad order
    session::log_line(std::string(name) + ": not computed, no BLAS in this process defines it");
  }
}

// The entry points this library defines, for the load-time log line.
constexpr const char* kEntryPoints =
    "dgemm_, cblas_dgemm, scipy_dgemm_, scipy_cblas_dgemm, scipy_dgemm_64_, "
    "scipy_cblas_dgemm64_, dgemm_64_, cblas_dgemm64_";

// With TCEMU_PRELOAD_LOG set, one line when the library is loaded: what it intercepts and how
// the variables route calls now.
__attribute__((constructor)) void log_load() {
  std::string why;
  const std::optional<Routing> r = session::routing_from_environment(why);
  session::log_line(std::string("libtcemu_blas_preload.so loaded: intercepts ") + kEntryPoints +
                    " (double-precision GEMMs of the host BLAS, also under the names of NumPy's "
                    "and SciPy's bundled OpenBLAS); " +
                    (r ? std::string("routes them to ") + session::scheme_name(r->scheme) +
                             " mode " + session::mode_name(r->mode)
                       : "lets them fall through (" + why + ")") +
                    "; a call under a directed rounding mode is routed in mode cr rounded in "
                    "that direction");
}

}  // namespace
}  // namespace tcemu::preload

using tcemu::preload::cblas_dgemm_as;
using tcemu::preload::CblasDgemm;
using tcemu::preload::fortran_dgemm;
using tcemu::preload::FortranDgemm;
using tcemu::preload::kNoBlas;
using tcemu::preload::NextDefinition;

// The definitions: one line each, through fortran_dgemm and cblas_dgemm_as.
#define TCEMU_FORTRAN_DGEMM(NAME, INT)                                                             \
  void NAME(const char* transa, const char* transb, const INT* m, const INT* n, const INT* k,      \
            const double* alpha, const double* a, const INT* lda, const double* b, const INT* ldb, \
            const double* beta, double* c, const INT* ldc, std::size_t transa_length,              \
            std::size_t transb_length) {                                                           \
    static NextDefinition<FortranDgemm<INT>> next(#NAME, kNoBlas);                                 \
    fortran_dgemm<INT>(next, #NAME, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,  \
                       transa_length, transb_length);                                              \
  }
#define TCEMU_CBLAS_DGEMM(NAME, INT)                                                               \
  void NAME(int order, int transa, int transb, INT m, INT n, INT k, double alpha, const double* a, \
            INT lda, const double* b, INT ldb, double beta, double* c, INT ldc) {                  \
    static NextDefinition<CblasDgemm<INT>> next(#NAME, kNoBlas);                                   \
    cblas_dgemm_as<INT>(next, #NAME, order, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta,  \
                        c, ldc);                                                                   \
  }

extern "C" {

TCEMU_FORTRAN_DGEMM(dgemm_, int)
TCEMU_CBLAS_DGEMM(cblas_dgemm, int)
TCEMU_FORTRAN_DGEMM(scipy_dgemm_, int)
TCEMU_CBLAS_DGEMM(scipy_cblas_dgemm, int)
TCEMU_FORTRAN_DGEMM(scipy_dgemm_64_, std::int64_t)
TCEMU_CBLAS_DGEMM(scipy_cblas_dgemm64_, std::int64_t)
TCEMU_FORTRAN_DGEMM(dgemm_64_, std::int64_t)
TCEMU_CBLAS_DGEMM(cblas_dgemm64_, std::int64_t)

}  // extern "C"
