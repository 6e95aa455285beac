// What the probe case sets of fp64_probe_cases.cpp and integer_probe_cases.cpp share: a random
// stream per case that is a function of (seed, case index) alone, and the assembly of `random`
// such cases, generated on several threads, followed by the crafted ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include <tcemu/emulator/parallel_for.hpp>

namespace tcemu::detail {

// SplitMix64 (Steele, Lea and Flood 2014): a fast generator whose state is one counter, so a
// case's stream is a function of (seed, index) alone.
struct SplitMix {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::int64_t in(std::int64_t low, std::int64_t high) {  // uniform in [low, high]
    return low + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(high - low + 1));
  }
};

// `random` cases random_case(rng) (rng seeded from (seed, index)) on `threads` threads (0: all),
// with empty names, then the cases and names of `crafted`. Cases is a struct of `cases` and
// `names` (Fp64ProbeCases, IntegerProbeCases).
template <class Cases, class RandomCase>
Cases random_then_crafted(std::size_t random, std::uint64_t seed, int threads,
                          const RandomCase& random_case, Cases crafted) {
  Cases out;
  out.cases.resize(random);
  parallel_for(threads, static_cast<std::int64_t>(random), 4096,
               [&](std::int64_t begin, std::int64_t end) {
                 for (std::int64_t i = begin; i < end; ++i) {
                   SplitMix rng{seed * 0x100000001b3ull +
                                static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ull};
                   out.cases[static_cast<std::size_t>(i)] = random_case(rng);
                 }
               });
  out.names.assign(random, std::string());
  out.cases.insert(out.cases.end(), std::make_move_iterator(crafted.cases.begin()),
                   std::make_move_iterator(crafted.cases.end()));
  out.names.insert(out.names.end(), std::make_move_iterator(crafted.names.begin()),
                   std::make_move_iterator(crafted.names.end()));
  return out;
}

}  // namespace tcemu::detail
