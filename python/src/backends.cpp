#include "backends.hpp"

#include <stdexcept>

#include <nanobind/nanobind.h>

#include <tcemu/host/host_backends.hpp>
#if TCEMU_WITH_GPU
#include <tcemu/gpu/gpu_backend.hpp>
#endif

namespace tcemu::python {
namespace {

#if TCEMU_WITH_GPU
gpu::GemmEngine engine_named(const std::string& engine) {
  if (engine == "mma_sync") return gpu::GemmEngine::mma_sync;
  if (engine == "wgmma") return gpu::GemmEngine::wgmma;
  if (engine == "fastest") return gpu::GemmEngine::fastest;
  if (engine == "cublas") return gpu::GemmEngine::cublas;
  if (engine == "emulated") return gpu::GemmEngine::emulated;
  throw nanobind::value_error(("engine must be 'mma_sync', 'wgmma', 'fastest', 'cublas' or "
                               "'emulated', got '" +
                               engine + "'")
                                  .c_str());
}
#endif

}  // namespace

bool gpu_built() {
#if TCEMU_WITH_GPU
  return true;
#else
  return false;
#endif
}

void no_gpu_build(const std::string& what) {
  throw std::runtime_error(what +
                           ": no GPU: this tcemu was built without the CUDA backend (no CUDA "
                           "toolkit was found when it was installed)");
}

std::unique_ptr<Backend> make_backend(const std::string& name, int threads, int device,
                                      const std::string& engine) {
  if (name == "emulator") return host::make_emulator_backend(threads);
  if (name == "cpu64") return host::make_cpu64_backend(threads);
  if (name == "gpu") {
#if TCEMU_WITH_GPU
    return gpu::make_gpu_backend({.device = device, .engine = engine_named(engine)});
#else
    (void)device;
    (void)engine;
    no_gpu_build("backend 'gpu'");
#endif
  }
  throw nanobind::value_error(
      ("backend must be 'emulator', 'cpu64' or 'gpu', got '" + name + "'").c_str());
}

}  // namespace tcemu::python
