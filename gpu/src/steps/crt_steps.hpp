// The GPU kernels of the CRT steps (tcemu/backend/crt_steps.hpp), on the default stream, running
// the element functions of crt_scaling.hpp, crt_residues.hpp and crt_reconstruction.hpp, so the
// GPU backend gives the emulator's bits.
#pragma once

#include <cublas_v2.h>

#include <cstddef>
#include <span>

#include <tcemu/backend/backend.hpp>

namespace tcemu::gpu::detail {

// Device bytes crt_scale needs in `scratch`.
std::size_t crt_scale_scratch_bytes(const RealMatrix& x, SplitAxis axis);

// Backend::crt_scale: one thread block per vector when its elements are contiguous, otherwise a
// thread per vector and chunk; synchronizes (returns the bits).
ScaleSummary crt_scale(const RealMatrix& x, SplitAxis axis, int max_bits,
                       const ExponentVector& shifts, void* scratch);
// Device bytes crt_norm_shifts needs in `scratch`.
std::size_t crt_norm_shifts_scratch_bytes(const RealMatrix& x, SplitAxis axis);
// The second pass of Backend::crt_norm_scale (shifts holds the bound shifts): the MagnitudeSums
// in uint64 (exact, so the order of the atomic additions does not matter), then the shifts and
// the VectorNorm fields into *norms when given.
void crt_norm_shifts(const RealMatrix& x, SplitAxis axis, int gamma, const ExponentVector& shifts,
                     const VectorNorms* norms, void* scratch);
// Backend::crt_residues: one thread per element of x, every modulus.
void crt_residues(const RealMatrix& x, SplitAxis axis, const ExponentVector& shifts,
                  std::span<const IntegerMatrix> out);
// Backend::crt_product_residues: an s32 dst takes the int32 sums from integer_gemm_into straight
// (where its ld and address suit cuBLAS; otherwise through the scratch); for s8,
// integer_gemm_sums into the scratch, then one thread per element reduces its sum.
// crt_product_residues_scratch_bytes of scratch.
std::size_t crt_product_residues_scratch_bytes(const IntegerMatrix& a, const IntegerMatrix& b,
                                               const IntegerMatrix& dst);
void crt_product_residues(cublasHandle_t handle, const IntegerMatrix& a, const IntegerMatrix& b,
                          int modulus, const IntegerMatrix& dst, void* scratch);
// Backend::crt_reconstruct: a thread per four elements (one for 7 limbs and more), in the
// table's limbs, each layer read as int8 residues or int32 sums.
void crt_reconstruct(const IntegerMatrixStack& residues, const crt_elements::Table& table,
                     const OuterExponents& shifts, const RealMatrix& dst);

}  // namespace tcemu::gpu::detail
