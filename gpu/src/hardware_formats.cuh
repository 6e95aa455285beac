// The tensor-core input formats that the GPU converts to from fp32 in hardware (cvt), and the
// exact conversion of a value that the format holds: kernels take it instead of the emulator's
// bit-level encoders where the result is the same bits.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include <tcemu/emulator/format.hpp>

namespace tcemu::gpu::detail {

enum class HardwareFormat : unsigned char { none, fp16, bf16, tf32 };

inline HardwareFormat hardware_format(const FloatFormat& format) {
  return format == formats::fp16   ? HardwareFormat::fp16
         : format == formats::bf16 ? HardwareFormat::bf16
         : format == formats::tf32 ? HardwareFormat::tf32
                                   : HardwareFormat::none;
}

// The container bits of x in `format` (not none), for an x that the format represents exactly:
// every rounding of an exact value returns it, so cvt.rn gives the format's encoding (a tf32 is
// the fp32 bit pattern whose low 13 bits are zero, which x's are). +0 stays +0.
__device__ inline std::uint32_t encode_exact(float x, HardwareFormat format) {
  switch (format) {
    case HardwareFormat::fp16:
      return __half_as_ushort(__float2half_rn(x));
    case HardwareFormat::bf16:
      return __bfloat16_as_ushort(__float2bfloat16_rn(x));
    default:
      return __float_as_uint(x);
  }
}

}  // namespace tcemu::gpu::detail
