// The backend interface of DESIGN.md: what a scheme (ozaki/, markidis/) asks of the machine it
// runs on. A backend owns its memory; a scheme allocates buffers there once, moves its inputs in,
// runs the steps it needs on them and moves the result out, so a GPU backend never copies
// matrices back to the host between steps. The control flow of an algorithm lives in the scheme,
// the arithmetic of each step in the backend.
//
// The steps: format conversion and the low-precision GEMM through a datapath (every tensor-core
// scheme), and the steps of the Ozaki scheme (ozaki/) on binary64/binary32 matrices: copy and
// widen, one split level, a zero test, an FP64 GEMM, scaled accumulation of a product, the
// correctly rounded sum of a stack of matrices and the BLAS epilogue. Each step works on whole
// matrices in the backend's buffers, and its result is defined bit for bit below (the order of
// every rounded operation is stated), so that every backend computes the same bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/matrix.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu {

class Backend;

// Storage owned by a backend, in its memory space. Move-only; freed by the backend that made it.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Buffer&& other) noexcept { *this = std::move(other); }
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  std::size_t bytes() const { return bytes_; }
  const Backend* owner() const { return owner_; }
  // The address in the owner's memory space: only the owning backend may dereference it.
  void* address() const { return address_; }

 private:
  friend class Backend;
  Buffer(Backend* owner, void* address, std::size_t bytes)
      : owner_(owner), address_(address), bytes_(bytes) {}
  Backend* owner_ = nullptr;
  void* address_ = nullptr;
  std::size_t bytes_ = 0;
};

// A matrix of bit patterns of `format` inside a buffer, described as BLAS describes one.
struct BufferMatrix {
  const Buffer* buffer;
  std::size_t offset_bytes;
  FloatFormat format;
  std::int64_t rows;
  std::int64_t cols;
  std::int64_t ld;
  Layout layout;
};

// ===== Error-corrected SGEMM steps (markidis/): types ==========================================

// What summarize_fp32 finds in an fp32 matrix.
struct Fp32Summary {
  // The largest magnitude among the finite elements, as the fp32 bits of |x| (sign clear); 0 when
  // no element is finite and nonzero. For finite x the bits of |x| order as the values do.
  std::uint32_t max_abs_bits = 0;
  std::int64_t nan_count = 0;
  std::int64_t inf_count = 0;
};

// The fp32 operations of combine_fp32 (see there).
struct CombineOptions {
  int y_exponent = 0;      // y enters as y * 2^y_exponent
  int scale_exponent = 0;  // the sum is multiplied by 2^scale_exponent
  float alpha = 1.0f;
  float beta = 0.0f;
};
// ===== end of the markidis/ types ================================================================
// IEEE 754 binary formats of the "high-precision" matrices of the Ozaki steps (the user's
// DGEMM/SGEMM operands, remainders, partial products, sums). Elements are the host's native
// little-endian double / float bit patterns.
enum class Real { fp32, fp64 };

constexpr std::size_t real_bytes(Real r) {
  return r == Real::fp64 ? 8 : 4;
}

// A matrix of `type` elements inside a buffer, described as BLAS describes one.
struct RealMatrix {
  const Buffer* buffer;
  std::size_t offset_bytes;
  Real type;
  std::int64_t rows;
  std::int64_t cols;
  std::int64_t ld;
  Layout layout;
};

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

// How Backend::inner_products forms each inner product.
enum class InnerProduct {
  dot2,   // Dot2 of Ogita, Rump and Oishi (dot2.hpp): as if in twice the working precision
  exact,  // the exact sum rounded once (exact_dot.hpp): correctly rounded, ExBLAS-style
};

// Which vectors of a matrix a split level works on: each row (A of A B, split along k) or each
// column (B).
enum class SplitAxis { rows, columns };

// Where a split level writes its slice: a matrix of a tensor-core input format (fp16, bf16, tf32,
// ...) or a binary64 matrix (for products by an FP64 GEMM).
using SliceMatrix = std::variant<BufferMatrix, RealMatrix>;

