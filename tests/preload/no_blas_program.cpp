// libtcemu_blas_preload.so in a process that loaded no BLAS (issue 37: never take a process down).
// The program links no BLAS; it finds dgemm_ and cblas_dgemm in the preload library (dlsym) and
// calls each on 4 x 4 matrices of ones. --expect unchanged (no scheme set): the calls fall through
// to nothing, return with C unchanged, and stderr says once per entry point that no loaded object
// defines it; --expect routed (a scheme set): the calls are routed and C = A B (every element 4),
// no BLAS needed. Exit status 0 when that holds, 1 otherwise (an abort would be a signal).
#include <dlfcn.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using FortranDgemm = void (*)(const char*, const char*, const int*, const int*, const int*,
                              const double*, const double*, const int*, const double*, const int*,
                              const double*, double*, const int*, std::size_t, std::size_t);
using CblasDgemm = void (*)(int, int, int, int, int, int, double, const double*, int, const double*,
                            int, double, double*, int);

// What the process writes on stderr while `run` runs.
template <class Run>
std::string captured_stderr(Run run) {
  std::FILE* capture = std::tmpfile();
  const int saved = dup(2);
  std::fflush(stderr);
  dup2(fileno(capture), 2);
  run();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::rewind(capture);
  std::string text;
  char buffer[4096];
  std::size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, capture)) > 0) text.append(buffer, got);
  std::fclose(capture);
  std::fputs(text.c_str(), stderr);  // for the test's output
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || std::strcmp(argv[1], "--expect") != 0 ||
      (std::strcmp(argv[2], "unchanged") != 0 && std::strcmp(argv[2], "routed") != 0)) {
    std::printf("usage: %s --expect unchanged|routed  (run under LD_PRELOAD of the library)\n",
                argv[0]);
    return 2;
  }
  const bool routed = std::strcmp(argv[2], "routed") == 0;
  const auto fortran = reinterpret_cast<FortranDgemm>(dlsym(RTLD_DEFAULT, "dgemm_"));
  const auto cblas = reinterpret_cast<CblasDgemm>(dlsym(RTLD_DEFAULT, "cblas_dgemm"));
  if (fortran == nullptr || cblas == nullptr) {
    std::printf("FAILED: dgemm_ or cblas_dgemm is not defined: is the library preloaded?\n");
    return 1;
  }
  constexpr int n = 4;
  const std::vector<double> a(n * n, 1.0), b(n * n, 1.0);
  const double one = 1, zero = 0;
  const double want = routed ? 4.0 : -1.0;
  int failures = 0;
  for (const char* entry : {"dgemm_", "cblas_dgemm"}) {
    std::vector<double> c(n * n, -1.0);
    const std::string err = captured_stderr([&] {
      if (std::strcmp(entry, "dgemm_") == 0) {
        fortran("N", "N", &n, &n, &n, &one, a.data(), &n, b.data(), &n, &zero, c.data(), &n, 1, 1);
      } else {
        cblas(102, 111, 111, n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n);
      }
    });
    for (const double v : c) {
      if (v != want) {
        std::printf("FAILED: %s: C holds %g, expected %g everywhere\n", entry, v, want);
        ++failures;
        break;
      }
    }
    const std::string said = std::string("no object loaded in this process defines ") + entry;
    if (!routed && err.find(said) == std::string::npos) {
      std::printf("FAILED: %s: stderr does not say '%s'\n", entry, said.c_str());
      ++failures;
    }
  }
  std::printf("%s\n", failures == 0 ? "passed" : "FAILED");
  return failures == 0 ? 0 : 1;
}
