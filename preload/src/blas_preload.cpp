// The host BLAS entry points of the LD_PRELOAD library libtcemu_blas_preload.so
// (docs/preload.md): the Fortran ?gemm_ and cblas_?gemm for ? = d, s, z, c (real and complex,
// double and single precision), and the same under the names of the OpenBLAS that NumPy's and
// SciPy's wheels bundle (scipy_?gemm_, scipy_cblas_?gemm with 32-bit integers; scipy_?gemm_64_,
// scipy_cblas_?gemm64_ with 64-bit ones, what NumPy 2's `a @ b` calls; ?gemm_64_, cblas_?gemm64_,
// the names of older NumPy wheels), routed to the Ozaki scheme the environment names
// (tcemu/session/preload_route.hpp) on the emulator backend, the CPU backend that gives the GPU's
// bits (its integer MMA for dgemm-int8 and dgemm-crt, the sm90 fp16 -> fp32 mma.sync preset for
// dgemm-tc): dgemm and zgemm in the variables' mode, sgemm and cgemm in mode sp for dp, cr for
// cr, tunable for tunable (session::for_single_precision); zgemm and cgemm through the real form
// (BlasRoutines::zgemm). A call is passed to the BLAS the program loaded (next_definition.hpp)
// when the scheme is off, the variables are bad, the call is below TCEMU_PRELOAD_MIN_SIZE, its
// arguments are not a valid GEMM (the BLAS then reports them), or the scheme refuses the
// operands (C is untouched then: the handle works on copies). A call made while the calling
// thread rounds upward, downward or toward zero is routed in mode cr rounded in that direction
// to its own precision (session::with_caller_rounding). Where no loaded
// object defines the entry point, a call that falls through is not computed: a line on stderr
// says so once, and the call returns with C unchanged, as a BLAS does for an argument error
// (xerbla), instead of taking the process down.
#include <cfenv>
#include <chrono>
#include <complex>
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

// What each element type's calls need: the handle's routine, and whether the precision is
// single (routed through session::for_single_precision) and the matrices complex (their 'C'
// conjugates; for real ones 'C' is 'T').
template <class T>
struct Precision;
template <>
struct Precision<double> {
  static constexpr auto gemm = &BlasRoutines::dgemm;
  static constexpr bool single = false, complex = false;
};
template <>
struct Precision<float> {
  static constexpr auto gemm = &BlasRoutines::sgemm;
  static constexpr bool single = true, complex = false;
};
template <>
struct Precision<std::complex<double>> {
  static constexpr auto gemm = &BlasRoutines::zgemm;
  static constexpr bool single = false, complex = true;
};
template <>
struct Precision<std::complex<float>> {
  static constexpr auto gemm = &BlasRoutines::cgemm;
  static constexpr bool single = true, complex = true;
};

// A column-major ?GEMM call (cblas' row-major ones are turned into one) of element type T.
template <class T>
struct Call {
  const char* entry;
  char transa, transb;  // 'N', 'T' or 'C' (normalised)
  std::int64_t m, n, k;
  T alpha;
  const T* a;
  std::int64_t lda;
  const T* b;
  std::int64_t ldb;
  T beta;
  T* c;
  std::int64_t ldc;
};

// 'N', 'T' or 'C' for either case of each ('C' is 'T' for real matrices), 0 for anything else.
template <class T>
char normalised(char t) {
  switch (t) {
    case 'N':
    case 'n':
      return 'N';
    case 'T':
    case 't':
      return 'T';
    case 'C':
    case 'c':
      return Precision<T>::complex ? 'C' : 'T';
    default:
      return 0;
  }
}

// The call's shape, as the checks and the log take it.
template <class T>
session::DgemmCall shape(const Call<T>& c) {
  return {c.entry, c.transa, c.transb, c.m, c.n, c.k, c.lda, c.ldb, c.ldc};
}

// The routing of a call of type T, or nothing (`why` says why): the variables' (a directed
// caller rounding making it cr), for single precision through session::for_single_precision.
template <class T>
std::optional<Routing> routing(int caller_mode, std::string& why) {
  std::optional<Routing> r = session::routing_from_environment(why);
  if (!r) return r;
  r = session::with_caller_rounding(*r, caller_mode);
  if constexpr (Precision<T>::single) r = session::for_single_precision(*r);
  return r;
}

