#include <tcemu/cases/printable.hpp>
#include <tcemu/session/backends.hpp>

#include <array>

#include <tcemu/host/host_backends.hpp>
#include <tcemu/session/arguments.hpp>

#if TCEMU_WITH_GPU
#include <tcemu/gpu/gpu_backend.hpp>
#endif

namespace tcemu::session {
namespace {

#if TCEMU_WITH_GPU
constexpr bool kGpuBuilt = true;
#else
constexpr bool kGpuBuilt = false;
#endif

// The tables: every word and what it implies.
constexpr std::array<BackendChoice, 3> kBackends = {{
    {"emulator", SliceProducts::tensor_cores, false, true},
    {"cpu64", SliceProducts::binary64, false, true},
    {"gpu", SliceProducts::tensor_cores, true, kGpuBuilt},
}};

constexpr std::array<EngineChoice, 5> kEngines = {{
    {"fastest", Engine::fastest},
    {"mma_sync", Engine::mma_sync},
    {"wgmma", Engine::wgmma},
    {"cublas", Engine::cublas},
    {"emulated", Engine::emulated},
}};

template <class Table>
std::vector<std::string> names_of(const Table& table) {
  std::vector<std::string> names;
  for (const auto& c : table) names.emplace_back(c.name);
  return names;
}

template <class Table>
const typename Table::value_type* find_in(const Table& table, const std::string& name) {
  for (const auto& c : table) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

#if TCEMU_WITH_GPU
gpu::GemmEngine gpu_engine(Engine e) {
  switch (e) {
    case Engine::mma_sync:
      return gpu::GemmEngine::mma_sync;
    case Engine::wgmma:
      return gpu::GemmEngine::wgmma;
    case Engine::cublas:
      return gpu::GemmEngine::cublas;
    case Engine::emulated:
      return gpu::GemmEngine::emulated;
    case Engine::fastest:
      break;
  }
  // Our hardware kernels where they compute the datapath, the emulated engine for any other:
  // the emulator's bits on every datapath.
  return gpu::GemmEngine::fastest;
}
#endif

}  // namespace

std::vector<std::string> backend_names() {
  return names_of(kBackends);
}

std::vector<std::string> engine_names() {
  return names_of(kEngines);
}

const BackendChoice* find_backend_choice(const std::string& name) {
  return find_in(kBackends, name);
}

const EngineChoice* find_engine_choice(const std::string& name) {
  return find_in(kEngines, name);
}

std::string word_list(const std::vector<std::string>& names, const std::string& quote) {
  std::string words;
  for (std::size_t i = 0; i < names.size(); ++i) {
    words += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + quote + names[i] + quote;
  }
  return words;
}

const BackendChoice& backend_choice(const std::string& name) {
  if (const BackendChoice* c = find_backend_choice(name)) return *c;
  throw UsageError("--backend must be " + word_list(backend_names()) + ", got '" + printable(name) +
                   "'");
}

const EngineChoice& engine_choice(const std::string& name) {
  if (const EngineChoice* c = find_engine_choice(name)) return *c;
  throw UsageError("--engine must be " + word_list(engine_names()) + ", got '" + printable(name) +
                   "'");
}

bool gpu_built() {
  return kGpuBuilt;
}

std::unique_ptr<Backend> make_backend(const BackendChoice& choice,
                                      const BackendSettings& settings) {
  if (choice.products == SliceProducts::binary64) return host::make_cpu64_backend(settings.threads);
  if (!choice.gpu) return host::make_emulator_backend(settings.threads);
#if TCEMU_WITH_GPU
  return gpu::make_gpu_backend({.device = settings.device, .engine = gpu_engine(settings.engine)});
#else
  throw NotBuilt("backend '" + std::string(choice.name) +
                 "': this tcemu was built without the CUDA backend (no CUDA toolkit was found when "
                 "it was configured); use the emulator or cpu64 backend");
#endif
}

}  // namespace tcemu::session
