// The CRT steps of a backend (backend.hpp): the scaling, residue, product and reconstruction
// steps of Ozaki scheme II on integer tensor cores (ozaki/, CrtProducts).
// crt_elements.hpp states the arithmetic and its bounds; the checks are in crt_steps.cpp; the
// host implementations in host/src/crt_steps.cpp, the GPU's in gpu/src/steps/crt_steps.cu.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include <tcemu/backend/buffer_matrix.hpp>
#include <tcemu/backend/crt_elements.hpp>
#include <tcemu/backend/memory.hpp>
#include <tcemu/backend/ozaki_steps.hpp>

namespace tcemu {

// `count` int8 matrices of the same shape, matrix l starting `stride_bytes` after matrix l - 1.
struct IntegerMatrixStack {
  IntegerMatrix first;
  std::int64_t count;
  std::size_t stride_bytes;
};

class CrtSteps : public virtual MemorySpace {
 public:
  // For every row (SplitAxis::rows) or column v of x (fp64 or fp32; Inf and NaN elements take no
  // part): shifts[v] = crt_elements::VectorBits::shift(max_bits) of its finite elements, the
  // power of two that makes them integers held exactly (or of magnitude below 2^max_bits when
  // that takes fewer bits). Returns the largest VectorBits::exact_bits over the vectors (0 when
  // x has no nonzero finite element). 1 <= max_bits <= 4096.
  int crt_scale(const RealMatrix& x, SplitAxis axis, int max_bits, const ExponentVector& shifts);

  // The norm scaling of Ozaki scheme II: for every row (rows) or column v of x, with s_v =
  // VectorBits::shift(bound_bits) of its finite elements and N_v = the sum of
  // crt_elements::bound_magnitude(x_vp, s_v)^2 over them, shifts[v] = crt_elements::norm_shift(
  // N_v, s_v, gamma): the vector's integers (x 2^shifts[v] rounded to nearest) have Euclidean
  // norm at most 2^gamma, so by Cauchy-Schwarz every product of a row of A scaled with gamma_A
  // and a column of B scaled with gamma_B is at most 2^(gamma_A + gamma_B) in magnitude.
  // 1 <= bound_bits <= kNormBoundBits; gamma >= bound_bits + ceil(log2(length)) / 2 rounded up
  // (so that every t of norm_shift is >= 0); length below 2^24. Returns what crt_scale returns
  // (the largest VectorBits::exact_bits over the vectors), so that a caller learns how many
  // bits the exact scaling would take without another pass.
  int crt_norm_scale(const RealMatrix& x, SplitAxis axis, int bound_bits, int gamma,
                     const ExponentVector& shifts);

  // out[l] (int8) = crt_elements::scaled_residue(x_ip, shifts[v], m_l) for the first
  // out.size() moduli of crt_elements::kModuli, v the row (rows) or column of the element;
  // every out[l] has x's shape (any layouts).
  void crt_residues(const RealMatrix& x, SplitAxis axis, const ExponentVector& shifts,
                    std::span<const IntegerMatrix> out);

  // dst_ij (int8) = crt_elements::sum_residue((a b)_ij, m) for m = crt_elements::kModuli[modulus]:
  // the exact product of integer_gemm (a m x k s8 row major, b k x n s8 column major, k at most
  // kIntegerGemmMaxK, summed in int32) reduced modulo one modulus; dst m x n s8, column major.
  void crt_product_residues(const IntegerMatrix& a, const IntegerMatrix& b, int modulus,
                            const IntegerMatrix& dst);

  // dst_ij (fp64) = crt_elements::reconstruct of the residues' elements (residues.count s8
  // layers as crt_product_residues writes them, the l-th for the l-th modulus, column major)
  // with shift shifts.rows_i + shifts.columns_j.
  void crt_reconstruct(const IntegerMatrixStack& residues, const OuterExponents& shifts,
                       const RealMatrix& dst);

 protected:
  virtual int crt_scale_checked(const RealMatrix& x, SplitAxis axis, int max_bits,
                                const ExponentVector& shifts) = 0;
  // shifts holds s_v (crt_scale_checked with bound_bits); replaces each by its norm_shift.
  virtual void crt_norm_shifts_checked(const RealMatrix& x, SplitAxis axis, int gamma,
                                       const ExponentVector& shifts) = 0;
  virtual void crt_residues_checked(const RealMatrix& x, SplitAxis axis,
                                    const ExponentVector& shifts,
                                    std::span<const IntegerMatrix> out) = 0;
  virtual void crt_product_residues_checked(const IntegerMatrix& a, const IntegerMatrix& b,
                                            int modulus, const IntegerMatrix& dst) = 0;
  virtual void crt_reconstruct_checked(const IntegerMatrixStack& residues,
                                       const crt_elements::Table& table,
                                       const OuterExponents& shifts, const RealMatrix& dst) = 0;
};

}  // namespace tcemu
