// The definition an intercepted symbol would have had without the preload library
// (next_definition.hpp).
#include "next_definition.hpp"

#include <dlfcn.h>
#include <link.h>

#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <tcemu/session/preload_route.hpp>

namespace tcemu::preload {
namespace {

// The load address of this library: definitions inside it are its own interceptions.
const void* own_base() {
  static const void* base = [] {
    Dl_info info{};
    dladdr(reinterpret_cast<const void*>(&own_base), &info);
    return info.dli_fbase;
  }();
  return base;
}

// f, unless it is null or lies in this library.
void* foreign(void* f) {
  if (f == nullptr) return nullptr;
  Dl_info info{};
  if (dladdr(f, &info) != 0 && info.dli_fbase == own_base()) return nullptr;
  return f;
}

// The names of the objects loaded now, in load order (the main program, whose name is empty, is
// left out: RTLD_NEXT's global scope has searched it already; the vDSO's name opens nothing).
std::vector<std::string> loaded_objects() {
  std::vector<std::string> paths;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') {
          static_cast<std::vector<std::string>*>(out)->emplace_back(info->dlpi_name);
        }
        return 0;
      },
      &paths);
  return paths;
}

}  // namespace

void* find_definition(const char* name, const char* failure) {
  if (void* f = foreign(dlsym(RTLD_NEXT, name))) return f;
  for (const std::string& path : loaded_objects()) {
    void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    void* f = foreign(dlsym(handle, name));
    dlclose(handle);  // drops the reference RTLD_NOLOAD took; the object stays loaded
    if (f != nullptr) return f;
  }
  static std::mutex mutex;
  static std::set<std::string> reported;
  std::lock_guard lock(mutex);
  if (reported.insert(name).second) {
    session::warn(std::string("no object loaded in this process defines ") + name +
                  " (looked for after the preload library and in each of the " +
                  std::to_string(loaded_objects().size()) +
                  " loaded libraries): calls that fall through are not computed and " + failure);
  }
  return nullptr;
}

}  // namespace tcemu::preload
