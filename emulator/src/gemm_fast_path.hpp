// The vectorised evaluation of the MMA chain of a whole GEMM (gemm_fast_path.cpp has the proof
// that it gives the bits of mma_element_decoded).
#pragma once

#include <cstdint>
#include <span>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/matrix.hpp>

namespace tcemu::detail {

// True when the datapath truncates on a grid narrow enough for binary64 sums (binary64_applies:
// kind::f8f6f4 pairs and group_terms == 1 block scaling included) and its formats' exponents,
// scales' added, fit the kernel's exponent pass.
bool fast_path_applies(const Datapath& datapath);

// For a datapath fast_path_applies accepts: acc (m x n, row major, accumulator bits) becomes the
// chain of MMA instructions over all of k starting from acc, and the result is true. `scales`:
// those of a block-scaled datapath (nullptr for the others). When A or B holds an Inf or NaN or a
// scale is NaN (found while packing them) acc is left as it was and the result is false: the
// caller evaluates the chain another way.
bool fast_mma_chain(const Datapath& datapath, ConstMatrixView a, ConstMatrixView b,
                    const BlockScales* scales, std::span<std::uint32_t> acc, int threads);

// For a datapath scaled_groups_apply accepts (scaled_groups.hpp: group_terms > 1 on int8-coded
// elements, kind::mxf4 and mxf4nvf4): acc becomes the chain of MMA instructions over all of k from
// acc, one element at a time through group_block, for every input (NaN scales and an Inf or NaN
// acc included).
void fast_group_chain(const Datapath& datapath, ConstMatrixView a, ConstMatrixView b,
                      const BlockScales& scales, std::span<std::uint32_t> acc, int threads);

}  // namespace tcemu::detail
