// The GPU kernels of the complex steps (tcemu/backend/complex_steps.hpp), on the default stream:
// the element functions of complex_elements.hpp (the ones the host backend runs), one thread per
// element, so the GPU and the emulator give the same bits. A complex matrix is passed as its
// parts view (complex_parts).
#pragma once

#include <complex>

#include <tcemu/backend/backend.hpp>

#include "device_matrix.hpp"

namespace tcemu::gpu::detail {

// x_parts: complex_parts(x) of the rows x cols complex x.
void complex_real_form(const DeviceReal& x_parts, std::int64_t rows, std::int64_t cols,
                       bool conjugate, const DeviceReal& dst);

// c_parts: complex_parts(c) of the rows x cols complex c; v null without a value.
void complex_epilogue(const DeviceReal* v, bool fp64_arithmetic, std::complex<double> alpha,
                      std::complex<double> beta, const DeviceReal& c_parts, std::int64_t rows,
                      std::int64_t cols, fp64::Direction d);

}  // namespace tcemu::gpu::detail
