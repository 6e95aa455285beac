// One output element of an MMA instruction (or of a chain of them): d = a . b + c over K terms.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/decode.hpp>

namespace tcemu {

// Checks that a datapath is one the emulator can evaluate; throws std::invalid_argument naming the
// offending field otherwise.
void validate(const Datapath& datapath);

// d = a . b + c for one output element. a and b hold K bit patterns of the input formats (a:
// datapath.input, b: datapath.b_format()), K >= 0; K
// larger than instruction_k runs as a chain of instructions in k order, each taking the previous
// result as its c; a last partial instruction has fewer terms (no padding terms are invented).
// K = 0 is an empty chain: no instruction runs and d = c, bit for bit, as emulated_gemm gives for
// k = 0 (to see c pass through one instruction, give instruction_k zero products). c and the
// result are accumulator bit patterns.
std::uint32_t mma_element(const Datapath& datapath, std::span<const std::uint32_t> a,
                          std::span<const std::uint32_t> b, std::uint32_t c);

// The same on operands already decoded (the emulated GEMM decodes each matrix element once).
std::uint32_t mma_element_decoded(const Datapath& datapath, std::span<const Decoded> a,
                                  std::span<const Decoded> b, std::uint32_t c);

// The number of scales of A (and of B) that K terms of a block-scaled datapath take:
// ceil(K / scale_block), scale j covering k = j * scale_block up to the next scale's first k.
std::size_t scale_count(const Datapath& datapath, std::size_t k);

// d = a . b + c on a block-scaled datapath (datapath.block_scaled()): scale_a and scale_b hold
// scale_count(datapath, K) bit patterns of the scale formats, the scales of this row of A and this
// column of B. The unscaled overloads refuse a block-scaled datapath and these an unscaled one.
std::uint32_t mma_element(const Datapath& datapath, std::span<const std::uint32_t> a,
                          std::span<const std::uint32_t> b, std::uint32_t c,
                          std::span<const std::uint32_t> scale_a,
                          std::span<const std::uint32_t> scale_b);
std::uint32_t mma_element_decoded(const Datapath& datapath, std::span<const Decoded> a,
                                  std::span<const Decoded> b, std::uint32_t c,
                                  std::span<const Decoded> scale_a,
                                  std::span<const Decoded> scale_b);

}  // namespace tcemu
