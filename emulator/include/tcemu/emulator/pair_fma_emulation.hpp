// sm90 mma.sync.m8n8k4 with an fp16 accumulator: no tensor-core instruction and no datapath of
// the block model (datapath.hpp), but ptxas's emulation in fp32 arithmetic. Its SASS (nvcc 13.0,
// -arch=sm_90a; docs/presets.md) for one output element, all fp32 round-to-nearest with
// subnormals:
//
//   p01 = FFMA(a1, b1, FMUL(a0, b0))    the first pair of products, rounded once (a0 b0 is exact)
//   p23 = FFMA(a3, b3, FMUL(a2, b2))    the second pair
//   d   = F2FP.F16( FADD( FADD(c, p01), p23 ) )    c widened exactly, d rounded to nearest fp16
//
// so an fp32 rounding of each pair, of c + p01 and of the sum, then a second rounding to fp16 --
// the double rounding and the pairs no block of the model has. A chain of K = 4 n runs n of these
// in k order, each taking the previous fp16 d as its c.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include <tcemu/emulator/format.hpp>

namespace tcemu {

// Whether (arch, instruction, input, accumulator) is the one this file models: sm90
// mma.sync.m8n8k4, fp16 -> fp16 (it has no preset row; `tcemu probe` and `tcemu validate` use
// sm90_m8n8k4_fp16_element for it).
bool is_sm90_m8n8k4_fp16(std::string_view arch, std::string_view instruction,
                         const FloatFormat& input, const FloatFormat& accumulator);

// d of one output element (fp16 bits) for fp16 a and b of K = 4 n terms and fp16 c. NaN results
// are 0x7FFF (F2FP's NaN), Inf and overflow to Inf follow IEEE 754. Throws std::invalid_argument
// when K is no multiple of 4 or a and b differ in length.
std::uint32_t sm90_m8n8k4_fp16_element(std::span<const std::uint32_t> a,
                                       std::span<const std::uint32_t> b, std::uint32_t c);

}  // namespace tcemu
