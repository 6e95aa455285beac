// Backend::integer_gemm on the device (tcemu/backend/integer_gemm_steps.hpp): cublasGemmEx with
// int8 operands, an int32 result and CUBLAS_COMPUTE_32I, in the layout at which cuBLAS runs it
// on IMMA at full speed (A transposed, B not: both k-contiguous, "TN"), then the int32 result
// widened exactly into the fp64 C. The sums are exact integers below 2^31 (the step's contract),
// so the kernel cuBLAS picks and its order of summation do not change the bits.
#pragma once

#include <cublas_v2.h>

#include <cstddef>
#include <cstdint>

#include <tcemu/backend/backend.hpp>

namespace tcemu::gpu::detail {

// Device bytes integer_gemm_sums needs in `scratch` for an m x n result over k (its int32 form,
// and copies of A and B with k padded where cuBLAS's alignment rules need them).
std::size_t integer_gemm_scratch_bytes(std::int64_t m, std::int64_t n, std::int64_t k);

// The int32 sums of a b, written at the start of `scratch` (integer_gemm_scratch_bytes of it):
// m x n, column major, leading dimension integer_sums_ld(m); returns where they are.
std::int64_t integer_sums_ld(std::int64_t m);
const std::int32_t* integer_gemm_sums(cublasHandle_t handle, const IntegerMatrix& a,
                                      const IntegerMatrix& b, void* scratch);

// The same into `sums` (column major, leading dimension ld; ld and the address multiples of 4,
// as cuBLAS's int8 GEMM asks), with integer_gemm_padding_bytes(a, b) of `scratch` (none where
// a and b need no padded copies).
std::size_t integer_gemm_padding_bytes(const IntegerMatrix& a, const IntegerMatrix& b);
void integer_gemm_into(cublasHandle_t handle, const IntegerMatrix& a, const IntegerMatrix& b,
                       std::int32_t* sums, std::int64_t ld, void* scratch);

// The sums widened into c.
void integer_gemm(cublasHandle_t handle, const IntegerMatrix& a, const IntegerMatrix& b,
                  const RealMatrix& c, void* scratch);

}  // namespace tcemu::gpu::detail
