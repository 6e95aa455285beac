// An independent, slow model of the Tensor Core datapath in MPFR arithmetic.
//
// It implements the semantics written in emulator/include/tcemu/emulator/datapath.hpp from that
// text alone: values are exact MPFR numbers, alignment and truncation use mpfr_mul_2si and
// mpfr_trunc, rounding to the output format uses mpfr_set with a restricted exponent range and
// mpfr_subnormalize. It shares no arithmetic with the emulator's integer fast path (only the bit
// layout of the formats), so agreement of the two is evidence for both.
#pragma once

#include <cstdint>
#include <span>

#include <tcemu/emulator/datapath.hpp>

namespace tcemu::reference {

// d = a . b + c under `datapath`, the same contract as tcemu::mma_element (a in
// datapath.input, b in datapath.b_format()).
std::uint32_t oracle_mma_element(const Datapath& datapath, std::span<const std::uint32_t> a,
                                 std::span<const std::uint32_t> b, std::uint32_t c);

// The same on a block-scaled datapath, with the scales of the row of A and the column of B, the
// contract of the scaled tcemu::mma_element (mma.hpp).
std::uint32_t oracle_mma_element(const Datapath& datapath, std::span<const std::uint32_t> a,
                                 std::span<const std::uint32_t> b, std::uint32_t c,
                                 std::span<const std::uint32_t> scale_a,
                                 std::span<const std::uint32_t> scale_b);

}  // namespace tcemu::reference
