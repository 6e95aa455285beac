// The DGEMM check, route and log both LD_PRELOAD libraries (preload/: cuBLAS and the host BLAS)
// share: what their environment variables ask (docs/preload.md), read at every intercepted call,
// the checks a call passes before it is routed, and the log of what was done with each call.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include <tcemu/ozaki/handle.hpp>
#include <tcemu/ozaki/options.hpp>

namespace tcemu::session {

// The schemes a call can be routed to (the names of `tcemu gemm --scheme`).
enum class Scheme { dgemm_tc, dgemm_int8, dgemm_crt };

const char* scheme_name(Scheme s);

struct Routing {
  Scheme scheme = Scheme::dgemm_int8;
  ozaki::Mode mode = ozaki::Mode::dp;
  int count = 0;                     // tunable: slices (dgemm-tc, dgemm-int8) or moduli (dgemm-crt)
  std::int64_t min_size = 0;         // a call with m, n or k below it falls through
  std::int64_t workspace_mib = 512;  // the handle's first workspace (Options::workspace_bytes)
  bool workspace_grows = true;       // grown to one block of a larger call (HandleCache)
  // cr's rounding direction (ozaki::Options::rounding): TCEMU_PRELOAD_ROUNDING's, or the
  // calling thread's directed mode (with_caller_rounding).
  fp64::Direction rounding = fp64::Direction::nearest_even;
  bool rounding_from_caller = false;  // set by with_caller_rounding, for the log

  bool operator==(const Routing&) const = default;
};

// The routing the variables ask for now: TCEMU_PRELOAD_SCHEME (dgemm-tc, dgemm-int8, dgemm-crt,
// or off), TCEMU_PRELOAD_MODE (dp, cr, tunable; default dp), TCEMU_PRELOAD_SPLITS (tunable
// dgemm-tc and dgemm-int8) or TCEMU_PRELOAD_MODULI (tunable dgemm-crt), TCEMU_PRELOAD_MIN_SIZE
// (default 0), TCEMU_PRELOAD_WORKSPACE_MIB (1 to 2^20, default 512), TCEMU_PRELOAD_WORKSPACE_GROW
// (0 or 1, default 1), TCEMU_PRELOAD_ROUNDING (nearest, upward, downward, toward-zero; default
// nearest; a directed one makes the mode cr, whatever TCEMU_PRELOAD_MODE says, since no other
// mode bounds the product in a direction). Nothing when calls are to fall
// through: the scheme unset or "off", or a value that is not understood; the latter is reported
// once per variable and value on stderr, naming the variable, and `why` receives the reason in both
// cases.
std::optional<Routing> routing_from_environment(std::string& why);

// The rule of routing_from_environment over the values `variable(NAME)` gives (nothing: unset),
// without the report on stderr: `bad` is set when `why` is a bad value's message (the one
// routing_from_environment reports), cleared when the scheme is unset or off or the variables
// route. fuzz/fuzz_preload_env.cpp feeds it every string.
using PreloadVariables = std::function<std::optional<std::string_view>(const char* name)>;
std::optional<Routing> routing_from_variables(const PreloadVariables& variable, std::string& why,
                                              bool& bad);

// r for a call made while the calling thread's rounding mode (fegetround()) is `caller_mode`: a
// directed one (FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO) makes the mode cr and the rounding that
// direction, whatever the variables say: the caller computes under it to get a bound, which
// only cr rounded in that direction gives. r unchanged under FE_TONEAREST.
Routing with_caller_rounding(Routing r, int caller_mode);

// The routing of a single-precision call (sgemm, cgemm: Handle modes sp, cr and tunable) that r
// gives a double-precision one: dp becomes sp (SGEMM-TC's d), cr (asked for, or from a directed
// caller rounding: with_caller_rounding) and tunable stay: cr gives the exact product rounded
// once to binary32 in r.rounding's direction, the bound the caller computes for.
Routing for_single_precision(const Routing& r);

// The handle that runs calls routed by r on `backend`: r's scheme, mode and count; dgemm-tc on
// the fp16 -> fp32 mma.sync datapath of preset `tensor_core_arch` (the emulator's "sm90" or the
// present GPU's; empty, for a GPU without a preset: dgemm-tc throws, naming the reason).
std::unique_ptr<ozaki::Handle> make_handle(Backend& backend, const Routing& r,
                                           const std::string& tensor_core_arch);

// One backend's handles, one per routing, made at first use and kept. A call that ran in more
// than one block (its Report::one_block_workspace above the workspace) replaces its routing's
// handle by one whose workspace holds the whole call, when the routing lets the workspace grow
// and that takes at most `available` bytes (the caller's share of the memory still free): later
// calls of that size run in one block, as fast as the scheme goes.
class HandleCache {
 public:
  ozaki::Handle& handle(Backend& backend, const Routing& r, const std::string& tensor_core_arch);
  // After a call through handle(r): grows r's handle as above. Returns what it did for the log
  // ("workspace grown to N MiB", "workspace kept at N MiB: one block takes M MiB, more than ...")
  // or "" when the call ran in one block or the workspace does not grow.
  std::string after_call(Backend& backend, const Routing& r, const std::string& tensor_core_arch,
                         std::size_t available);

