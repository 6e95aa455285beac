// The CRT steps of a backend (backend.hpp): the scaling, residue, product and reconstruction
// steps of Ozaki scheme II on integer tensor cores (ozaki/, CrtProducts).
// The element functions state the arithmetic and its bounds: crt_moduli.hpp, crt_scaling.hpp,
// crt_bounds.hpp, crt_residues.hpp and crt_reconstruction.hpp; the checks are in crt_steps.cpp; the
// host implementations in host/src/crt_steps.cpp, the GPU's in gpu/src/steps/crt_steps.cu.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include <tcemu/backend/buffer_matrix.hpp>
#include <tcemu/backend/crt_reconstruction.hpp>
#include <tcemu/backend/memory.hpp>
#include <tcemu/backend/ozaki_steps.hpp>

namespace tcemu {

// `count` integer matrices of the same shape and format, matrix l starting `stride_bytes` after
// matrix l - 1.
struct IntegerMatrixStack {
  IntegerMatrix first;
  std::int64_t count;
  std::size_t stride_bytes;
};

// The per-vector exponents of dp's bound (crt_magnitude_bound): norm2 and norm1 of
// crt_elements::BoundVector, one element per row or column.
struct BoundExponents {
  ExponentVector norm2;
  ExponentVector norm1;
};

// What the norm scaling learns of each row or column for dp's bound: the fields of
// crt_elements::VectorNorm, one element per vector.
struct VectorNorms {
  ExponentVector rho;
  ExponentVector log2_norm1;
  ExponentVector top;
};

// One quantization of A's rows and B's columns for crt_bound_need: a (m x k, row major) and b
// (k x n, column major) written by crt_magnitude_bound with the same depth, and their exponents.
struct BoundLevel {
  IntegerMatrix a;
  IntegerMatrix b;
  BoundExponents rows;
  BoundExponents columns;
};

// What crt_scale learns of x besides the shifts: the largest VectorBits::exact_bits over its
// vectors (0 when x has no nonzero finite element) and whether x holds an Inf or a NaN (then
// the BLAS epilogue's special values are needed).
struct ScaleSummary {
  int exact_bits = 0;
  bool nonfinite = false;
};

class CrtSteps : public virtual MemorySpace {
 public:
  // For every row (SplitAxis::rows) or column v of x (fp64 or fp32; Inf and NaN elements take no
  // part): shifts[v] = crt_elements::VectorBits::shift(max_bits) of its finite elements, the
  // power of two that makes them integers held exactly (or of magnitude below 2^max_bits when
  // that takes fewer bits). Returns the ScaleSummary of x. 1 <= max_bits <= 4096.
  ScaleSummary crt_scale(const RealMatrix& x, SplitAxis axis, int max_bits,
                         const ExponentVector& shifts);

  // The norm scaling of Ozaki scheme II: for every row (rows) or column v of x (fp64 or fp32; Inf
  // and NaN elements take no part), with s_v = VectorBits::shift(bound_bits) of its finite
  // elements, n_v = crt_elements::vector_norm of their MagnitudeSums at s_v and shifts[v] =
  // crt_elements::norm_shift(n_v, gamma): the vector's integers (x 2^shifts[v] rounded to
  // nearest) have Euclidean norm at most 2^gamma, so by Cauchy-Schwarz every product of a row of
  // A scaled with gamma_A and a column of B scaled with gamma_B is at most 2^(gamma_A + gamma_B)
  // in magnitude. With `norms`, also writes n_v's fields there (what crt_magnitude_bound takes).
  // 1 <= bound_bits <= kNormBoundBits; gamma >= bound_bits + ceil(log2(length)) / 2 rounded up
  // (so that every t of norm_shift is >= 0); length below 2^24. Returns what crt_scale returns
  // (its ScaleSummary), so that a caller learns how many bits the exact scaling would take, and
  // whether x holds special values, without another pass.
  ScaleSummary crt_norm_scale(const RealMatrix& x, SplitAxis axis, int bound_bits, int gamma,
                              const ExponentVector& shifts, const VectorNorms* norms = nullptr);

  // out[l] (int8) = crt_elements::scaled_residue(x_ip, shifts[v], m_l) for the first
  // out.size() moduli of crt_elements::kModuli, v the row (rows) or column of the element;
  // every out[l] has x's shape (any layouts).
  void crt_residues(const RealMatrix& x, SplitAxis axis, const ExponentVector& shifts,
                    std::span<const IntegerMatrix> out);

