// The GPU kernels of the Backend's fp32 steps for the error-corrected SGEMM schemes
// (backend.hpp, "Error-corrected SGEMM steps"). Each one runs the emulator's element functions
// (residual_split.hpp) on the device, so the two backends give the same bits.
#pragma once

#include <cstdint>

#include <tcemu/emulator/backend.hpp>

#include "device_matrix.hpp"

namespace tcemu::gpu::detail {

Fp32Summary summarize_fp32(const DeviceMatrix& x);

// Returns the number of elements that overflowed the part format.
std::int64_t split_fp32(const DeviceMatrix& x, const DeviceMatrix& part, const FloatFormat& format,
                        const DeviceMatrix* residual, Rounding rounding, int scale_exponent);

void combine_fp32(const DeviceMatrix& x, const DeviceMatrix* y, const DeviceMatrix* c,
                  const DeviceMatrix& d, const CombineOptions& options);

void propagate_nonfinite_fp32(const DeviceMatrix& a, const DeviceMatrix& b, const DeviceMatrix& d);

}  // namespace tcemu::gpu::detail
