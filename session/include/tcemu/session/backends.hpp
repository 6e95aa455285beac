// The one table of backend and engine words every front door takes (`tcemu gemm --backend`, the
// Python functions' backend= and engine=, the LD_PRELOAD libraries, the experiments, the
// benchmarks): what each word makes, whether it runs on the GPU, whether this build has it, and
// the Ozaki products a backend implies (products.hpp). Extend the tables in backends.cpp when a
// new backend or engine is linked in.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/backend/backend.hpp>

namespace tcemu::session {

// How a backend's GEMMs multiply the Ozaki scheme's floating-point slices.
enum class SliceProducts {
  tensor_cores,  // low-precision slices on the (emulated) tensor cores, through a datapath
  binary64,      // binary64 slices by Backend::fp64_gemm (DGEMM-DP-CR)
};

// One backend word: "emulator", "cpu64", "gpu".
struct BackendChoice {
  const char* name;        // the word
  SliceProducts products;  // what the Ozaki scheme multiplies floating-point slices with on it
  bool gpu;                // runs on a CUDA device
  bool built;              // this build has it (false: "gpu" without the CUDA toolkit)
};

// The GPU backend's GEMM engines (gpu::GemmEngine, named here so that no front door needs CUDA
// headers to choose one).
enum class Engine { fastest, mma_sync, wgmma, cublas, emulated };

// One engine word: "fastest", "mma_sync", "wgmma", "cublas", "emulated".
struct EngineChoice {
  const char* name;
  Engine engine;
};

// Words of the tables, in their order.
std::vector<std::string> backend_names();
std::vector<std::string> engine_names();

// The choice called `name`, or nullptr.
const BackendChoice* find_backend_choice(const std::string& name);
const EngineChoice* find_engine_choice(const std::string& name);

// The choice called `name`. Throws UsageError ("--backend must be emulator, cpu64 or gpu, got
// 'NAME'"; "--engine must be fastest, ..., got 'NAME'") for an unknown name.
const BackendChoice& backend_choice(const std::string& name);
const EngineChoice& engine_choice(const std::string& name);

// The words of `names` as a sentence ("a, b or c"), each between `quote`s.
std::string word_list(const std::vector<std::string>& names, const std::string& quote = "");

// Whether this build has the CUDA backend.
bool gpu_built();

// A backend this build does not have.
class NotBuilt : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Where and how a backend is made: host threads (0: all) for the host backends, the CUDA device
// and GEMM engine for the GPU's.
struct BackendSettings {
  int threads = 0;
  int device = 0;
  Engine engine = Engine::fastest;
};

// The backend of `choice`. Throws NotBuilt where this build does not have it (the message names
// the word and says that this build lacks it), and what the backend's constructor throws (the GPU
// backend: "no CUDA device (...)").
std::unique_ptr<Backend> make_backend(const BackendChoice& choice,
                                      const BackendSettings& settings = {});

}  // namespace tcemu::session