// One product of Backend::mma_gemm_batch: D = alpha * A B.
struct GemmProduct {
  BufferMatrix a, b, d;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;

  // `bytes` of storage in the backend's memory. Throws std::runtime_error (out of memory) with
  // the size asked for.
  Buffer allocate(std::size_t bytes);
  // Copies between host memory and a buffer; throws std::out_of_range past the buffer's end.
  void copy_in(const void* host, Buffer& buffer, std::size_t bytes, std::size_t offset = 0);
  void copy_out(const Buffer& buffer, void* host, std::size_t bytes, std::size_t offset = 0) const;

  // D = alpha * A B + beta * C through `datapath` (the semantics of emulated_gemm, gemm.hpp).
  // Every matrix lies in a buffer of this backend; a view past a buffer's end is refused.
  void mma_gemm(const Datapath& datapath, const GemmOptions& options, const BufferMatrix& a,
                const BufferMatrix& b, const std::optional<BufferMatrix>& c, const BufferMatrix& d);

  // The products of `batch` through `datapath`, as that many mma_gemm calls with these options
  // and no C: D_i = alpha * A_i B_i. The options must not read C (beta = 0, epilogue mode); every
  // product has the first's shapes, leading dimensions, layouts and formats; no D overlaps
  // another D or any A or B. Each is refused with std::invalid_argument naming the products. A
  // backend may run the products in any order or at once (the GPU's cuBLAS engine issues small
  // ones as one batched call, gpu_backend.hpp).
  void mma_gemm_batch(const Datapath& datapath, const GemmOptions& options,
                      std::span<const GemmProduct> batch);

  // dst = src converted elementwise from src.format to dst.format (convert.hpp), same shape.
  void convert(const BufferMatrix& src, const BufferMatrix& dst, Rounding rounding);

  // ===== Error-corrected SGEMM steps (markidis/) ================================================
  // Whole-matrix steps on fp32 matrices (every element an fp32 bit pattern, format fp32). Every
  // backend gives the same bits: the arithmetic below is the specification; the emulator backend
  // implements it with the element functions of residual_split.hpp. "RN" is IEEE 754 binary32
  // round to nearest even with subnormals (no flush to zero; CUDA: the __f*_rn intrinsics, no
  // .ftz), and every NaN an operation produces is 0x7FFFFFFF. Matrices of one call have the same
  // shape (std::invalid_argument otherwise); an output may alias an input only exactly (same
  // buffer, offset, ld and layout); partial overlap is undefined.

  // Largest finite magnitude and the counts of NaN and Inf elements of x (Fp32Summary). A
  // reduction: its result does not depend on the order in which elements are visited.
  Fp32Summary summarize_fp32(const BufferMatrix& x);

