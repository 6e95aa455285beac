// The caller's floating-point state through an LD_PRELOAD library (issues 37, 38): a DGEMM or
// SGEMM C := A B issued in each rounding mode, with x86's FTZ and DAZ, and from threads each in a
// mode of its own, leaves the caller's mode as it was and gives: to nearest (FTZ and DAZ or not)
// the bits of the default state; under a directed mode the bits of the product correctly rounded in
// that direction, which the library gives in the default state with TCEMU_PRELOAD_ROUNDING set to
// it; and those enclose the product: downward <= upward, neighbours or equal, toward zero the one
// of smaller magnitude, each differing from round-to-nearest's somewhere.
#pragma once

#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
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
  int direction;  // the index in kDirections of the rounding the product gets
};

// TCEMU_PRELOAD_ROUNDING's words, in the order of CallerState::direction.
inline const char* const kDirections[] = {"nearest", "upward", "downward", "toward-zero"};

inline const std::vector<CallerState> kCallerStates{{"upward", FE_UPWARD, false, 1},
                                                    {"downward", FE_DOWNWARD, false, 2},
                                                    {"toward zero", FE_TOWARDZERO, false, 3},
                                                    {"nearest, FTZ and DAZ", FE_TONEAREST, true, 0},
                                                    {"upward, FTZ and DAZ", FE_UPWARD, true, 1}};

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

// The product (T: double or float) in the default state for each of kDirections
// (TCEMU_PRELOAD_ROUNDING set to it), with the enclosure checks in T; prints each failure and
// adds it to `failures`.
template <class T>
std::vector<std::vector<T>> expected_products(const std::function<std::vector<T>()>& product,
                                              int& failures) {
  std::vector<std::vector<T>> expected;
  for (const char* d : kDirections) {
    setenv("TCEMU_PRELOAD_ROUNDING", d, 1);
    expected.push_back(product());
  }
  unsetenv("TCEMU_PRELOAD_ROUNDING");
  const std::vector<T>&nearest = expected[0], &up = expected[1], &down = expected[2],
        &zero = expected[3];
  std::size_t apart = 0, bad = 0;
  for (std::size_t i = 0; i < nearest.size(); ++i) {
    apart += down[i] < up[i];
    bad += !(down[i] == up[i] || std::nextafter(down[i], T(INFINITY)) == up[i]) ||
           zero[i] != (std::fabs(down[i]) <= std::fabs(up[i]) ? down[i] : up[i]);
  }
  if (bad != 0 || apart == 0) {
    std::printf("FAILED: %zu elements outside the enclosure, %zu with downward < upward\n", bad,
                apart);
    ++failures;
  }
  for (std::size_t d = 1; d < std::size(kDirections); ++d) {
    if (std::memcmp(expected[d].data(), nearest.data(), nearest.size() * sizeof(T)) == 0) {
      std::printf("FAILED: TCEMU_PRELOAD_ROUNDING=%s gives round-to-nearest's bits\n",
                  kDirections[d]);
      ++failures;
    }
  }
  return expected;
}

// Runs `product` (C := A B by the DGEMM or SGEMM, T double or float) in the default state and in
// every caller state, on this thread and on one thread per state at once; prints each
// difference and returns the number of them.
template <class T>
int check_caller_states(const std::function<std::vector<T>()>& product) {
  leave();
  int failures = 0;
  const std::vector<std::vector<T>> expected = expected_products(product, failures);
  const auto same = [&](const std::vector<T>& got, const CallerState& s, const char* where) {
    const std::vector<T>& want = expected[static_cast<std::size_t>(s.direction)];
    if (got.size() == want.size() &&
        std::memcmp(got.data(), want.data(), got.size() * sizeof(T)) == 0) {
      return;
    }
    std::size_t differ = 0;
    for (std::size_t i = 0; i < got.size() && i < want.size(); ++i) {
      differ += std::memcmp(&got[i], &want[i], sizeof(T)) != 0;
    }
    std::printf(
        "FAILED: %s (%s): %zu of %zu elements differ from the product rounded %s, C[0] = "
        "%a instead of %a\n",
        s.name, where, differ, want.size(), kDirections[s.direction],
        got.empty() ? 0.0 : static_cast<double>(got[0]), static_cast<double>(want[0]));
    ++failures;
  };
  for (const CallerState& s : kCallerStates) {
    enter(s);
    const int mode = std::fegetround();
    const unsigned control = control_word();
    const std::vector<T> got = product();
    const bool kept = std::fegetround() == mode && control_word() == control;
    leave();
    same(got, s, "this thread");
    if (!kept) std::printf("FAILED: %s: the caller's state changed\n", s.name), ++failures;
  }
  std::vector<std::vector<T>> results(kCallerStates.size());
  {
    std::vector<std::jthread> threads;
    for (std::size_t t = 0; t < kCallerStates.size(); ++t) {
      threads.emplace_back([&, t] {
        enter(kCallerStates[t]);
        results[t] = product();
      });
    }
  }
  for (std::size_t t = 0; t < results.size(); ++t) same(results[t], kCallerStates[t], "threads");
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