 private:
  struct Entry {
    std::unique_ptr<ozaki::Handle> handle;
    std::int64_t workspace_mib = 0;
  };
  Entry& entry(const Routing& r);
  std::map<std::tuple<Scheme, ozaki::Mode, int, std::int64_t, bool, fp64::Direction>, Entry>
      entries_;
};

// The arguments of a GEMM call (real or complex, any precision) as both libraries receive them,
// column major (a row-major cblas call turned into one); the matrices and scalars stay with each
// library.
struct DgemmCall {
  const char* entry;    // the entry point, as the log names it
  char transa, transb;  // 'N', 'T' or 'C' (real matrices: 'T' for 'C'); 0 for any other operation
  std::int64_t m, n, k;
  std::int64_t lda, ldb, ldc;
};

// Why `call` is not routed by r, or nothing. First the BLAS's own argument checks in the BLAS's
// order: an operation other than N, T, C; a negative dimension; a leading dimension too small;
// with `null_scalars`, a null alpha or beta (cuBLAS takes them by pointer). Such a call falls
// through to the BLAS or cuBLAS, which reports it by its own error semantics (xerbla, a cuBLAS
// status). Then r's TCEMU_PRELOAD_MIN_SIZE.
std::optional<std::string> refusal(const DgemmCall& call, const Routing& r,
                                   bool null_scalars = false);

// "ENTRY OPS m M n N k K lda A ldb B ldc C", the start of every log line (an operation other than
// N, T, C as '?').
std::string call_shape(const DgemmCall& call);

// The log line of a call routed by r on `where` ("" or " on the emulator"): its shape, the
// scheme, mode and count, a directed rounding and where it came from ("rounding upward, the
// caller's mode" or "rounding upward, TCEMU_PRELOAD_ROUNDING"), the report (slices or moduli,
// GEMMs, blocks), alpha, beta (a complex one as "(re, im)") and the seconds, then `note`
// (HandleCache::after_call's) after "; " where there is one.
std::string routed_line(const DgemmCall& call, const Routing& r, const std::string& where,
                        const ozaki::Report& report, std::complex<double> alpha,
                        std::complex<double> beta, double seconds, const std::string& note);

// The start of the log line of a call that fell through to `target` ("cuBLAS", "the BLAS") for
// the reason `why`: "SHAPE: fell through to TARGET (WHY)"; each library adds what it measured.
std::string fell_through_line(const DgemmCall& call, const std::string& target,
                              const std::string& why);

// Writes "tcemu preload: MESSAGE" on stderr the first time `message` is seen in this process.
void warn(const std::string& message);

// Appends `line` and a newline to the log TCEMU_PRELOAD_LOG names (a file, appended to, or
// "stderr"); nothing when it is unset. A file that cannot be opened is reported once on stderr.
void log_line(const std::string& line);

}  // namespace tcemu::session