  // One step of an error-free split. For each element x (fp32) with e = scale_exponent:
  //   part     = the real value x * 2^e rounded once to part.format with `rounding`
  //              (IEEE overflow rule: RN gives +-Inf, RZ +-max finite);
  //   residual = x - part * 2^-e, which is exact in fp32 (proof below), as fp32 bits; +0 when it
  //              is zero.
  // Special elements: NaN gives part.format's canonical quiet NaN (sign clear, all fraction bits
  // set) and residual +0; +-Inf gives part +-Inf and residual +0; +-0 gives part +-0 and residual
  // +0. An element overflows when the rounding of x * 2^e with an unbounded exponent range reaches
  // 2^(part.format.max_exponent() + 1) in magnitude; it gets the IEEE part and residual +0, and the
  // step returns how many elements overflowed (a scheme refuses such a split or rescales).
  // `residual` may be omitted (the last part of a split) and may alias x exactly (in place).
  // part.format must satisfy is_split_format (residual_split.hpp): fp16, bf16, tf32 or e5m2.
  //
  // Why the residual is exact. Let R = x (finite fp32, nonzero), u = 2^lsb its quantum (the weight
  // of its last significand bit: 2^(exponent - 23) for a normal, 2^-149 for a subnormal), so R is
  // a multiple of u with |R| < 2^24 u. R' = R 2^e is a multiple of U = u 2^e; q = round(R') in F.
  // (1) q is a multiple of U: if F's spacing v at |R'| is at most U, R' (fewer than 25 significant
  //     bits at spacing U, not overflowing) is in F and q = R'; otherwise v > U, both powers of
  //     two, and every F number of magnitude >= 2^floor(log2 |R'|) (where q lies, rounding being
  //     monotone and that power of two in F), or every subnormal of F, is a multiple of v.
  // (2) |R' - q| <= |R'|: RZ puts q between 0 and R'; RN picks the F number nearest R', and 0 is
  //     in F.
  // So R - q 2^-e = (R' - q) 2^-e is a multiple of u no larger than |R| < 2^24 u: an fp32 number.
  // On a GPU for e >= 0: part = cvt.rn/rz(x * 2^e) (the fp32 product is exact unless it overflows
  // fp32, which overflows the part as well), residual = x - float(part) * 2^-e, both fp32
  // operations exact by the argument above. For e < 0 the fp32 product x * 2^e is rounded when it
  // falls below 2^-126, and rounding that again can differ from one rounding of the exact value:
  // there the part must be rounded from the exact value (integer arithmetic, as the emulator does).
  std::int64_t split_fp32(const BufferMatrix& x, const BufferMatrix& part,
                          const std::optional<BufferMatrix>& residual, Rounding rounding,
                          int scale_exponent);

  // The elementwise fp32 combination of accumulators and the BLAS epilogue. For each element,
  // with ey = options.y_exponent, ed = options.scale_exponent, in this order:
  //   t = RN(y * 2^ey)         the real product rounded once (ldexpf); skipped when y is omitted
  //   s = RN(x + t)            s = x when y is omitted
  //   v = RN(s * 2^ed)         the real product rounded once (ldexpf)
  //   d = RN(alpha * v)                           when beta == 0 (C is not read, as in BLAS)
  //   d = RN(fma(alpha, v, RN(beta * c)))         otherwise (one rounding of alpha v + RN(beta c))
  // NaN and Inf follow IEEE 754 through these operations (0 * Inf and Inf - Inf give NaN).
  // c is required when beta != 0. d may alias x, y or c exactly.
  void combine_fp32(const BufferMatrix& x, const std::optional<BufferMatrix>& y,
                    const std::optional<BufferMatrix>& c, const BufferMatrix& d,
                    const CombineOptions& options);

