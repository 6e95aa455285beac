// The host implementations of the fp32 split steps (tcemu/backend/fp32_split_steps.hpp has their
// semantics); arguments are already checked. One thread: these passes are O(size) beside the
// GEMM's O(m n k).
#pragma once

#include <cstdint>
#include <optional>

#include <tcemu/backend/fp32_split_steps.hpp>

namespace tcemu::detail {

Fp32Summary host_summarize_fp32(const BufferMatrix& x);
std::int64_t host_split_fp32(const BufferMatrix& x, const BufferMatrix& part,
                             const std::optional<BufferMatrix>& residual, Rounding rounding,
                             int scale_exponent);
void host_combine_fp32(const BufferMatrix& x, const std::optional<BufferMatrix>& y,
                       const std::optional<BufferMatrix>& c, const BufferMatrix& d,
                       const CombineOptions& options);
void host_propagate_nonfinite_fp32(const BufferMatrix& a, const BufferMatrix& b,
                                   const BufferMatrix& d);

}  // namespace tcemu::detail
