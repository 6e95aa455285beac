// The host implementations of the tensor-core steps (tcemu/backend/tensor_core_steps.hpp has
// their semantics); arguments are already checked. `threads` as in parallel_for.hpp.
#pragma once

#include <optional>

#include <tcemu/backend/tensor_core_steps.hpp>

namespace tcemu::detail {

// The emulated GEMM (tcemu/emulator/gemm.hpp) on host buffers, with the scales of a
// block-scaled datapath; options.threads == 0 takes `threads`.
void host_mma_gemm(const Datapath& datapath, const GemmOptions& options, const BufferMatrix& a,
                   const BufferMatrix& b, const std::optional<BufferMatrix>& c,
                   const BufferMatrix& d, const std::optional<ScaleBuffers>& scales, int threads);
void host_convert(const BufferMatrix& src, const BufferMatrix& dst, Rounding rounding);

}  // namespace tcemu::detail
