// The one place that maps a --backend name to a Backend: extend make_backend when a new backend
// (the GPU's) is linked into the command.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <tcemu/backend/backend.hpp>

namespace tcemu::cli {

// Names --backend accepts.
std::vector<std::string> backend_names();

// The backend called `name` on `threads` host threads (0: all). Throws UsageError for an
// unknown name and std::runtime_error for a backend this build does not have.
std::unique_ptr<Backend> make_backend(const std::string& name, int threads);

}  // namespace tcemu::cli
