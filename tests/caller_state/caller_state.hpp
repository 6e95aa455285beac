// The caller's floating-point state (issue 38): a computation returns the same bits whatever
// rounding mode the calling thread has set, with x86's flush-to-zero and denormals-are-zero set,
// and from several threads at once, each in a mode of its own; and it leaves the caller's state
// as it found it.
#pragma once

#include <gtest/gtest.h>

#include <cfenv>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace tcemu::test {

// One state a caller may put its thread in: a rounding mode, with or without FTZ and DAZ.
struct CallerState {
  const char* name;
  int rounding;
  bool ftz_daz;
};

inline const std::vector<CallerState>& caller_states() {
  static const std::vector<CallerState> states{{"upward", FE_UPWARD, false},
                                               {"downward", FE_DOWNWARD, false},
                                               {"toward zero", FE_TOWARDZERO, false},
                                               {"nearest, FTZ and DAZ", FE_TONEAREST, true},
                                               {"upward, FTZ and DAZ", FE_UPWARD, true}};
  return states;
}

// x86 MXCSR's flush-to-zero (bit 15) and denormals-are-zero (bit 6).
constexpr unsigned kFtzDaz = 0x8040u;

// The calling thread's state as a comparable word: the rounding mode and, on x86, MXCSR's
// control bits (its exception flags, bits 0 to 5, left out).
inline std::uint64_t thread_state() {
  std::uint64_t state = static_cast<std::uint32_t>(std::fegetround());
#if defined(__x86_64__) || defined(__i386__)
  state |= std::uint64_t{_mm_getcsr() & ~0x3fu} << 32;
#endif
  return state;
}

inline void enter(const CallerState& s) {
  std::fesetround(s.rounding);
#if defined(__x86_64__) || defined(__i386__)
  if (s.ftz_daz) _mm_setcsr(_mm_getcsr() | kFtzDaz);
#endif
}

inline void leave() {
  std::fesetround(FE_TONEAREST);
#if defined(__x86_64__) || defined(__i386__)
  _mm_setcsr(_mm_getcsr() & ~kFtzDaz);
#endif
}

template <typename T>
std::vector<std::uint64_t> words(const std::vector<T>& values) {
  std::vector<std::uint64_t> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::memcpy(&out[i], &values[i], sizeof(T));
  }
  return out;
}

// `compute` (which returns the words of its results) in the default state, then in every caller
// state on this thread, then on one thread per caller state at once: the same words each time,
// and each caller's state unchanged by the call.
inline void expect_same_in_every_caller_state(
    const std::function<std::vector<std::uint64_t>()>& compute) {
  leave();
  const std::vector<std::uint64_t> expected = compute();
  ASSERT_FALSE(expected.empty());
  for (const CallerState& s : caller_states()) {
    enter(s);
    const std::uint64_t before = thread_state();
    const std::vector<std::uint64_t> got = compute();
    const std::uint64_t after = thread_state();
    leave();
    EXPECT_EQ(after, before) << "the caller's state changed, " << s.name;
    std::size_t differ = 0, first = 0;
    for (std::size_t i = got.size(); i-- > 0;) {
      if (i >= expected.size() || got[i] != expected[i]) ++differ, first = i;
    }
    EXPECT_TRUE(got.size() == expected.size() && differ == 0)
        << s.name << ": " << differ << " of " << expected.size() << " results differ, the first #"
        << first << ": " << std::hex << (first < got.size() ? got[first] : 0) << " instead of "
        << (first < expected.size() ? expected[first] : 0);
  }
  std::vector<std::vector<std::uint64_t>> results(caller_states().size());
  std::vector<std::uint64_t> states(caller_states().size() * 2);
  {
    std::vector<std::jthread> threads;
    for (std::size_t t = 0; t < caller_states().size(); ++t) {
      threads.emplace_back([&, t] {
        enter(caller_states()[t]);
        states[2 * t] = thread_state();
        results[t] = compute();
        states[2 * t + 1] = thread_state();
      });
    }
  }
  for (std::size_t t = 0; t < results.size(); ++t) {
    EXPECT_EQ(states[2 * t + 1], states[2 * t]) << "thread " << caller_states()[t].name;
    EXPECT_TRUE(results[t] == expected) << "thread in " << caller_states()[t].name;
  }
}

}  // namespace tcemu::test
