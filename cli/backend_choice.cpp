#include "backend_choice.hpp"

#include <stdexcept>

#if TCEMU_WITH_GPU
#include <tcemu/gpu/gpu_backend.hpp>
#include <tcemu/host/host_backends.hpp>
#endif

#include "arguments.hpp"

namespace tcemu::cli {

std::vector<std::string> backend_names() {
  return {"emulator", "cpu64", "gpu"};
}

std::unique_ptr<Backend> make_backend(const std::string& name, int threads) {
  if (name == "emulator") return host::make_emulator_backend(threads);
  if (name == "cpu64") return host::make_cpu64_backend(threads);
  if (name == "gpu") {
#if TCEMU_WITH_GPU
    return gpu::make_gpu_backend();  // our mma.sync kernels: the emulator's bits
#else
    throw std::runtime_error(
        "--backend gpu: this tcemu was built without the CUDA backend (no CUDA toolkit found); "
        "use --backend emulator or cpu64");
#endif
  }
  throw UsageError("--backend must be emulator, cpu64 or gpu, got '" + name + "'");
}

}  // namespace tcemu::cli
