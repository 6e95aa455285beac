// The complex steps of a backend (backend.hpp): what turns a complex GEMM into one real product
// and back. Their checks are in complex_steps.cpp, the element functions every backend applies in
// complex_elements.hpp; the host implementations in host/src/complex_steps.cpp, the GPU's in
// gpu/src/steps/complex_steps.cu.
//
// The real form. With op(A) = Ar + i Ai (m x k) and op(B) = Br + i Bi (k x n),
//   A2 = [Ar  Ai]  (m x 2k),   B2 = [ Br  Bi ]  (2k x 2n),   A2 B2 = [Re  Im]  (m x 2n),
//                                   [-Bi  Br ]
// so Re_ij = sum_p (Ar_ip Br_pj - Ai_ip Bi_pj) is row i of A2 times column j of B2 and
// Im_ij = sum_p (Ar_ip Bi_pj + Ai_ip Br_pj) row i of A2 times column n + j: each part of the
// complex product is ONE real inner product of length 2k whose terms are exact products of the
// operands' parts (a sign flip is exact). Whatever a scheme promises for one element of a real
// product (the correctly rounded sum in any direction, dp's bound, the same bits on every
// backend) it therefore promises for each part of the complex product.
#pragma once

#include <complex>
#include <optional>

#include <tcemu/backend/buffer_matrix.hpp>
#include <tcemu/backend/memory.hpp>
#include <tcemu/emulator/fp64_bits.hpp>

namespace tcemu {

// The parts of a complex matrix as a real matrix of part_format(x.format), on the same bytes:
// column-major x (rows x cols, ld) is 2 rows x cols with ld 2 ld, Re x_ij at (2i, j) and Im at
// (2i + 1, j); row-major x is rows x 2 cols, Re at (i, 2j), Im at (i, 2j + 1).
constexpr RealMatrix complex_parts(const ComplexMatrix& x) {
  const bool row_major = x.layout == Layout::row_major;
  return {x.buffer,
          x.offset_bytes,
          part_format(x.format),
          row_major ? x.rows : 2 * x.rows,
          row_major ? 2 * x.cols : x.cols,
          2 * x.ld,
          x.layout};
}

class ComplexSteps : public virtual MemorySpace {
 public:
  // The real form of x (rows x cols), or of its conjugate when `conjugate`, into dst, of
  // part_format(x.format): dst is rows x 2 cols (A2 above: x is op(A)) or 2 rows x 2 cols (B2: x
  // is op(B)). In blocks (u, v) of x's shape, u, v in {0, 1}:
  //   dst = Re x where u == v, else Im x with its sign flipped where (v == 0) != conjugate
  // (a flip of the sign bit, exact for every value, NaN included). dst must not overlap x.
  void complex_real_form(const ComplexMatrix& x, bool conjugate, const RealMatrix& dst);

  // The complex BLAS epilogue C := alpha S + beta C for C m x n, where v (m x 2n, fp64 or fp32)
  // holds S = v(:, 0:n) + i v(:, n:2n), computed in v's format T (complex_elements.hpp,
  // complex_epilogue): a real alpha (imaginary part zero) scales each part by one rounded
  // multiplication, as the real epilogue (Backend::epilogue) scales the real form; any other
  // alpha is the complex product with each product and the difference or sum rounded once;
  // a zero part made +0; when beta != 0, beta C likewise (real beta: one multiplication per
  // part) is added, one rounded addition per part (C is not read when beta == 0). Without v
  // (k = 0 or alpha = 0): C := +0 or beta C, computed in `arithmetic`. Results are rounded to
  // C's part format in direction d (to nearest even unless a correctly rounded scheme asks,
  // fp64::narrow_bits, d not to_odd; no rounding for T = that format), every NaN canonical. With
  // T = fp32, alpha and beta must be binary32 values and C c64; v is given in `arithmetic`.
  void complex_epilogue(const std::optional<RealMatrix>& v, Real arithmetic,
                        std::complex<double> alpha, std::complex<double> beta,
                        const ComplexMatrix& c, fp64::Direction d = fp64::Direction::nearest_even);

 protected:
  // What each backend implements; arguments are already checked.
  virtual void complex_real_form_checked(const ComplexMatrix& x, bool conjugate,
                                         const RealMatrix& dst) = 0;
  virtual void complex_epilogue_checked(const std::optional<RealMatrix>& v, Real arithmetic,
                                        std::complex<double> alpha, std::complex<double> beta,
                                        const ComplexMatrix& c, fp64::Direction d) = 0;
};

}  // namespace tcemu
