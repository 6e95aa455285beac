#include <random>

#include <tcemu/cases/case_generator.hpp>
#include <tcemu/cases/sparse_probe_cases.hpp>

namespace tcemu {
namespace {

// The six index pairs of a group of four PTX's ordered metadata allows.
constexpr std::uint8_t kPairs[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};

// The sparse case of `dense` (K/2 terms) with `pair_of(group)` as each group's kept positions.
template <class PairOf>
SparseMmaCase spread(const MmaCase& dense, int k, const FloatFormat& input, std::mt19937_64& rng,
                     PairOf pair_of) {
  SparseMmaCase c;
  c.a = dense.a;
  c.c = dense.c;
  const std::uint32_t mask =
      input.container_bits() == 32 ? 0xFFFFFFFFu : (1u << input.container_bits()) - 1;
  for (int i = 0; i < k; ++i) c.b.push_back(static_cast<std::uint32_t>(rng()) & mask);
  for (int group = 0; group < k / 4; ++group) {
    const std::uint8_t* pair = kPairs[pair_of(group)];
    for (int e = 0; e < 2; ++e) {
      c.index.push_back(pair[e]);
      c.b[static_cast<std::size_t>(4 * group + pair[e])] =
          dense.b[static_cast<std::size_t>(2 * group + e)];
    }
  }
  return c;
}

}  // namespace

SparseProbeCases sparse_probe_cases(const Datapath& kept, int k, std::size_t random,
                                    std::uint64_t seed) {
  const ProbeCases dense = probe_cases(kept, k / 2, random, seed);
  std::mt19937_64 rng(seed ^ 0x5ca7'7e2e'd5ea'4e5dULL);
  // tf32 (1:2): only the pairs 02 03 12 13 (kPairs 1 to 4).
  const bool tf32 = kept.input == formats::tf32;
  const auto any = [&](int) {
    return tf32 ? 1 + static_cast<int>(rng() % 4) : static_cast<int>(rng() % 6);
  };
  const int first = tf32 ? 1 : 0, last = tf32 ? 4 : 5;
  const std::string first_name = tf32 ? " (indices 02)" : " (indices 01)";
  const std::string last_name = tf32 ? " (indices 13)" : " (indices 23)";
  SparseProbeCases out;
  for (std::size_t i = 0; i < dense.cases.size(); ++i) {
    const MmaCase& d = dense.cases[i];
    if (i < random) {
      out.cases.push_back(spread(d, k, kept.input, rng, any));
      out.names.emplace_back();
      continue;
    }
    const std::string& name = dense.names[i];
    out.cases.push_back(spread(d, k, kept.input, rng, [&](int) { return first; }));
    out.names.push_back(name + first_name);
    out.cases.push_back(spread(d, k, kept.input, rng, [&](int) { return last; }));
    out.names.push_back(name + last_name);
    out.cases.push_back(spread(d, k, kept.input, rng, any));
    out.names.push_back(name + " (random indices)");
  }
  return out;
}

}  // namespace tcemu
