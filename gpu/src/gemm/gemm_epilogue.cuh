// Reading C and writing D of the GPU GEMM kernels (tiled_mma_gemm.cu, wgmma_gemm.cu): the
// accumulator elements of any layout, and emulated_gemm's epilogue in the same fp32 operations.
#pragma once

#include <cstdint>

#include <tcemu/emulator/convert.hpp>

#include "gemm/tiled_mma_gemm.hpp"

namespace tcemu::gpu::detail {

__device__ inline std::int64_t element_index(const AccumulatorMatrix& x, int row, int col) {
  return x.row_major ? row * x.ld + col : col * x.ld + row;
}

template <bool HalfAccumulator>
__device__ inline std::uint32_t load_accumulator(const AccumulatorMatrix& x, int row, int col) {
  const std::int64_t i = element_index(x, row, col);
  if constexpr (HalfAccumulator) return static_cast<const std::uint16_t*>(x.data)[i];
  return static_cast<const std::uint32_t*>(x.data)[i];
}

template <bool HalfAccumulator>
__device__ inline void store_accumulator(const AccumulatorMatrix& x, int row, int col,
                                         std::uint32_t bits) {
  const std::int64_t i = element_index(x, row, col);
  if constexpr (HalfAccumulator) {
    static_cast<std::uint16_t*>(x.data)[i] = static_cast<std::uint16_t>(bits);
  } else {
    static_cast<std::uint32_t*>(x.data)[i] = bits;
  }
}

// D(row, col) from the accumulator bits of the MMA chain: as they are when C was the initial
// accumulator, otherwise through the epilogue of emulated_gemm (CInput::epilogue):
// RN(alpha x) when C is not read, RN(fma(alpha, x, RN(beta c))) otherwise, then RN into the
// accumulator format.
template <bool HalfAccumulator>
__device__ inline void store_result(const TiledGemmArguments& args, int row, int col,
                                    std::uint32_t bits) {
  if (!args.c_is_initial_accumulator) {
    // Device copies of the formats: namespace-scope constants live on the host.
    constexpr FloatFormat fp16 = formats::fp16, fp32 = formats::fp32;
    const auto to_float = [&](std::uint32_t b) {
      return HalfAccumulator ? __uint_as_float(convert(fp16, fp32, b, Rounding::nearest_even))
                             : __uint_as_float(b);
    };
    const float x = to_float(bits);
    const float result =
        args.c.data == nullptr
            ? __fmul_rn(args.alpha, x)
            : __fmaf_rn(args.alpha, x,
                        __fmul_rn(args.beta,
                                  to_float(load_accumulator<HalfAccumulator>(args.c, row, col))));
    bits = HalfAccumulator ? convert(fp32, fp16, __float_as_uint(result), Rounding::nearest_even)
                           : __float_as_uint(result);
  }
  store_accumulator<HalfAccumulator>(args.d, row, col, bits);
}

}  // namespace tcemu::gpu::detail
