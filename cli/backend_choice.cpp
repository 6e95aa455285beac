#include "backend_choice.hpp"

#include <array>
#include <stdexcept>

#include <tcemu/host/host_backends.hpp>

#if TCEMU_WITH_GPU
#include <tcemu/gpu/gpu_backend.hpp>
#endif

#include "arguments.hpp"

namespace tcemu::cli {
namespace {

std::unique_ptr<Backend> make_gpu(int /*threads*/) {
#if TCEMU_WITH_GPU
  // Our hardware kernels where they compute the datapath, the emulated engine for any other:
  // the emulator's bits on every datapath.
  return gpu::make_gpu_backend({.engine = gpu::GemmEngine::fastest});
#else
  throw std::runtime_error(
      "--backend gpu: this tcemu was built without the CUDA backend (no CUDA toolkit found); "
      "use --backend emulator or cpu64");
#endif
}

// The table: every word, what it implies and how to make its backend.
constexpr std::array<BackendChoice, 3> kChoices = {{
    {"emulator", SliceProducts::tensor_cores, false, &host::make_emulator_backend},
    {"cpu64", SliceProducts::binary64, false, &host::make_cpu64_backend},
    {"gpu", SliceProducts::tensor_cores, true, &make_gpu},
}};

}  // namespace

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const BackendChoice& c : kChoices) names.emplace_back(c.name);
  return names;
}

const BackendChoice* find_backend_choice(const std::string& name) {
  for (const BackendChoice& c : kChoices) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

const BackendChoice& backend_choice(const std::string& name) {
  if (const BackendChoice* c = find_backend_choice(name)) return *c;
  std::string words;
  for (std::size_t i = 0; i < kChoices.size(); ++i) {
    words += (i == 0                     ? ""
              : i + 1 == kChoices.size() ? " or "
                                         : ", ") +
             std::string(kChoices[i].name);
  }
  throw UsageError("--backend must be " + words + ", got '" + name + "'");
}

}  // namespace tcemu::cli
