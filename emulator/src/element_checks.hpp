// The argument checks that the element functions of the instruction families share
// (fp64_mma.cpp, integer_mma.cpp): each throws std::invalid_argument naming the datapath or the
// routine and the value it refuses.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace tcemu::detail {

// instruction_k of a `family` datapath ("fp64", "integer") in 1..max.
inline void check_instruction_k(const char* family, int instruction_k, int max) {
  if (instruction_k < 1 || instruction_k > max) {
    throw std::invalid_argument(std::string(family) +
                                " datapath: instruction_k = " + std::to_string(instruction_k) +
                                " must be in 1.." + std::to_string(max));
  }
}

// A and B of one element's dot product hold the same number of values.
inline void check_same_length(const char* routine, std::size_t a, std::size_t b) {
  if (a != b) {
    throw std::invalid_argument(std::string(routine) + ": a has " + std::to_string(a) +
                                " values, b has " + std::to_string(b));
  }
}

}  // namespace tcemu::detail
