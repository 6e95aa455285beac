// The fused block operation of a Tensor Core: sum_i a_i * b_i + c in one step (datapath.hpp).
#pragma once

#include <cstdint>
#include <span>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/decode.hpp>

namespace tcemu {

// The most products one block may fuse (checked by validate()).
inline constexpr int kMaxBlockTerms = 64;

// One block: a and b decoded from datapath.input (same length, at most kMaxBlockTerms), c the bits
// of the accumulator format. Returns the block result in the accumulator format.
std::uint32_t block_fma(const Datapath& datapath, std::span<const Decoded> a,
                        std::span<const Decoded> b, std::uint32_t c);

// x + y in the accumulator format: the exact sum rounded once to nearest even, with the
// datapath's NaN bits, zero sign and overflow rule. Used where c enters after the blocks.
std::uint32_t accumulator_add(const Datapath& datapath, std::uint32_t x, std::uint32_t y);

}  // namespace tcemu
