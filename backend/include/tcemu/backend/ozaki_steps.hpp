// The Ozaki steps of a backend (backend.hpp): the steps of the Ozaki scheme (ozaki/) on binary64
// and binary32 matrices: copy and widen, split levels, a zero test, an FP64 GEMM, scaled
// accumulation of partial products, the correctly rounded sum of a stack of matrices and the BLAS
// epilogue. Their checks are in ozaki_steps.cpp, the element functions every backend applies in
// ozaki_elements.hpp; the host implementations in host/src/ozaki_steps.cpp (and fp64_gemm.cpp),
// the GPU's in gpu/src/steps/ozaki_steps.cu.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <variant>

#include <tcemu/backend/buffer_matrix.hpp>
#include <tcemu/backend/memory.hpp>
#include <tcemu/emulator/fp64_bits.hpp>

namespace tcemu {

// `count` matrices of the same shape, matrix l starting `stride_bytes` after matrix l - 1
// (first.offset_bytes + l * stride_bytes).
struct RealMatrixStack {
  RealMatrix first;
  std::int64_t count;
  std::size_t stride_bytes;
};

// A vector of `size` int32 exponents inside a buffer.
struct ExponentVector {
  const Buffer* buffer;
  std::size_t offset_bytes;
  std::int64_t size;
};

// Power-of-two scales of an m x n matrix: element (i, j) is scaled by 2^(rows_i + columns_j)
// (rows: m exponents, columns: n). The split levels' exponents of A's rows and B's columns.
struct OuterExponents {
  ExponentVector rows;
  ExponentVector columns;
};

// Which vectors of a matrix a split level works on: each row (A of A B, split along k) or each
// column (B).
enum class SplitAxis { rows, columns };

// Where a split level writes its slice: a matrix of a tensor-core input format (fp16, bf16, tf32,
// ...), a binary64 matrix (for products by an FP64 GEMM) or an int8 matrix (Integer::s8, for
// integer_gemm; it holds every integer of magnitude <= 2^bits for bits <= 6).
using SliceMatrix = std::variant<BufferMatrix, RealMatrix, IntegerMatrix>;

class OzakiSteps : public virtual MemorySpace {
 public:
  // Unless a step says otherwise: every rounded operation is IEEE 754 binary64 arithmetic with
  // round to nearest, ties to even, no fused multiply-add and no flush of subnormals; scalbn(x, e)
  // is x * 2^e rounded once (exact unless the result is subnormal or overflows).

  // dst = src elementwise, same shape, any layouts. fp32 -> fp64 widens exactly (NaN: the same
  // payload shifted, quiet bit set, as a C++ float-to-double conversion gives), fp64 -> fp64 and
  // fp32 -> fp32 copy the bits. fp64 -> fp32 is refused (std::invalid_argument).
  void copy_real(const RealMatrix& src, const RealMatrix& dst);

  // One level of Algorithm 1 of Mukunoki et al. (ISC 2020), on every row (SplitAxis::rows) or
  // every column of the binary64 remainder x, which it updates in place. 1 <= bits <= 51.
  // For one vector v of x (its finite elements; Inf and NaN elements take no part, their slice
  // element is +0 and they stay in x unchanged):
  //   mu = max |v_j|; if mu == 0 (or no element is finite): every slice element is +0, the
  //   exponent written is 0 and v is unchanged. Otherwise:
  //   tau = ceil(log2 mu), from its bit fields (Algorithm 1's tau: the exponent E of mu's
  //       leading bit, mu in [2^E, 2^(E+1)), plus one unless mu == 2^E; a subnormal's leading
  //       bit counts: tau in [-1074, 1024]);
  //   u = 2^(tau - bits), the unit of the slice (Algorithm 1's sigma = 0.75 * 2^(rho + tau) with
  //       rho = 53 - bits has spacing u); the exponent written is tau - bits;
  //   q_j = round_half_even(v_j / u), an integer in [-2^bits, 2^bits]: the slice element,
  //         written exactly (a zero as +0) as binary64, as int8 or in the slice's tensor-core
  //         format (refused with std::invalid_argument before anything is written unless that
  //         format holds every integer of magnitude <= 2^bits exactly: int8 for bits <= 6);
  //   v_j = v_j - q_j u, exact (see below).
  //   With T = tau + 52 - bits and sigma = 1.5 * 2^T (whose spacing is u), binary64 RN gives
  //   them as follows (slice = q_j u, every operation one RN operation):
  //     -1022 <= T <= 1023: slice = (v_j + sigma) - sigma, v_j = v_j - slice;
  //     T < -1022:          q_j u = v_j (u < 2^-1074 divides v_j), v_j = +0;
  //     T > 1023 (sigma would overflow, and q_j u can be 2^1024): w = v_j * 2^-128,
  //       s = 1.5 * 2^(T - 128), slice' = (w + s) - s = q_j u 2^-128, and v_j = (w - slice')
  //       * 2^128 when slice' != 0 (w is then exact); v_j unchanged when slice' == 0.
  // Why it is exact (sigma = 1.5 * 2^T and u = 2^(T - 52)): |v_j| <= mu <= 2^tau <= 2^(T-1) for
  // bits <= 51, so v_j + sigma lies in [2^T, 2^(T+1)] (the upper end only for v_j = 2^(T-1),
  // where the sum is exact), the binade whose spacing is u: the addition rounds v_j to the
  // nearest multiple of u (ties to the even multiple) plus sigma, and subtracting sigma is exact
  // (Sterbenz), giving |slice_j| <= 2^tau. v_j - slice_j is a multiple of min(ulp(v_j), u) of
  // magnitude <= u / 2, and u / 2 <= |v_j| whenever slice_j != 0, so it has at most 53
  // significant bits: exact. On return every |v_j| <= u / 2 = 2^(tau - bits - 1): the next
  // level's tau is at least bits + 1 lower.
  // `exponents` has one element per vector (x.rows for rows, x.cols for columns); the slice has
  // x's shape.
  void split_level(const RealMatrix& x, SplitAxis axis, int bits, const SliceMatrix& slice,
                   const ExponentVector& exponents);

