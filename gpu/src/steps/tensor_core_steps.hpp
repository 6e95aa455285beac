// Elementwise kernels of the GPU backend, on the default stream.
#pragma once

#include <cuda_runtime.h>

#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/round.hpp>

#include "device_matrix.hpp"

namespace tcemu::gpu::detail {

// dst(i, j) = convert(from, to, src(i, j), rounding): the emulator's own convert (convert.hpp),
// compiled for the device.
void convert_matrix(const DeviceMatrix& src, const FloatFormat& from, const DeviceMatrix& dst,
                    const FloatFormat& to, Rounding rounding);

// dst(i, j) = src(i, j), bits unchanged (same container size).
void copy_matrix(const DeviceMatrix& src, const DeviceMatrix& dst);

// Packs an operand into the k-contiguous rows of the tiled GEMM (tiled_mma_gemm.hpp): element kk
// of row r is src(r, kk), or src(kk, r) when `columns` (B's columns are its k-contiguous rows),
// for kk < k, and zero from k to ld_elements.
void pack_k_rows(const DeviceMatrix& src, bool columns, std::int64_t rows, std::int64_t k,
                 void* dst, std::int64_t ld_elements);

}  // namespace tcemu::gpu::detail