// Routes `call` (the handle works on copies in the backend's memory, so C is written only when
// the scheme succeeds) or passes it to `fall_through` (which returns false when there is no BLAS
// to pass it to), logging which.
template <class T, class FallThrough>
void dispatch(const Call<T>& call, FallThrough fall_through) {
  if (inside_call) {
    fall_through();
    return;
  }
  const int caller_mode = std::fegetround();  // before any scope of the libraries sets its own
  inside_call = true;
  std::string why;
  const std::optional<Routing> r = routing<T>(caller_mode, why);
  if (r) {
    if (auto refused = session::refusal(shape(call), *r)) {
      why = *refused;
    } else {
      try {
        std::lock_guard lock(engines().mutex);
        ozaki::Handle& h = engines().handles.handle(backend(), *r, "sm90");
        const auto start = std::chrono::steady_clock::now();
        (h.*Precision<T>::gemm)(call.transa, call.transb, call.m, call.n, call.k, call.alpha,
                                call.a, call.lda, call.b, call.ldb, call.beta, call.c, call.ldc);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const ozaki::Report report = h.report();  // after_call may replace the handle
        const std::string note =
            engines().handles.after_call(backend(), *r, "sm90", available_memory());
        session::log_line(session::routed_line(shape(call), *r, " on the emulator", report,
                                               std::complex<double>(call.alpha),
                                               std::complex<double>(call.beta), seconds, note));
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

// The Fortran ?GEMM (gfortran's calling convention: every argument by reference, then the
// lengths of the two character arguments) of element type T, with integers of type Int (int:
// LP64; std::int64_t: ILP64, the `64_` names), under `name`.
template <class T, class Int>
using FortranGemm = void (*)(const char*, const char*, const Int*, const Int*, const Int*, const T*,
                             const T*, const Int*, const T*, const Int*, const T*, T*, const Int*,
                             std::size_t, std::size_t);

template <class T, class Int>
void fortran_gemm(NextDefinition<FortranGemm<T, Int>>& next, const char* name, const char* transa,
                  const char* transb, const Int* m, const Int* n, const Int* k, const T* alpha,
                  const T* a, const Int* lda, const T* b, const Int* ldb, const T* beta, T* c,
                  const Int* ldc, std::size_t transa_length, std::size_t transb_length) {
  dispatch(Call<T>{name, normalised<T>(*transa), normalised<T>(*transb), *m, *n, *k, *alpha, a,
                   *lda, b, *ldb, *beta, c, *ldc},
           [&] {
             const auto f = next.get();
             if (f != nullptr) {
               f(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, transa_length,
                 transb_length);
             }
             return f != nullptr;
           });
}

// CBLAS's argument types for element type T: real scalars by value and typed pointers, complex
// scalars and matrices by `const void*` / `void*` (cblas.h).
template <class T>
struct CblasTypes {
  using Scalar = T;
  using In = const T*;
  using Out = T*;
  static T value(Scalar s) { return s; }
};
template <class T>
struct CblasTypes<std::complex<T>> {
  using Scalar = const void*;
  using In = const void*;
  using Out = void*;
  static std::complex<T> value(Scalar s) { return *static_cast<const std::complex<T>*>(s); }
};

// CBLAS's ?gemm with integers of type Int. CBLAS's enumerations (cblas.h, int-sized in every
// ABI): CblasRowMajor 101, CblasColMajor 102; CblasNoTrans 111, CblasTrans 112, CblasConjTrans
// 113 (OpenBLAS's CblasConjNoTrans, 114, falls through).
template <class T, class Int>
using CblasGemm = void (*)(int, int, int, Int, Int, Int, typename CblasTypes<T>::Scalar,
                           typename CblasTypes<T>::In, Int, typename CblasTypes<T>::In, Int,
                           typename CblasTypes<T>::Scalar, typename CblasTypes<T>::Out, Int);

template <class T, class Int>
void cblas_gemm_as(NextDefinition<CblasGemm<T, Int>>& next, const char* name, int order, int transa,
                   int transb, Int m, Int n, Int k, typename CblasTypes<T>::Scalar alpha,
                   typename CblasTypes<T>::In a, Int lda, typename CblasTypes<T>::In b, Int ldb,
                   typename CblasTypes<T>::Scalar beta, typename CblasTypes<T>::Out c, Int ldc) {
  auto fall_through = [&] {
    const auto f = next.get();
    if (f != nullptr) f(order, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return f != nullptr;
  };
  auto op = [](int t) -> char {
    return normalised<T>(t == 111 ? 'N' : t == 112 ? 'T' : t == 113 ? 'C' : 0);
  };
  using Types = CblasTypes<T>;
  const auto* ta = static_cast<const T*>(a);
  const auto* tb = static_cast<const T*>(b);
  auto* tc = static_cast<T*>(c);
  if (order == 102) {
    dispatch(Call<T>{name, op(transa), op(transb), m, n, k, Types::value(alpha), ta, lda, tb, ldb,
                     Types::value(beta), tc, ldc},
             fall_through);
  } else if (order == 101) {
    // Row-major C = op(A) op(B) is column-major C' = op(B)' op(A)': the same memory, with the
    // operands and m, n exchanged, and the same operations (the column-major view of a row-major
    // X is X', and op(X)' is op of that view for N, T and C alike).
    const std::string entry = std::string(name) + " (row-major)";
    dispatch(Call<T>{entry.c_str(), op(transb), op(transa), n, m, k, Types::value(alpha), tb, ldb,
                     ta, lda, Types::value(beta), tc, ldc},
             fall_through);
  } else if (!fall_through()) {  // the BLAS reports the bad order
    session::log_line(std::string(name) + ": not computed, no BLAS in this process defines it");
  }
}

// The entry points this library defines, for the load-time log line.
constexpr const char* kEntryPoints =
    "dgemm_, cblas_dgemm, scipy_dgemm_, scipy_cblas_dgemm, scipy_dgemm_64_, scipy_cblas_dgemm64_, "
    "dgemm_64_, cblas_dgemm64_, "
    "sgemm_, cblas_sgemm, scipy_sgemm_, scipy_cblas_sgemm, scipy_sgemm_64_, scipy_cblas_sgemm64_, "
    "sgemm_64_, cblas_sgemm64_, "
    "zgemm_, cblas_zgemm, scipy_zgemm_, scipy_cblas_zgemm, scipy_zgemm_64_, scipy_cblas_zgemm64_, "
    "zgemm_64_, cblas_zgemm64_, "
    "cgemm_, cblas_cgemm, scipy_cgemm_, scipy_cblas_cgemm, scipy_cgemm_64_, scipy_cblas_cgemm64_, "
    "cgemm_64_, cblas_cgemm64_";

// With TCEMU_PRELOAD_LOG set, one line when the library is loaded: what it intercepts and how
// the variables route calls now.
__attribute__((constructor)) void log_load() {
  std::string why;
  const std::optional<Routing> r = session::routing_from_environment(why);
  session::log_line(std::string("libtcemu_blas_preload.so loaded: intercepts ") + kEntryPoints +
                    " (the real and complex GEMMs of the host BLAS, also under the names of "
                    "NumPy's and SciPy's bundled OpenBLAS); " +
                    (r ? std::string("routes them to ") + session::scheme_name(r->scheme) +
                             " mode " + ozaki::mode_name(r->mode)
                       : "lets them fall through (" + why + ")") +
                    "; a call under a directed rounding mode is routed in mode cr rounded in that "
                    "direction to its own precision");
}

}  // namespace
}  // namespace tcemu::preload

using tcemu::preload::cblas_gemm_as;
using tcemu::preload::CblasGemm;
using tcemu::preload::CblasTypes;
using tcemu::preload::fortran_gemm;
using tcemu::preload::FortranGemm;
using tcemu::preload::kNoBlas;
using tcemu::preload::NextDefinition;
using Z = std::complex<double>;
using C = std::complex<float>;

// The definitions: one line each, through fortran_gemm and cblas_gemm_as.
#define TCEMU_FORTRAN_GEMM(NAME, T, INT)                                                           \
  void NAME(const char* transa, const char* transb, const INT* m, const INT* n, const INT* k,      \
            const T* alpha, const T* a, const INT* lda, const T* b, const INT* ldb, const T* beta, \
            T* c, const INT* ldc, std::size_t transa_length, std::size_t transb_length) {          \
    static NextDefinition<FortranGemm<T, INT>> next(#NAME, kNoBlas);                               \
    fortran_gemm<T, INT>(next, #NAME, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c,     \
                         ldc, transa_length, transb_length);                                       \
  }
#define TCEMU_CBLAS_GEMM(NAME, T, INT)                                                           \
  void NAME(int order, int transa, int transb, INT m, INT n, INT k, CblasTypes<T>::Scalar alpha, \
            CblasTypes<T>::In a, INT lda, CblasTypes<T>::In b, INT ldb,                          \
            CblasTypes<T>::Scalar beta, CblasTypes<T>::Out c, INT ldc) {                         \
    static NextDefinition<CblasGemm<T, INT>> next(#NAME, kNoBlas);                               \
    cblas_gemm_as<T, INT>(next, #NAME, order, transa, transb, m, n, k, alpha, a, lda, b, ldb,    \
                          beta, c, ldc);                                                         \
  }
// Every name of one precision P (d, s, z, c) and element type T: the reference BLAS's, and those
// of NumPy's and SciPy's wheels (scipy_ with 32-bit integers, scipy_..64_ with 64-bit ones, what
// NumPy 2's `a @ b` calls; ..._64_ and cblas_..64_, older NumPy wheels).
#define TCEMU_GEMMS(P, T)                                     \
  TCEMU_FORTRAN_GEMM(P##gemm_, T, int)                        \
  TCEMU_CBLAS_GEMM(cblas_##P##gemm, T, int)                   \
  TCEMU_FORTRAN_GEMM(scipy_##P##gemm_, T, int)                \
  TCEMU_CBLAS_GEMM(scipy_cblas_##P##gemm, T, int)             \
  TCEMU_FORTRAN_GEMM(scipy_##P##gemm_64_, T, std::int64_t)    \
  TCEMU_CBLAS_GEMM(scipy_cblas_##P##gemm64_, T, std::int64_t) \
  TCEMU_FORTRAN_GEMM(P##gemm_64_, T, std::int64_t)            \
  TCEMU_CBLAS_GEMM(cblas_##P##gemm64_, T, std::int64_t)

extern "C" {

TCEMU_GEMMS(d, double)
TCEMU_GEMMS(s, float)
TCEMU_GEMMS(z, Z)
TCEMU_GEMMS(c, C)

}  // extern "C"
