// The integer GEMM step of a backend (backend.hpp): the product of two int8 matrices on integer
// tensor cores (IMMA: s8 x s8 products, exact, summed in int32), the one step the integer Ozaki
// schemes (ozaki/, IntegerProducts) add to the Ozaki steps. Its checks are in
// integer_gemm_steps.cpp; the host implementation (the emulator's integer MMA) in
// host/src/integer_gemm_steps.cpp, the GPU's (cublasGemmEx, CUDA_R_8I -> CUDA_R_32I) in
// gpu/src/steps/integer_gemm_steps.cu.
#pragma once

#include <cstdint>

#include <tcemu/backend/buffer_matrix.hpp>
#include <tcemu/backend/memory.hpp>

namespace tcemu {

// The largest k of integer_gemm: every partial sum of k products of int8 values is at most
// k 2^14 in magnitude ((-128)(-128) = 2^14), below 2^31 for k < 2^17, so int32 holds it in any
// order of summation and every backend gives the exact sum.
inline constexpr std::int64_t kIntegerGemmMaxK = (std::int64_t{1} << 17) - 1;

class IntegerGemmSteps : public virtual MemorySpace {
 public:
  // c = a b exactly: a is m x k of Integer::s8, row major (each row's k elements contiguous: the
  // layout at which IMMA runs fastest, "TN" for cuBLAS), b k x n of s8, column major, and c m x n
  // fp64, column major: c_ij = sum_p a_ip b_pj, an integer of magnitude < 2^31 (k <=
  // kIntegerGemmMaxK), computed in int32 and written exactly as binary64 (a zero as +0). Refused
  // (std::invalid_argument) for other formats, layouts, shapes or k; c must not overlap a or b.
  void integer_gemm(const IntegerMatrix& a, const IntegerMatrix& b, const RealMatrix& c);

 protected:
  // What each backend implements; arguments are already checked.
  virtual void integer_gemm_checked(const IntegerMatrix& a, const IntegerMatrix& b,
                                    const RealMatrix& c) = 0;
};

}  // namespace tcemu
