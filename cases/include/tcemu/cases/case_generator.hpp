// Random MMA cases drawn to reach every kind of result: ten scenarios (uniform bit patterns,
// clustered exponents, a wide exponent spread, cancellation, near overflow, subnormal and tiny
// values, signed zeros, Inf and NaN sprinkled in, products below the alignment floor, and a mix
// of all). Used by the oracle cross-check and by `tcemu probe`. Deterministic: the cases depend
// only on (datapath formats and shape, seed, stream, chunk), so a run can be split into chunks
// over threads without changing its cases.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/emulator/datapath.hpp>

namespace tcemu {

class CaseGenerator {
 public:
  // The datapath gives the formats and the instruction shape (for K and the alignment floor).
  CaseGenerator(const Datapath& datapath, std::uint64_t seed, std::uint64_t stream = 0,
                std::uint64_t chunk = 0);
  ~CaseGenerator();
  CaseGenerator(const CaseGenerator&) = delete;
  CaseGenerator& operator=(const CaseGenerator&) = delete;

  // Fills `out` with a case of k terms from a random scenario (d is cleared); returns the
  // scenario's name.
  std::string_view next(MmaCase& out, std::size_t k);

  // A K that exercises empty, partial, full and chained instructions of the datapath.
  std::size_t random_k();

 private:
  class Impl;
  Datapath datapath_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tcemu

namespace tcemu {

// Hand-made cases whose results discriminate the datapath fields that random inputs do not
// (Fasi et al. 2021; Khattak and Mikaitis 2025; docs/presets.md): signed zeros, NaN and Inf rules,
// overflow, subnormal products, the alignment floor, the number of alignment bits, the block size
// (a small term moved from index 1 to K-1) and the rounding of the block result. Every case has
// exactly k terms; values a format cannot hold are skipped. Each case comes with a short name of
// what it probes.
struct NamedCase {
  std::string name;
  MmaCase values;
};
std::vector<NamedCase> crafted_cases(const FloatFormat& input, const FloatFormat& accumulator,
                                     int k);

// The cases a probe of one instruction runs (`tcemu probe`, `tcemu detect`, the Python package's
// probe and detect_gpu): `random` cases of CaseGenerator(shape, seed), then every crafted case,
// all of k terms; names[i] is the crafted case's name, "" for a random one.
struct ProbeCases {
  std::vector<MmaCase> cases;
  std::vector<std::string> names;
};
ProbeCases probe_cases(const Datapath& shape, int k, std::size_t random, std::uint64_t seed);

}  // namespace tcemu
