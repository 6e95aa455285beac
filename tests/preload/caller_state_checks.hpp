// The caller's floating-point state through an LD_PRELOAD library (issue 38): a DGEMM issued in
// each rounding mode, with x86's FTZ and DAZ, and from threads each in a mode of its own, gives
// the bits it gives in the default state, and leaves the caller's mode as it was.
#pragma once

#include <cfenv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace tcemu_preload_test {

struct CallerState {
  const char* name;
  int rounding;
  bool ftz_daz;
};

inline const std::vector<CallerState> kCallerStates{{"upward", FE_UPWARD, false},
                                                    {"downward", FE_DOWNWARD, false},
                                                    {"toward zero", FE_TOWARDZERO, false},
                                                    {"nearest, FTZ and DAZ", FE_TONEAREST, true},
                                                    {"upward, FTZ and DAZ", FE_UPWARD, true}};

inline unsigned control_word() {
#if defined(__x86_64__) || defined(__i386__)
  return _mm_getcsr() & ~0x3fu;
#else
  return 0;
#endif
}

inline void enter(const CallerState& s) {
  std::fesetround(s.rounding);
#if defined(__x86_64__) || defined(__i386__)
  if (s.ftz_daz) _mm_setcsr(_mm_getcsr() | 0x8040u);
#endif
}

inline void leave() {
  std::fesetround(FE_TONEAREST);
#if defined(__x86_64__) || defined(__i386__)
  _mm_setcsr(_mm_getcsr() & ~0x8040u);
#endif
}

// A 64 x 64 x 64 product's inputs, spread over many binades, with subnormals in A's first row
// and B's last column (whole rows and columns: CR modes hold them exactly).
inline void caller_state_inputs(std::vector<double>& a, std::vector<double>& b, int n) {
  a.resize(static_cast<std::size_t>(n * n));
  b.resize(a.size());
  std::uint64_t x = 88172645463325252ull;
  const auto next = [&] {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return std::ldexp(static_cast<double>(x >> 11) * 0x1p-53 - 0.5, static_cast<int>(x % 24) - 12);
  };
  for (double& v : a) v = next();
  for (double& v : b) v = next();
  for (int p = 0; p < n; ++p) {
    a[static_cast<std::size_t>(p * n)] *= 0x1p-1040;
    b[static_cast<std::size_t>(p + (n - 1) * n)] *= 0x1p-1030;
  }
}

// Runs `product` (C of the DGEMM) in the default state and in every caller state, on this thread
// and on one thread per state at once; prints each difference and returns the number of them.
inline int check_caller_states(const std::function<std::vector<double>()>& product) {
  leave();
  const std::vector<double> expected = product();
  int failures = 0;
  const auto same = [&](const std::vector<double>& got, const char* name, const char* where) {
    if (got.size() == expected.size() &&
        std::memcmp(got.data(), expected.data(), got.size() * sizeof(double)) == 0) {
      return;
    }
    std::size_t differ = 0;
    for (std::size_t i = 0; i < got.size() && i < expected.size(); ++i) {
      differ += std::memcmp(&got[i], &expected[i], sizeof(double)) != 0;
    }
    std::printf(
        "FAILED: %s (%s): %zu of %zu elements differ from round-to-nearest's, C[0] = %a "
        "instead of %a\n",
        name, where, differ, expected.size(), got.empty() ? 0.0 : got[0], expected[0]);
    ++failures;
  };
  for (const CallerState& s : kCallerStates) {
    enter(s);
    const int mode = std::fegetround();
    const unsigned control = control_word();
    const std::vector<double> got = product();
    const bool kept = std::fegetround() == mode && control_word() == control;
    leave();
    same(got, s.name, "this thread");
    if (!kept) std::printf("FAILED: %s: the caller's state changed\n", s.name), ++failures;
  }
  std::vector<std::vector<double>> results(kCallerStates.size());
  {
    std::vector<std::jthread> threads;
    for (std::size_t t = 0; t < kCallerStates.size(); ++t) {
      threads.emplace_back([&, t] {
        enter(kCallerStates[t]);
        results[t] = product();
      });
    }
  }
  for (std::size_t t = 0; t < results.size(); ++t)
    same(results[t], kCallerStates[t].name, "threads");
  std::printf("%s: %zu caller states, %d failures\n", failures ? "FAILED" : "passed",
              kCallerStates.size(), failures);
  return failures;
}

// The library's log (TCEMU_PRELOAD_LOG): removed before the calls, then the number of calls it
// lets fall through to the real BLAS (whose bits are the caller's business: every call of these
// programs must go through the scheme).
inline void clear_log() {
  if (const char* log = std::getenv("TCEMU_PRELOAD_LOG")) std::remove(log);
}

inline int calls_fell_through() {
  int count = 0;
  if (const char* log = std::getenv("TCEMU_PRELOAD_LOG")) {
    if (std::FILE* f = std::fopen(log, "r")) {
      char line[1024];
      while (std::fgets(line, sizeof line, f))
        count += std::strstr(line, "fell through") != nullptr;
      std::fclose(f);
    }
  }
  if (count) std::printf("FAILED: %d calls fell through to the BLAS\n", count);
  return count;
}

}  // namespace tcemu_preload_test
