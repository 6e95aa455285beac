#include "backends.hpp"

#include <map>
#include <stdexcept>
#include <utility>

#include <nanobind/nanobind.h>

#include <tcemu/session/backends.hpp>

namespace tcemu::python {

bool gpu_built() {
  return session::gpu_built();
}

void no_gpu_build(const std::string& what) {
  throw std::runtime_error(what +
                           ": no GPU: this tcemu was built without the CUDA backend (no CUDA "
                           "toolkit was found when it was installed)");
}

const session::BackendChoice& backend_named(const std::string& name) {
  const session::BackendChoice* choice = session::find_backend_choice(name);
  if (choice == nullptr) {
    throw nanobind::value_error(("backend must be " +
                                 session::word_list(session::backend_names(), "'") + ", got '" +
                                 name + "'")
                                    .c_str());
  }
  return *choice;
}

std::unique_ptr<Backend> make_backend(const std::string& name, int threads, int device,
                                      const std::string& engine) {
  const session::BackendChoice* choice = &backend_named(name);
  if (!choice->built) no_gpu_build("backend '" + name + "'");
  session::BackendSettings settings{.threads = threads, .device = device};
  if (choice->gpu) {
    const session::EngineChoice* e = session::find_engine_choice(engine);
    if (e == nullptr) {
      throw nanobind::value_error(("engine must be " +
                                   session::word_list(session::engine_names(), "'") + ", got '" +
                                   engine + "'")
                                      .c_str());
    }
    settings.engine = e->engine;
  }
  return session::make_backend(*choice, settings);
}

SharedBackend shared_gpu_backend(int device, const std::string& engine) {
  struct Kept {
    std::unique_ptr<Backend> backend;
    std::mutex in_use;
  };
  static auto* kept = new std::map<std::pair<int, std::string>, Kept>;
  static std::mutex kept_lock;
  Kept* entry = nullptr;
  {
    const std::lock_guard<std::mutex> guard(kept_lock);
    Kept& k = (*kept)[{device, engine}];
    if (!k.backend) k.backend = make_backend("gpu", 0, device, engine);
    entry = &k;
  }
  return {*entry->backend, entry->in_use};
}

}  // namespace tcemu::python
