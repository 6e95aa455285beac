// The vectorised evaluation of the MMA chain of a whole GEMM (gemm_fast_path.cpp has the proof
// that it gives the bits of mma_element_decoded).
#pragma once

#include <cstdint>
#include <span>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/matrix.hpp>

namespace tcemu::detail {

// True when the datapath truncates on a grid narrow enough for binary64 sums and its input
// format's exponents fit the kernel's exponent pass.
bool fast_path_applies(const Datapath& datapath);

// For a datapath fast_path_applies accepts: acc (m x n, row major, accumulator bits) becomes the
// chain of MMA instructions over all of k starting from acc, and the result is true. When A or B
// holds an Inf or NaN (found while packing them) acc is left as it was and the result is false:
// the caller evaluates the chain another way.
bool fast_mma_chain(const Datapath& datapath, ConstMatrixView a, ConstMatrixView b,
                    std::span<std::uint32_t> acc, int threads);

}  // namespace tcemu::detail
