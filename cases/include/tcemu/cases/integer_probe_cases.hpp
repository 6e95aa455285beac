// The cases `tcemu probe` runs through one integer MMA instruction: random cases, then crafted
// ones that overflow int32 in every way one instruction can (to tell wrap from saturation, and
// saturation of the whole sum from saturation of partial sums in any order of k).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <tcemu/cases/integer_case_file.hpp>
#include <tcemu/emulator/integer_mma.hpp>

namespace tcemu {

struct IntegerProbeCases {
  std::vector<IntegerMmaCase> cases;  // `random` random cases, then the crafted ones
  std::vector<std::string> names;     // per case: empty for a random case, else what it tests
};

// Random cases of K = k values, a function of (seed, case index) only, generated on `threads`
// threads (0: all): a quarter each of uniform operands and c; operands drawn from their
// extremes, 0 and +-1 with c near either end of int32; products of one sign with c within a few
// units or a quarter of the sum of the end the sum runs towards (past it half of the time);
// mostly-zero operands with c near the ends. Then the crafted cases (integer_crafted_cases).
IntegerProbeCases integer_probe_cases(const IntegerFormat& a, const IntegerFormat& b, int k,
                                      std::size_t random, std::uint64_t seed, int threads = 0);

// The crafted cases alone: extreme operands with c at 0 and at the ends of int32; one product of
// +-1 past either end at each k; for each ordered pair of positions (p, q) a product that leaves
// int32 at p and one that brings the sum back at q (where the formats have products of both
// signs); sums that end exactly at INT32_MAX / INT32_MIN and one past them.
IntegerProbeCases integer_crafted_cases(const IntegerFormat& a, const IntegerFormat& b, int k);

}  // namespace tcemu
