// The one place that maps a --backend word to a backend and to what the word implies: how the
// Ozaki scheme multiplies its slices there and whether it runs on the GPU. `tcemu gemm` and the
// experiments read these typed fields instead of comparing words; extend the table in
// backend_choice.cpp when a new backend is linked in.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <tcemu/backend/backend.hpp>

namespace tcemu::cli {

// How a backend's GEMMs multiply the Ozaki scheme's slices (ozaki::Products, options.hpp).
enum class SliceProducts {
  tensor_cores,  // low-precision slices on the (emulated) tensor cores, through a datapath
  binary64,      // binary64 slices by Backend::fp64_gemm (DGEMM-DP-CR)
};

// One word --backend accepts.
struct BackendChoice {
  const char* name;        // the word
  SliceProducts products;  // what the Ozaki scheme multiplies slices with on it
  bool gpu;                // runs on the CUDA device (device 0)
  // The backend on `threads` host threads (0: all). Throws std::runtime_error where this build
  // does not have it.
  std::unique_ptr<Backend> (*make)(int threads);
};

// Words --backend accepts, in the table's order.
std::vector<std::string> backend_names();

// The choice called `name`, or nullptr.
const BackendChoice* find_backend_choice(const std::string& name);

// The choice called `name`. Throws UsageError ("--backend must be emulator, cpu64 or gpu, got
// 'NAME'") for an unknown name.
const BackendChoice& backend_choice(const std::string& name);

}  // namespace tcemu::cli