  // Up to `levels` split levels in one step: the same as calling split_level `levels` times on
  // x (which it updates in place), level s = 1, 2, ... writing slices[s - 1] and exponents[s - 1]
  // when s <= slices.size() (later levels update x and store nothing; slices.size() ==
  // exponents.size() <= levels). Returns the number of levels after which x is zero: the
  // smallest s in [1, levels] such that all_zero(x) would be true after s levels, or levels + 1
  // when x is not zero after `levels` levels. A vector whose finite elements are all zero is left
  // unchanged by a level, which gives it +0 slices and exponent 0; so every level after the
  // returned count writes zero slices and changes nothing.
  int split(const RealMatrix& x, SplitAxis axis, int bits, int levels,
            std::span<const SliceMatrix> slices, std::span<const ExponentVector> exponents);

  // True when every finite element of x is +0 or -0 (Inf and NaN elements are ignored).
  bool all_zero(const RealMatrix& x);

  // c = a b in binary64 (a: m x k, b: k x n, c: m x n, all fp64; c must not overlap a or b).
  // Each c_ij is sum_p a_ip b_pj with every product and partial sum rounded to binary64 in an
  // order the backend chooses (fused multiply-adds allowed): the Ozaki scheme calls it only
  // where every partial sum is an integer of magnitude <= 2^53, which every order sums exactly.
  void fp64_gemm(const RealMatrix& a, const RealMatrix& b, const RealMatrix& c);

  // Scaled accumulation of partial products p_0, ..., p_{count-1} (the matrices of `products`,
  // fp32 or fp64, m x n) into dst (fp64, m x n), in that order, relative to the scale `base` (so
  // that terms neither overflow nor underflow when the sum itself is in range). For l = 0, 1, ...:
  //   t_ij = scalbn(double(p_l,ij), (scales[l].rows_i - base.rows_i) + (scales[l].columns_j -
  //          base.columns_j))   (exponent arithmetic in 64-bit integers)
  //   dst_ij = (overwrite and l == 0) ? t_ij : dst_ij + t_ij
  // (double(p_ij) is exact; each sum is one binary64 RN addition, in the order of l, so the
  // result is that of `count` calls with one product each; a backend reads and writes dst once).
  // A NaN result is written as 0x7FF8000000000000. scales.size() == products.count >= 1; dst may
  // not overlap the products.
  void accumulate_scaled(const RealMatrixStack& products, std::span<const OuterExponents> scales,
                         const OuterExponents& base, const RealMatrix& dst, bool overwrite);
  // The same for one product p.
  void accumulate_scaled(const RealMatrix& p, const OuterExponents& scale,
                         const OuterExponents& base, const RealMatrix& dst, bool overwrite) {
    accumulate_scaled({p, 1, 0}, {&scale, 1}, base, dst, overwrite);
  }

