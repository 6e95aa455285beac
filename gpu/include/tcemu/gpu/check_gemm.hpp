// Kernel tests on the GPU: tcemu::check_gemm (tcemu/cases/gemm_check.hpp) for views whose data
// live in device memory. A, B, C and the kernel's D are copied to the host and checked there:
//
//   kernel<<<grid, block>>>(a_device, b_device, c_device, d_device);
//   // a, b, c, d: tcemu::ConstMatrixView of those pointers (data, format, rows, cols, ld, layout)
//   const tcemu::GemmCheck check = tcemu::gpu::check_gemm(datapath, options, a, b, c, d);
//   EXPECT_TRUE(check.passed()) << check.report;
//
// Plain C++ header: a test that includes it needs no CUDA header.
#pragma once

#include <cstdint>
#include <optional>

#include <tcemu/cases/gemm_check.hpp>
#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/matrix.hpp>

namespace tcemu::gpu {

// Waits for the device (the kernel under test, on any stream), copies the elements each view
// spans (from its rows, cols, ld and layout) to the host, and returns tcemu::check_gemm of the
// copies. Throws std::invalid_argument as check_gemm_operands does before reading any memory, and
// std::runtime_error naming the CUDA call and the operand when the wait or a copy fails (a kernel
// that faulted, a pointer that is not device memory).
GemmCheck check_gemm(const Datapath& datapath, const GemmOptions& options, ConstMatrixView a,
                     ConstMatrixView b, std::optional<ConstMatrixView> c, ConstMatrixView got,
                     std::int64_t listed = 10);

}  // namespace tcemu::gpu
