// The NaN each step family writes. IEEE 754 leaves the payload of a NaN result to the
// implementation, so a backend must choose one, and every backend must choose the same one for
// its bits to match. The choice follows the arithmetic a family models:
//
// - Tensor-core steps (tensor_core_steps.hpp) model the MMA instruction: their NaN is the
//   datapath's, Datapath::nan_bits (every preset: 0x7FFFFFFF for fp32, 0x7FFF for fp16, the
//   GPU's, docs/presets.md).
// - fp32 split steps (fp32_split_steps.hpp) model the fp32 arithmetic a markidis/ scheme runs on
//   the GPU between its tensor-core products: their NaN is what the GPU's fp32 add, multiply and
//   fma write, 0x7FFFFFFF (fp32_bits.hpp), so that a scheme's NaN is the same whether a result
//   came from its products or from its fp32 steps, on the GPU and on the emulator.
// - Ozaki steps (ozaki_steps.hpp) and the inner-product step (inner_product_steps.hpp) model a
//   BLAS on binary64 (or binary32) arithmetic: their NaN is the C++ quiet NaN of the result type,
//   std::numeric_limits<T>::quiet_NaN(), 0x7FF8000000000000 for binary64 and 0x7FC00000 for
//   binary32 (an fp32 result of the Ozaki epilogue is its binary64 NaN rounded to binary32, which
//   keeps the quiet bit and drops the zero payload).
//
// tests/backend/nan_test.cpp checks that each family writes its NaN.
#pragma once

#include <cstdint>

#include <tcemu/emulator/fp32_bits.hpp>
#include <tcemu/emulator/fp64_bits.hpp>

namespace tcemu::step_nan {

inline constexpr std::uint32_t fp32_split = kGpuFp32Nan;
inline constexpr std::uint64_t ozaki_fp64 = fp64::kCanonicalNan;
inline constexpr std::uint32_t ozaki_fp32 = fp64::kCanonicalNan32;
inline constexpr std::uint64_t inner_product_fp64 = fp64::kCanonicalNan;
inline constexpr std::uint32_t inner_product_fp32 = fp64::kCanonicalNan32;

}  // namespace tcemu::step_nan
