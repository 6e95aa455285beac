// The fp32 split steps of a backend (backend.hpp): the whole-matrix fp32 steps of the
// error-corrected SGEMM schemes (markidis/). Their checks are in fp32_split_steps.cpp, the element
// functions every backend applies in fp32_split_elements.hpp and nonfinite_products.hpp; the host
// implementations in host/src/fp32_split_steps.cpp, the GPU's in gpu/src/steps/fp32_split_steps.cu.
#pragma once

#include <cstdint>
#include <optional>

#include <tcemu/backend/buffer_matrix.hpp>
#include <tcemu/backend/memory.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu {

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
class Fp32SplitSteps : public virtual MemorySpace {
 public:
  // Whole-matrix steps on fp32 matrices (every element an fp32 bit pattern, format fp32). Every
  // backend gives the same bits: the arithmetic below is the specification; the host backends
  // implement it with the element functions of fp32_split_elements.hpp. "RN" is IEEE 754 binary32
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
  // part.format must satisfy is_split_format (fp32_split_elements.hpp): fp16, bf16, tf32 or e5m2.
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

 protected:
  // What each backend implements; arguments are already checked.
  virtual Fp32Summary summarize_fp32_checked(const BufferMatrix& x) = 0;
  virtual std::int64_t split_fp32_checked(const BufferMatrix& x, const BufferMatrix& part,
                                          const std::optional<BufferMatrix>& residual,
                                          Rounding rounding, int scale_exponent) = 0;
  virtual void combine_fp32_checked(const BufferMatrix& x, const std::optional<BufferMatrix>& y,
                                    const std::optional<BufferMatrix>& c, const BufferMatrix& d,
                                    const CombineOptions& options) = 0;
  virtual void propagate_nonfinite_fp32_checked(const BufferMatrix& a, const BufferMatrix& b,
                                                const BufferMatrix& d) = 0;

 private:
  void check_fp32(const BufferMatrix& m, const char* name) const;  // check() and format fp32
};

}  // namespace tcemu
