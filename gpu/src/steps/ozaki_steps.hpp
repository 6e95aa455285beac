// The GPU kernels of the Backend's Ozaki steps (tcemu/backend/ozaki_steps.hpp), on the
// default stream. Each runs the emulator's element functions (ozaki_elements.hpp) on the device,
// so the GPU backend and the emulator backend give the same bits. fp64_gemm is cuBLAS
// (cublas_gemm.hpp).
#pragma once

#include <cstdint>
#include <span>

#include <tcemu/backend/backend.hpp>

#include "device_matrix.hpp"
#include "hardware_formats.cuh"

namespace tcemu::gpu::detail {

// dst = src, fp32 -> fp64 widening exactly, same types copying the bits; tiles of 32 x 32 go
// through shared memory so that both sides are read and written along their contiguous index.
void copy_real(const DeviceReal& src, const DeviceReal& dst);

// Where one split level writes its slice and exponents.
struct SliceTarget {
  unsigned char* data;
  std::int64_t ld;
  bool row_major;
  bool fp64;           // a binary64 slice; otherwise `format` (a tensor-core format)
  FloatFormat format;  // of a tensor-core slice
  int element_bytes;   // container bytes of `format` (8 for a binary64 slice)
  std::int32_t* exponents;
  HardwareFormat hardware =
      HardwareFormat::none;  // hardware_format(format) of a non-binary64 slice
  bool int8 = false;         // an int8 slice (element_bytes 1; format and hardware unused)
};

// Device bytes split() needs in `scratch` for `stored` levels.
std::size_t split_scratch_bytes(std::size_t stored);

// Backend::split: one thread block per row (rows) or column of the fp64 matrix x, all levels in
// one pass with the vector in shared memory (in place in x when it is too long for shared
// memory). Returns what Backend::split returns; synchronizes.
int split(const DeviceReal& x, bool rows, int bits, int levels,
          std::span<const SliceTarget> targets, void* scratch);

// Backend::all_zero; `scratch` holds 4 bytes. Synchronizes.
bool all_zero(const DeviceReal& x, void* scratch);

// One product's scale exponents (Backend::accumulate_scaled).
struct LayerExponents {
  const std::int32_t* rows;
  const std::int32_t* columns;
};

// Backend::accumulate_scaled of `count` products first, first + stride, ...: every dst element is
// read once, the products added in order in registers, and written once.
void accumulate_scaled(const DeviceReal& first, std::size_t stride_bytes, std::int64_t count,
                       std::span<const LayerExponents> scales, LayerExponents base,
                       const DeviceReal& dst, bool overwrite);

// Backend::exact_sum: one thread per element, the limbs of its long accumulator
// (Binary64Accumulator, long_accumulator.hpp) in shared memory.
void exact_sum(const DeviceReal& first, std::size_t stride_bytes, std::int64_t count,
               LayerExponents scale, const DeviceReal& dst, fp64::Direction d);

// Backend::epilogue. `scale` is used when scale.rows != nullptr; `scratch` holds 4 (m + n)
// bytes when a and b are given (flags of the rows of a and columns of b holding Inf or NaN).
void epilogue(const DeviceReal* v, LayerExponents scale, double alpha, double beta,
              const DeviceReal* c, const DeviceReal* a, const DeviceReal* b, const DeviceReal& out,
              void* scratch, fp64::Direction d);

}  // namespace tcemu::gpu::detail