  // dst_ij = 2^(scale.rows_i + scale.columns_j) times the exact sum of stack[0]_ij, ...,
  // stack[count-1]_ij rounded once to binary64 in direction d (fp64::round; to nearest: ties to
  // even, the correctly rounded sum that NearSum of Rump, Ogita and Oishi (SISC 31(2), 2009,
  // Alg. 7.3) delivers for unscaled terms; subnormal results rounded once); every backend must
  // give these bits whatever algorithm it uses. A result beyond the largest finite magnitude
  // (after rounding) is fp64::round's overflow (to nearest: Inf of its sign). An exact zero is -0
  // when every term is -0, +0 otherwise. Special terms: any NaN, or both +Inf and
  // -Inf, give the NaN 0x7FF8000000000000; otherwise an Inf term gives that Inf. All fp64; dst
  // may be one of the stack's matrices.
  void exact_sum(const RealMatrixStack& stack, const OuterExponents& scale, const RealMatrix& dst,
                 fp64::Direction d = fp64::Direction::nearest_even);

  // The BLAS epilogue C := alpha op(A) op(B) + beta C for an m x n result, where v (fp64) holds
  // the scheme's value of op(A) op(B), scaled by 2^-(v_scale.rows_i + v_scale.columns_j) when
  // v_scale is given. Without v (k = 0 or alpha = 0) out_ij = +0 when beta == 0 and
  // beta * c_ij otherwise, alpha unused (reference BLAS). With v, for each element:
  //   s = v_ij, or scalbn(v_ij, v_scale.rows_i + v_scale.columns_j) (one rounding) with v_scale;
  //       a zero s is +0 (a BLAS sum starts from +0, so -0 never survives it); s is replaced by
  //       the special sum (below) when `a` and `b` are given and row i of a or column j of b
  //       holds an Inf or NaN;
  //   r = alpha * s (one RN multiplication), a zero r made +0 (as BLAS's C = 0 + alpha * ...);
  //       when beta != 0: r = r + beta * c_ij (the product rounded, then the sum rounded; c is
  //       not read when beta == 0, as in BLAS);
  //   out_ij = r (fp64 out) or r rounded to binary32 in direction d (fp32 out; to nearest even
  //   unless a correctly rounded scheme asks, fp64::narrow_bits, d not to_odd); every NaN is
  //   written as the canonical NaN (0x7FF8000000000000, fp32 0x7FC00000), since IEEE 754 leaves
  //   the payload of a NaN result to the hardware.
  // The special sum of row i of a (m x k) and column j of b (k x n), fp64 or fp32, is what IEEE
  // arithmetic gives for the non-finite products a_ip b_pj: NaN (0x7FF8000000000000) when an
  // operand is NaN, a product is 0 * Inf, or products of both infinite signs occur; otherwise
  // the Inf of the infinite products' sign. out may alias c exactly (same buffer, offset,
  // layout, ld); a, b, c and out may be fp32 or fp64.
  void epilogue(const std::optional<RealMatrix>& v, const std::optional<OuterExponents>& v_scale,
                double alpha, double beta, const std::optional<RealMatrix>& c,
                const std::optional<RealMatrix>& a, const std::optional<RealMatrix>& b,
                const RealMatrix& out, fp64::Direction d = fp64::Direction::nearest_even);

 protected:
  // What each backend implements; arguments are already checked.
  virtual void copy_real_checked(const RealMatrix& src, const RealMatrix& dst) = 0;
  virtual void split_level_checked(const RealMatrix& x, SplitAxis axis, int bits,
                                   const SliceMatrix& slice, const ExponentVector& exponents) = 0;
  virtual int split_checked(const RealMatrix& x, SplitAxis axis, int bits, int levels,
                            std::span<const SliceMatrix> slices,
                            std::span<const ExponentVector> exponents) = 0;
  virtual bool all_zero_checked(const RealMatrix& x) = 0;
  virtual void fp64_gemm_checked(const RealMatrix& a, const RealMatrix& b, const RealMatrix& c) = 0;
  virtual void accumulate_scaled_checked(const RealMatrixStack& products,
                                         std::span<const OuterExponents> scales,
                                         const OuterExponents& base, const RealMatrix& dst,
                                         bool overwrite) = 0;
  virtual void exact_sum_checked(const RealMatrixStack& stack, const OuterExponents& scale,
                                 const RealMatrix& dst, fp64::Direction d) = 0;
  virtual void epilogue_checked(const std::optional<RealMatrix>& v,
                                const std::optional<OuterExponents>& v_scale, double alpha,
                                double beta, const std::optional<RealMatrix>& c,
                                const std::optional<RealMatrix>& a,
                                const std::optional<RealMatrix>& b, const RealMatrix& out,
                                fp64::Direction d) = 0;

 private:
  void check_exponents(const ExponentVector& v, std::int64_t size, const char* name) const;
  void check_scale(const OuterExponents& e, std::int64_t rows, std::int64_t cols,
                   const char* name) const;
  void check_split(const RealMatrix& x, SplitAxis axis, int bits, const SliceMatrix& slice,
                   const ExponentVector& exponents) const;
};

}  // namespace tcemu
