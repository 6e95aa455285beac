// The vectorised evaluation of the MMA chain of a whole GEMM (gemm_fast_path.cpp has the proof
// that it gives the bits of mma_element_decoded).
#pragma once

#include <cstdint>
#include <vector>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/matrix.hpp>

namespace tcemu::detail {

// True when the datapath truncates on a grid narrow enough for binary64 sums and A and B hold
// no Inf or NaN (checked on `threads` threads).
bool fast_path_applies(const Datapath& datapath, ConstMatrixView a, ConstMatrixView b, int threads);

// acc (m x n, row major, accumulator bits) becomes the chain of MMA instructions over all of k
// starting from acc.
void fast_mma_chain(const Datapath& datapath, ConstMatrixView a, ConstMatrixView b,
                    std::vector<std::uint32_t>& acc, int threads);

}  // namespace tcemu::detail
