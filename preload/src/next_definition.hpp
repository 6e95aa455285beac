// The definition an intercepted symbol would have had without the preload library: the next
// one in the dynamic linker's search order (the real BLAS or cuBLAS), for the calls that fall
// through.
#pragma once

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace tcemu::preload {

// The next definition of `name` after this library; aborts with a message naming the symbol
// when there is none (the program could not have linked without it).
template <class Function>
Function next_definition(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (f == nullptr) {
    std::fprintf(stderr, "tcemu preload: %s not found after the preload library (%s)\n", name,
                 dlerror());
    std::abort();
  }
  return reinterpret_cast<Function>(f);
}

}  // namespace tcemu::preload
