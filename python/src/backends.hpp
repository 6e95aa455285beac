// The backends a scheme or a GEMM runs on, by the words of `tcemu gemm --backend` (the table of
// tcemu/session/backends.hpp), with Python's exceptions.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include <tcemu/backend/backend.hpp>
#include <tcemu/session/backends.hpp>

namespace tcemu::python {

// "emulator": host memory, the emulated tensor cores (any datapath); "cpu64": the same host
// backend whose Ozaki products are binary64 (DGEMM-DP-CR); "gpu": CUDA device `device` with our
// kernels (the emulator's bits; `engine` one of session::engine_names(): "fastest", "mma_sync",
// "wgmma", "cublas" or "emulated"). ValueError
// for another word; RuntimeError for "gpu" in a build without the CUDA backend or on a machine
// without a GPU.
std::unique_ptr<Backend> make_backend(const std::string& name, int threads, int device = 0,
                                      const std::string& engine = "fastest");

// The GPU backend of CUDA device `device` and `engine` that matmul() keeps for the rest of the
// process, made on first use (a backend owns a cuBLAS handle and scratch memory, costly to make
// for each small product), and the mutex a call holds while its steps run: a backend's scratch
// serves one call at a time. Lock it only with the GIL released (the thread that holds it may
// wait for the GIL). Never destroyed: the CUDA runtime may be gone by the time static objects
// are. Errors as make_backend("gpu", ...).
struct SharedBackend {
  Backend& backend;
  std::mutex& steps;
};
SharedBackend shared_gpu_backend(int device, const std::string& engine);

// The table's entry for the backend word `name`; ValueError for another word.
const session::BackendChoice& backend_named(const std::string& name);

// Whether this build has the CUDA backend.
bool gpu_built();

// The RuntimeError of a GPU call in a build without the CUDA backend; `what` names the call.
[[noreturn]] void no_gpu_build(const std::string& what);

}  // namespace tcemu::python
