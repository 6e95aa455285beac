// The caller's floating-point state (DESIGN.md: "No global rounding mode"). The libraries run
// inside other people's programs, whose threads may have set another rounding mode (fesetround)
// or, on x86, flush-to-zero and denormals-are-zero (MXCSR bits 15 and 6). Every computation of
// the libraries is defined in round-to-nearest-even with gradual underflow, so each public host
// entry point runs under a FloatingPointScope: it saves the calling thread's environment
// (fegetenv), installs the default one (fesetenv(FE_DFL_ENV): round to nearest, every exception
// masked; on x86 FTZ and DAZ are also cleared explicitly), and restores the saved environment on
// destruction, exception flags raised inside included, so that the caller sees its own state
// unchanged. The state is per thread. x86 (MXCSR) and the rounding mode everywhere are covered;
// on other architectures flush-to-zero is whatever their FE_DFL_ENV sets (glibc's AArch64 one
// clears FPCR.FZ).
//
// A scope inside another on the same thread does nothing (a thread-local depth), so that a
// per-element entry point called by a whole-matrix one costs one compare.
//
// Where the scopes are, and why they cover every path of host arithmetic:
//
//   - parallel_for (parallel_for.hpp): each thread that runs chunks (the calling thread, the
//     persistent pool workers of worker_pool.hpp, made under whatever state their first caller
//     had, and the threads of the fallback) runs them under a scope. Every multi-threaded host
//     loop of the libraries is a parallel_for.
//   - the emulator's entry points that compute: emulated_gemm, emulated_integer_gemm,
//     mma_element, mma_element_decoded, integer_mma_element, the quantizers of quantize.hpp; the
//     rest of the emulator (sparse cases, case files, detection, capture replay) reaches
//     arithmetic through these.
//   - every Backend step (backend/src/*_steps.cpp): the non-virtual public step that checks its
//     arguments and calls the backend's implementation, so host/ (emulator and cpu64 backends)
//     and the host code of gpu/ (scales, bounds, the values steps return) run under it whoever
//     calls them.
//   - the schemes' entry points, for the arithmetic they do between steps: BlasRoutines' six
//     routines (ozaki::Handle and accurate::Handle, and the BLAS call plumbing of blas_call.hpp),
//     ozaki::Handle's constructor and gemm, markidis::gemm and markidis::sgemm.
//   - the reference oracles that compute in binary64 (reference/).
//
// The Python module, both LD_PRELOAD libraries and the CLI reach arithmetic only through these
// (a CLI process starts in the default state; fenv is not inherited through exec). Device code
// uses _rn intrinsics and does not read the host's state.
#pragma once

#include <cfenv>

namespace tcemu {

class FloatingPointScope {
 public:
  FloatingPointScope();
  ~FloatingPointScope();
  FloatingPointScope(const FloatingPointScope&) = delete;
  FloatingPointScope& operator=(const FloatingPointScope&) = delete;

 private:
  std::fenv_t saved_{};
  bool outermost_;
};

}  // namespace tcemu
