// The GPU kernels of the Backend's fp32 steps for the error-corrected SGEMM schemes
// (tcemu/backend/fp32_split_steps.hpp). Each one runs the emulator's element functions
// (fp32_split_elements.hpp) on the device, so the two backends give the same bits.
#pragma once

#include <cstdint>

#include <tcemu/backend/backend.hpp>

#include "device_matrix.hpp"

namespace tcemu::gpu::detail {

// `scratch` is device memory the step may overwrite: 24 bytes for summarize_fp32 and split_fp32,
// 4 (a.rows + b.cols) bytes for propagate_nonfinite_fp32. summarize_fp32 and split_fp32
// synchronize (they return what the device found).
Fp32Summary summarize_fp32(const DeviceMatrix& x, void* scratch);

// Returns the number of elements that overflowed the part format.
std::int64_t split_fp32(const DeviceMatrix& x, const DeviceMatrix& part, const FloatFormat& format,
                        const DeviceMatrix* residual, Rounding rounding, int scale_exponent,
                        void* scratch);

void combine_fp32(const DeviceMatrix& x, const DeviceMatrix* y, const DeviceMatrix* c,
                  const DeviceMatrix& d, const CombineOptions& options);

void propagate_nonfinite_fp32(const DeviceMatrix& a, const DeviceMatrix& b, const DeviceMatrix& d,
                              void* scratch);

}  // namespace tcemu::gpu::detail
