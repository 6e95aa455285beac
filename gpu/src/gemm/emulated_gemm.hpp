// The emulated GEMM on the GPU: tcemu::emulated_gemm (gemm.hpp) for ANY datapath, bit for bit,
// computed by CUDA cores instead of the tensor cores (the GPU backend's GemmEngine::emulated).
//
// Two kernels share the emulator's block arithmetic, compiled for the device:
//  * the binary64 kernel (binary64_block.hpp, whose header proves it exact) where
//    binary64_applies() holds and A and B hold no Inf or NaN: shared-memory tiles of 64 x 64
//    outputs, 4 x 4 per thread, the operands decoded once per tile into (value, alignment
//    exponent), looked up in a table of every pattern for inputs of at most 16 bits;
//  * the exact kernel (block_fma.hpp: integer terms in a WideSum, round_pack) everywhere else:
//    exact alignment, grids too wide for binary64, inputs wider than 11 significant bits, Inf or
//    NaN operands, k = 0 (C passes through untouched), a b format other than a's and block-scaled
//    datapaths (with the scales of A and B). One output per thread.
// Both follow emulated_gemm step for step: the k order of mma_element (instructions in k order,
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

// Device memory the launcher needs: one flag word, then the binary64 kernel's table of the
// operand of every 16-bit pattern (a binary64 value and an int exponent each).
inline constexpr std::size_t kOperandTableOffset = 256;
inline constexpr std::size_t kOperandTableEntries = std::size_t{1} << 16;
inline constexpr std::size_t kEmulatedGemmScratchBytes =
    kOperandTableOffset + kOperandTableEntries * (sizeof(double) + sizeof(int));

// The scales of a block-scaled product on the device (BlockScales, gemm.hpp).
struct DeviceScales {
  DeviceMatrix a, b;
};

// D = the emulated GEMM of A and B (and C), with the scales of a block-scaled datapath, on the
// default stream. The caller has checked the operands (check_gemm_operands), the datapath
// (validate) and takeout_every_k, and that m, n, k are below 2^31. `scratch` is
// kEmulatedGemmScratchBytes of device memory. Returns whether the binary64 kernel ran (false:
// the exact one).
bool launch_emulated_gemm(const Datapath& datapath, const GemmOptions& options,
                          const DeviceMatrix& a, const DeviceMatrix& b,
                          const std::optional<DeviceMatrix>& c, const DeviceMatrix& d,
                          const std::optional<DeviceScales>& scales, void* scratch);

}  // namespace tcemu::gpu::detail
