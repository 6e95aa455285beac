// The cases `tcemu probe --instr dmma` runs through one fp64 MMA instruction: random cases, then
// crafted ones whose result tells which order the instruction's chain visits k in, whether c
// enters first, whether each step is one fused multiply-add, and how NaN, Inf, signed zeros and
// subnormals come out (fp64_mma.hpp has the model they test).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <tcemu/cases/fp64_case_file.hpp>

namespace tcemu {

struct Fp64ProbeCases {
  std::vector<Fp64MmaCase> cases;  // `random` random cases, then the crafted ones
  std::vector<std::string> names;  // per case: empty for a random case, else what it tests
};

// Random cases of K = k terms, a function of (seed, case index) only, generated on `threads`
// threads (0: all), a quarter each: operands and c of exponents in [-8, 8] with random
// significands; the same with c the negated sum of the products (an fma chain from 0 in a random
// k order), so that the result is a few rounding errors and depends on the order of the chain;
// exponents wide enough to overflow and to underflow into subnormals; random bit patterns with
// NaNs, infinities, zeros and subnormals mixed in. Then the crafted cases (fp64_crafted_cases).
Fp64ProbeCases fp64_probe_cases(int k, std::size_t random, std::uint64_t seed, int threads = 0);

// The crafted cases alone (every product is exact unless the name says otherwise):
//  * for each ordered pair (p, q): c = 1, -1 at p, 2^-60 at q: 2^-60 when p comes before q, 0
//    when q comes first (the order of the chain);
//  * for each ordered pair: c = 2^-60, 1 at p, -1 at q: 0 when c enters first, 2^-60 when c enters
//    after both;
//  * for each pair p < q: c = 1, 2^-53 at p and at q: 1 from a chain of roundings, 1 + 2^-52
//    from one rounding of the exact sum;
//  * at each k: (1 + 2^-30)^2 = 1 + 2^-29 + 2^-60 against c = -(1 + 2^-29): 2^-60 fused, 0 when
//    the product is rounded first;
//  * at each k: DBL_MAX at k and the next, -DBL_MAX at the one after (cyclically): Inf when the
//    two maxima meet first, DBL_MAX otherwise;
//  * NaN operands and c with payloads and signs, 0 x Inf, Inf - Inf across two k, Inf with
//    finite terms; zero products on -0 and +0 (the sign of exact zeros); exact cancellation to
//    zero; subnormal operands, products and results (no flush to zero).
Fp64ProbeCases fp64_crafted_cases(int k);

}  // namespace tcemu
