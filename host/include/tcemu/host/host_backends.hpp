// The CPU backends (tcemu::host): the Backend interface (tcemu/backend/backend.hpp) on host
// memory, every step family in its own source file under host/src/, named like its GPU
// counterpart under gpu/src/. Results do not depend on the thread count.
#pragma once

#include <memory>

#include <tcemu/backend/backend.hpp>

namespace tcemu::host {

// Host memory, the emulated GEMM (tcemu/emulator/gemm.hpp) and host implementations of every
// other step, on `threads` threads (0: every hardware thread).
std::unique_ptr<Backend> make_emulator_backend(int threads = 0);

// The same host backend under the name "cpu64": the OzBLAS-style DGEMM-DP-CR of Mukunoki et al.
// runs the Ozaki scheme on it with binary64 slices and products by fp64_gemm (a blocked,
// vectorised, multithreaded FP64 GEMM, fp64_gemm.cpp); which products a scheme uses is the
// scheme's choice (ozaki::Fp64Products), not the backend's.
std::unique_ptr<Backend> make_cpu64_backend(int threads = 0);

}  // namespace tcemu::host