  // Gives d the special value SGEMM's A B has where A (m x k) or B (k x n) holds a NaN or an Inf.
  // For each (i, j), let K = { p : a_ip or b_pj is NaN or Inf }. If K is empty d_ij is untouched.
  // Otherwise d_ij = 0x7FFFFFFF (NaN) when some p in K has a NaN factor, or a factor +-Inf with
  // the other factor zero, or when the products of K (each +-Inf, sign the XOR of the factors'
  // signs) include both signs; otherwise the Inf of that sign. The finite products are ignored:
  // this is the IEEE value of the exact sum; an SGEMM whose finite partial sums overflow can
  // differ, in its own summation order. A scheme runs it on its product before the epilogue.
  void propagate_nonfinite_fp32(const BufferMatrix& a, const BufferMatrix& b,
                                const BufferMatrix& d);
  // ===== end of the markidis/ steps =============================================================
  // ---- Steps of the Ozaki scheme (ozaki/) --------------------------------------------------
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
  //   E = the exponent of mu's leading bit, from its bit fields (mu in [2^E, 2^(E+1)); a
  //       subnormal's leading bit counts: E in [-1074, 1023]);
  //   u = 2^(E + 1 - bits), the unit of the slice; the exponent written is E + 1 - bits;
  //   q_j = round_half_even(v_j / u), an integer in [-2^bits, 2^bits]: the slice element,
  //         written exactly (a zero as +0) as binary64 or in the slice's tensor-core format
  //         (refused with std::invalid_argument before anything is written unless that format
  //         holds every integer of magnitude <= 2^bits exactly);
  //   v_j = v_j - q_j u, exact (see below).
  //   With T = E + 53 - bits and sigma = 1.5 * 2^T (whose spacing is u), binary64 RN gives them
  //   as follows (slice = q_j u, every operation one RN operation):
  //     -1022 <= T <= 1023: slice = (v_j + sigma) - sigma, v_j = v_j - slice;
  //     T < -1022:          q_j u = v_j (u < 2^-1074 divides v_j), v_j = +0;
  //     T > 1023 (sigma would overflow, and q_j u can be 2^1024): w = v_j * 2^-128,
  //       s = 1.5 * 2^(T - 128), slice' = (w + s) - s = q_j u 2^-128, and v_j = (w - slice')
  //       * 2^128 when slice' != 0 (w is then exact); v_j unchanged when slice' == 0.
  // Why it is exact (T = E + 53 - bits, so sigma = 1.5 * 2^T and u = 2^(T - 52)): |v_j| <
  // 2^(E+1) <= 2^(T-1) for bits <= 51, so v_j + sigma lies in [2^T, 2^(T+1)), the binade whose
  // spacing is u: the addition rounds v_j to the nearest multiple of u (ties to the even
  // multiple) plus sigma, and subtracting sigma is exact (both in one binade, Sterbenz), giving
  // |slice_j| <= 2^(E+1). v_j - slice_j is a multiple of min(ulp(v_j), u) of magnitude <= u / 2,
  // and u / 2 <= |v_j| whenever slice_j != 0, so it has at most 53 significant bits: exact.
  // On return every |v_j| <= u / 2 = 2^(E - bits): the next level's E is at least `bits` lower.
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
  // where every partial sum is an integer of magnitude < 2^53, which every order sums exactly.
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

