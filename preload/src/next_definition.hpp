// The definition an intercepted symbol would have had without the preload library (the real BLAS
// or cuBLAS), for the calls that fall through: wherever the program loaded it. First the next
// definition in the dynamic linker's global search order (dlsym(RTLD_NEXT)); then every object
// loaded now, in load order (dl_iterate_phdr), each through a handle of its own (dlopen of its
// path with RTLD_NOLOAD, which loads nothing) and dlsym on it, which searches the object and its
// dependencies: this finds a BLAS that the program, or an extension module it dlopen'ed with
// RTLD_LOCAL (Python's default: NumPy's _multiarray_umath links its BLAS so), loaded privately,
// out of RTLD_NEXT's reach. A definition inside this library itself is skipped. A definition
// found is kept; none found is looked for again at the next call (a BLAS may be loaded later).
#pragma once

#include <atomic>

namespace tcemu::preload {

// The definition of `name` in another object than this library, or nullptr when no object loaded
// now has one; the first time a name is not found, a line on stderr says so, naming it, where it
// was looked for and what such a call does instead (`failure`: "return ..." ).
void* find_definition(const char* name, const char* failure);

// find_definition(name) as a function pointer, kept once found.
template <class Function>
class NextDefinition {
 public:
  NextDefinition(const char* name, const char* failure) : name_(name), failure_(failure) {}

  Function get() {
    void* f = found_.load(std::memory_order_acquire);
    if (f == nullptr) {
      f = find_definition(name_, failure_);
      if (f != nullptr) found_.store(f, std::memory_order_release);
    }
    return reinterpret_cast<Function>(f);
  }

 private:
  const char* name_;
  const char* failure_;
  std::atomic<void*> found_{nullptr};
};

}  // namespace tcemu::preload
