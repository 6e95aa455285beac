// The cases `tcemu probe --instr mma.sp.*` runs: the dense probe_cases() of the K/2 kept
// products (random scenarios, then the crafted cases that discriminate the block structure, a
// big product at one kept position and a tiny one at another), each given metadata and a full B:
// B's kept rows hold the dense case's b, its dropped rows random bit patterns of the input format
// (NaN and Inf among them: the instruction must not read them). Random cases get random metadata;
// every crafted case comes three times, with the indices 01 in every group, 23 in every group, and
// random ones (tf32, 1:2 sparse: 02, 13 and random ones of 02 03 12 13). Deterministic in (kept
// datapath, k, random, seed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <tcemu/cases/sparse_case.hpp>
#include <tcemu/emulator/datapath.hpp>

namespace tcemu {

struct SparseProbeCases {
  std::vector<SparseMmaCase> cases;
  std::vector<std::string> names;  // "" for a random case
};
SparseProbeCases sparse_probe_cases(const Datapath& kept, int k, std::size_t random,
                                    std::uint64_t seed);

}  // namespace tcemu