  // dst_ij = the binary64 number nearest to 2^(scale.rows_i + scale.columns_j) times the exact
  // sum of stack[0]_ij, ..., stack[count-1]_ij (ties to even; subnormal results rounded once),
  // the correctly rounded sum that NearSum of Rump, Ogita and Oishi (SISC 31(2), 2009, Alg. 7.3)
  // delivers for unscaled terms; every backend must give these bits whatever algorithm it uses.
  // A result beyond the largest finite magnitude (after rounding) is Inf of its sign. An exact
  // zero is -0 when every term is -0, +0 otherwise. Special terms: any NaN, or both +Inf and
  // -Inf, give the NaN 0x7FF8000000000000; otherwise an Inf term gives that Inf. All fp64; dst
  // may be one of the stack's matrices.
  void exact_sum(const RealMatrixStack& stack, const OuterExponents& scale, const RealMatrix& dst);

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
  //   out_ij = r (fp64 out) or r rounded to nearest even to binary32 (fp32 out); every NaN is
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
                const RealMatrix& out);

  // Throws as the steps do when `m` is not a view of this backend's memory: a buffer of another
  // backend (std::invalid_argument), a negative dimension or ld too small (std::invalid_argument),
  // an end past its buffer (std::out_of_range); `name` names it in the message.
  void check(const RealMatrix& m, const char* name) const;

  // ---- Step of the accurate inner products (accurate/) -------------------------------------
  // c_ij := blas_epilogue(alpha, s_ij, beta, c_ij) (blas_epilogue.hpp) for every element of c
  // (m x n), where s_ij is the inner product of row i of a (m x k, k >= 1) and column j of b
  // (k x n) by `method`, in the arithmetic of their type: a, b and c are all fp64 or all fp32
  // (then alpha and beta must be binary32 values). exact: the exact sum of the exact products
  // rounded once to that type (exact_dot.hpp), the same bits whatever the order. dot2: element
  // (i, j) sums its terms in k order, except a 1 x 1 result (a DOT), which sums in the lanes of
  // dot2.hpp; every backend follows that order and gives the same bits. c must not overlap a or b.
  void inner_products(InnerProduct method, const RealMatrix& a, const RealMatrix& b, double alpha,
                      double beta, const RealMatrix& c);

  // Returns when every step issued so far has finished (for timing; steps that return values
  // to the host finish before they return).
  void synchronize() { synchronize_checked(); }

 protected:
  // What each backend implements; arguments are already checked.
  virtual void* allocate_bytes(std::size_t bytes) = 0;
  virtual void free_bytes(void* address) noexcept = 0;
  virtual void copy_in_bytes(const void* host, void* address, std::size_t bytes) = 0;
  virtual void copy_out_bytes(const void* address, void* host, std::size_t bytes) const = 0;
  virtual void mma_gemm_checked(const Datapath& datapath, const GemmOptions& options,
                                const BufferMatrix& a, const BufferMatrix& b,
                                const std::optional<BufferMatrix>& c, const BufferMatrix& d) = 0;
  // One mma_gemm_checked per product, in order, unless a backend has a better way.
  virtual void mma_gemm_batch_checked(const Datapath& datapath, const GemmOptions& options,
                                      std::span<const GemmProduct> batch);
  virtual void convert_checked(const BufferMatrix& src, const BufferMatrix& dst,
                               Rounding rounding) = 0;
  // markidis/ steps
  virtual Fp32Summary summarize_fp32_checked(const BufferMatrix& x) = 0;
  virtual std::int64_t split_fp32_checked(const BufferMatrix& x, const BufferMatrix& part,
                                          const std::optional<BufferMatrix>& residual,
                                          Rounding rounding, int scale_exponent) = 0;
  virtual void combine_fp32_checked(const BufferMatrix& x, const std::optional<BufferMatrix>& y,
                                    const std::optional<BufferMatrix>& c, const BufferMatrix& d,
                                    const CombineOptions& options) = 0;
  virtual void propagate_nonfinite_fp32_checked(const BufferMatrix& a, const BufferMatrix& b,
                                                const BufferMatrix& d) = 0;
  // end of the markidis/ steps
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
                                 const RealMatrix& dst) = 0;
  virtual void epilogue_checked(const std::optional<RealMatrix>& v,
                                const std::optional<OuterExponents>& v_scale, double alpha,
                                double beta, const std::optional<RealMatrix>& c,
                                const std::optional<RealMatrix>& a,
                                const std::optional<RealMatrix>& b, const RealMatrix& out) = 0;
  virtual void inner_products_checked(InnerProduct method, const RealMatrix& a, const RealMatrix& b,
                                      double alpha, double beta, const RealMatrix& c) = 0;
  virtual void synchronize_checked() = 0;

 private:
  friend class Buffer;
  void check(const BufferMatrix& m, const char* name) const;
  void check_fp32(const BufferMatrix& m, const char* name) const;  // check() and format fp32
  void check(const ExponentVector& v, std::int64_t size, const char* name) const;
  void check(const OuterExponents& e, std::int64_t rows, std::int64_t cols, const char* name) const;
  void check_split(const RealMatrix& x, SplitAxis axis, int bits, const SliceMatrix& slice,
                   const ExponentVector& exponents) const;
};

// The CPU backend: host memory, the emulated GEMM (gemm.hpp) and host implementations of the
// Ozaki steps, on `threads` threads (0: every hardware thread). Results do not depend on the
// thread count.
std::unique_ptr<Backend> make_emulator_backend(int threads = 0);

// The same host backend under the name "cpu64": the OzBLAS-style DGEMM-DP-CR of Mukunoki et al.
// runs the Ozaki scheme on it with binary64 slices and products by fp64_gemm (a blocked,
// vectorised, multithreaded FP64 GEMM).
std::unique_ptr<Backend> make_cpu64_backend(int threads = 0);

}  // namespace tcemu
