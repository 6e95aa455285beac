// Kernel tests: compare a GEMM result computed elsewhere (a CUDA kernel's D, copied to the host)
// with the emulated GEMM of the same inputs through a datapath, bit for bit.
//
//   const tcemu::GemmCheck check = tcemu::check_gemm(dp, {}, a, b, c, d_from_kernel);
//   EXPECT_TRUE(check.passed()) << check.report;
//
// For views of device memory, tcemu/gpu/check_gemm.hpp copies them to the host first.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <tcemu/cases/matrix_comparison.hpp>
#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/matrix.hpp>

namespace tcemu {

struct GemmCheck {
  MatrixComparison comparison;  // expected: the emulated GEMM; got: the result checked
  // format_comparison's text, each listed element with its inputs (gemm_element_inputs).
  std::string report;
  bool passed() const { return comparison.equal(); }
};

// Runs emulated_gemm(datapath, options, a, b, c) into a matrix of got's shape and compares `got`
// with it, listing the first `listed` differing elements. Throws std::invalid_argument as
// emulated_gemm does for operands that do not fit, and when `got` does not hold the
// accumulator format.
GemmCheck check_gemm(const Datapath& datapath, const GemmOptions& options, ConstMatrixView a,
                     ConstMatrixView b, std::optional<ConstMatrixView> c, ConstMatrixView got,
                     std::int64_t listed = 10);
// The same for a block-scaled datapath, with the scales of A and B (gemm.hpp's BlockScales).
GemmCheck check_gemm(const Datapath& datapath, const GemmOptions& options, ConstMatrixView a,
                     ConstMatrixView b, const BlockScales& scales, std::optional<ConstMatrixView> c,
                     ConstMatrixView got, std::int64_t listed = 10);

// What element (i, j) is computed from, in words: C's element, and for K up to 16 (64 with
// scales; no take-out within K) the `tcemu mma` case line (K a... b... c) of the element's chain
// of instructions: its c is C's element when C is the initial accumulator, +0 when C enters in
// the epilogue. For larger K, the range of the products' magnitudes. With `scales` (a
// block-scaled datapath) the case line carries the element's scales and the range is that of the
// unscaled products.
std::string gemm_element_inputs(const Datapath& datapath, const GemmOptions& options,
                                ConstMatrixView a, ConstMatrixView b,
                                std::optional<ConstMatrixView> c, std::int64_t i, std::int64_t j,
                                const BlockScales* scales = nullptr);

}  // namespace tcemu
