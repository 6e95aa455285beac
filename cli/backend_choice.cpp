#include "backend_choice.hpp"

#include <stdexcept>

#include "arguments.hpp"

namespace tcemu::cli {

std::vector<std::string> backend_names() {
  return {"emulator", "cpu64", "gpu"};
}

std::unique_ptr<Backend> make_backend(const std::string& name, int threads) {
  if (name == "emulator") return make_emulator_backend(threads);
  if (name == "cpu64") return make_cpu64_backend(threads);
  if (name == "gpu") {
    throw std::runtime_error(
        "--backend gpu: this build has no GPU backend (gpu/ does not provide a Backend yet); "
        "use --backend emulator or cpu64");
  }
  throw UsageError("--backend must be emulator, cpu64 or gpu, got '" + name + "'");
}

}  // namespace tcemu::cli
