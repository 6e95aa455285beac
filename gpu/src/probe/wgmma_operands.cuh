// Shared-memory operands of the one-case wgmma runners (wgmma_runner.cu, imma_runner.cu).
//
// A warpgroup (128 threads) runs wgmma.mma_async m64n8kK with A and B in shared memory, K-major,
// without swizzling: each operand is a grid of "core matrices" of 8 rows x 16 bytes, 128
// contiguous bytes each, and the descriptor gives the byte distance between core matrices
// adjacent in K (leading byte offset) and adjacent in M or N (stride byte offset). Both are 128
// here, so core matrix (i, j) sits at (i + j) * 128 whichever way round the hardware reads the two
// fields: row 0 of A and column 0 of B, the only nonzero data, live in core matrices (0, 0) and
// (0, 1) at bytes 0-15 and 128-143. Other rows overlap, which changes only rows of D other than
// row 0. D(0, 0) is register 0 of thread 0 (the mma.sync C/D layout, per warp of 16 rows).
#pragma once

#include <cstdint>

namespace tcemu::gpu::detail {

constexpr int kWgmmaCoreBytes = 128;
constexpr int kWgmmaOperandBytes = 2048;  // covers (7 + 1) core matrices at 128-byte steps

__device__ inline std::uint64_t wgmma_descriptor(const void* shared) {
  const auto address = static_cast<std::uint64_t>(__cvta_generic_to_shared(shared));
  constexpr std::uint64_t offset = kWgmmaCoreBytes >> 4;
  return ((address & 0x3FFFF) >> 4) | (offset << 16) | (offset << 32);  // swizzle bits 62-63: 0
}

// Element e of a K-major row of 32 bytes: bytes 0-15 in core matrix (0, 0), 16-31 in (0, 1).
__device__ inline void put_wgmma_row(unsigned char* operand, const std::uint32_t* elements, int k,
                                     int element_bytes) {
  for (int e = 0; e < k; ++e) {
    for (int byte = 0; byte < element_bytes; ++byte) {
      const int offset = e * element_bytes + byte;
      operand[offset < 16 ? offset : kWgmmaCoreBytes + offset - 16] =
          static_cast<unsigned char>(elements[e] >> (8 * byte));
    }
  }
}

}  // namespace tcemu::gpu::detail
