// The emulated GEMM on the GPU: tcemu::emulated_gemm (gemm.hpp) for ANY datapath, bit for bit,
// computed by CUDA cores instead of the tensor cores (the GPU backend's GemmEngine::emulated).
//
// Three kernels share the emulator's block arithmetic, compiled for the device:
//  * the group kernel (scaled_groups.hpp, whose header proves it exact) where
//    scaled_groups_apply() holds: block-scaled datapaths with groups of products summed before
//    their scales (group_terms > 1: kind::mxf4, mxf4nvf4: MXFP4, NVFP4) on elements with int8 codes
//    (e2m1, e2m3), whatever the inputs (NaN scales and an Inf or NaN C included): shared-memory
//    tiles of 64 x 64 outputs, 4 x 4 per thread, each group's codes summed four products at a time
//    by __dp4a, its scales applied in integers, the block summed in int64 and rounded once;
//  * the binary64 kernel (binary64_block.hpp, whose header proves it exact) where
//    binary64_applies() holds and A, B and the scales hold no Inf or NaN: kind::f8f6f4 pairs (B
//    decoded in its own format) and block scaling with one scale pair per product (group_terms 1:
//    kind::mxf8f6f4, MXFP8/MXFP6/MXFP4, each operand staged times its scale) included;
//    shared-memory tiles of 64 x 64 outputs, 4 x 4 per thread, the operands decoded once per tile
//    into (value, alignment exponent), looked up in a table of every pattern (one per format) for
//    inputs of at most 16 bits;
//  * the exact kernel (block_fma.hpp: integer terms in a WideSum, round_pack) everywhere else:
//    exact alignment, grids too wide for binary64, inputs wider than 11 significant bits, Inf or
//    NaN operands or NaN scales (group_terms 1), k = 0 (C passes through untouched). One output per
//    thread.
// All follow emulated_gemm step for step: the k order of mma_element (instructions in k order,
// terms dealt to blocks by k_group, partial last instruction without padding terms), C as the
// initial accumulator or through the fp32 epilogue, take-out every kb values of k.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/gemm.hpp>

#include "device_matrix.hpp"

namespace tcemu::gpu::detail {

// Device memory the launcher needs: one flag word, then the binary64 kernel's two tables (A's
// format's and B's) of the operand of every 16-bit pattern (a binary64 value and an int exponent
// each).
inline constexpr std::size_t kOperandTableOffset = 256;
inline constexpr std::size_t kOperandTableEntries = std::size_t{1} << 16;
inline constexpr std::size_t kOperandTableBytes =
    kOperandTableEntries * (sizeof(double) + sizeof(int));
inline constexpr std::size_t kEmulatedGemmScratchBytes =
    kOperandTableOffset + 2 * kOperandTableBytes;

// The scales of a block-scaled product on the device (BlockScales, gemm.hpp).
struct DeviceScales {
  DeviceMatrix a, b;
};

// The kernel a launch ran (none: m or n is 0).
enum class EmulatedKernel { none, groups, binary64, exact };

// D = the emulated GEMM of A and B (and C), with the scales of a block-scaled datapath, on the
// default stream. The caller has checked the operands (check_gemm_operands), the datapath
// (validate) and takeout_every_k, and that m, n, k are below 2^31. `scratch` is
// kEmulatedGemmScratchBytes of device memory. Returns the kernel that ran.
EmulatedKernel launch_emulated_gemm(const Datapath& datapath, const GemmOptions& options,
                                    const DeviceMatrix& a, const DeviceMatrix& b,
                                    const std::optional<DeviceMatrix>& c, const DeviceMatrix& d,
                                    const std::optional<DeviceScales>& scales, void* scratch);

}  // namespace tcemu::gpu::detail
