// What the Blackwell probe kernels take (blackwell_runner.cpp builds it, sm120_runner.cu and
// tcgen05_runner.cu launch on it): per case kCaseWords words, the 32-byte row of A and column of B
// as blackwell_operands.hpp packs them, c, and the scale words of A and B (0 when unscaled).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <tcemu/gpu/tcgen05_descriptors.hpp>

namespace tcemu::gpu::detail {

inline constexpr int kCaseWords = 19;
inline constexpr int kRowWords = 8;
inline constexpr int kCaseA = 0, kCaseB = 8, kCaseC = 16, kCaseScaleA = 17, kCaseScaleB = 18;

// The scale qualifiers of the block-scaled kinds: .scale_vec::1X (mxf8f6f4), 2X (mxf4, mxf4nvf4
// with ue8m0 per 32 k), 4X (mxf4nvf4 per 16 k, ue4m3 or ue8m0 scales).
enum class ScaleVec { none, x1, x2, x4 };

// sm_120a mma.sync: kind::f8f6f4 (scale none), mxf8f6f4 (x1), mxf4 / mxf4nvf4 (x2, x4); a and b
// index e5m2, e4m3, e3m2, e2m3, e2m1 (the kinds of e2m1 alone take 4, 4); ue4m3 picks the scale
// type of x4. D(0, 0) of each case (fp16 in the low 16 bits).
std::vector<std::uint32_t> run_sm120_cases(tcgen05::Kind kind, ScaleVec vec, bool ue4m3, int a,
                                           int b, bool fp16_result,
                                           std::span<const std::uint32_t> cases);

// sm_100a tcgen05.mma.cta_group::1 at M = 128, N = 16 with this instruction descriptor (which
// carries the formats, the D type and the scale type).
std::vector<std::uint32_t> run_tcgen05_cases(tcgen05::Kind kind, ScaleVec vec,
                                             std::uint32_t instruction_descriptor, bool fp16_result,
                                             std::span<const std::uint32_t> cases);

}  // namespace tcemu::gpu::detail