  // The product modulo one modulus m = crt_elements::kModuli[modulus], from the exact product of
  // integer_gemm (a m x k s8 row major, b k x n s8 column major, k at most kIntegerGemmMaxK,
  // summed in int32); dst m x n, column major: s8 holds crt_elements::sum_residue((a b)_ij, m),
  // s32 the int32 sums (a b)_ij themselves, which crt_reconstruct reduces as it reads them (no
  // pass over the sums of its own: the CRT scheme's choice where its workspace holds them).
  void crt_product_residues(const IntegerMatrix& a, const IntegerMatrix& b, int modulus,
                            const IntegerMatrix& dst);

  // dp's certified lower bound of |A||B|, first half (crt_bounds.hpp, BoundVector): for every
  // row (rows) or column v of x (fp64), with n_v its VectorNorm from `norms` (crt_norm_scale's
  // of the same x) and b = bound_vector(n_v, floor(log2 length), depth): exponents.norm2[v] =
  // b.norm2, exponents.norm1[v] = b.norm1 and out_vp (s8, x's shape, any layout) =
  // magnitude_quanta(x_vp, b.quantum_shift): one pass over x. length below 2^24, -8 <= depth <=
  // 30.
  void crt_magnitude_bound(const RealMatrix& x, SplitAxis axis, int depth, const VectorNorms& norms,
                           const IntegerMatrix& out, const BoundExponents& exponents);

  // The second half, for one or two levels (quantizations) of the same m x n block: for every
  // element the least over the levels of crt_elements::bound_need (the level's exact int32
  // product of a and b, its inner dimension at most kIntegerGemmMaxK, with its rows' and
  // columns' exponents and log2_k = floor(log2 k)), and returns the largest over the elements:
  // kNoNeed when every element has none (or m n = 0), kBoundUncertified when some element's
  // product is 0 in every level with both vectors nonempty. k is the inner dimension of the
  // product whose error the criterion bounds; the levels may hold only its leading a.cols <= k
  // terms (their sums are still lower bounds of |A||B|: a need at least the whole one's).
  int crt_bound_need(std::span<const BoundLevel> levels, std::int64_t k);

  // dst_ij (fp64) = crt_elements::reconstruct of the residues' elements (residues.count layers
  // as crt_product_residues writes them, the l-th for the l-th modulus, column major: s8
  // residues, or s32 sums taken as crt_elements::sum_congruent gives them) with shift
  // shifts.rows_i + shifts.columns_j, rounded in direction d (the table's direction).
  void crt_reconstruct(const IntegerMatrixStack& residues, const OuterExponents& shifts,
                       const RealMatrix& dst, fp64::Direction d = fp64::Direction::nearest_even);

 protected:
  virtual ScaleSummary crt_scale_checked(const RealMatrix& x, SplitAxis axis, int max_bits,
                                         const ExponentVector& shifts) = 0;
  // shifts holds s_v (crt_scale_checked with bound_bits); replaces each by its norm_shift and
  // writes the VectorNorm fields into *norms when given.
  virtual void crt_norm_shifts_checked(const RealMatrix& x, SplitAxis axis, int gamma,
                                       const ExponentVector& shifts, const VectorNorms* norms) = 0;
  virtual void crt_residues_checked(const RealMatrix& x, SplitAxis axis,
                                    const ExponentVector& shifts,
                                    std::span<const IntegerMatrix> out) = 0;
  virtual void crt_product_residues_checked(const IntegerMatrix& a, const IntegerMatrix& b,
                                            int modulus, const IntegerMatrix& dst) = 0;
  virtual void crt_magnitude_bound_checked(const RealMatrix& x, SplitAxis axis, int depth,
                                           const VectorNorms& norms, const IntegerMatrix& out,
                                           const BoundExponents& exponents) = 0;
  virtual int crt_bound_need_checked(std::span<const BoundLevel> levels, int log2_k) = 0;
  virtual void crt_reconstruct_checked(const IntegerMatrixStack& residues,
                                       const crt_elements::Table& table,
                                       const OuterExponents& shifts, const RealMatrix& dst) = 0;
};

}  // namespace tcemu
