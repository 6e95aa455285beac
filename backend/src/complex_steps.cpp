// The checks of the complex steps (complex_steps.hpp); the arithmetic is each backend's.
#include <string>

#include <tcemu/backend/complex_steps.hpp>
#include <tcemu/emulator/floating_point_scope.hpp>

#include "step_checks.hpp"

namespace tcemu {

using detail::refuse;
using detail::same_shape;

namespace {

bool binary32(double x) {
  return static_cast<double>(static_cast<float>(x)) == x || x != x;
}

}  // namespace

void ComplexSteps::complex_real_form(const ComplexMatrix& x, bool conjugate,
                                     const RealMatrix& dst) {
  const FloatingPointScope scope;
  check(x, "X");
  check(dst, "real form");
  if (dst.format != part_format(x.format)) {
    refuse(name(), "complex_real_form: the real form must have the type of X's parts");
  }
  if (dst.rows != x.rows) same_shape(name(), dst, "the real form", 2 * x.rows, 2 * x.cols);
  same_shape(name(), dst, "the real form", dst.rows, 2 * x.cols);
  complex_real_form_checked(x, conjugate, dst);
}

void ComplexSteps::complex_epilogue(const std::optional<RealMatrix>& v, Real arithmetic,
                                    std::complex<double> alpha, std::complex<double> beta,
                                    const ComplexMatrix& c, fp64::Direction d) {
  const FloatingPointScope scope;
  check(c, "C");
  if (d == fp64::Direction::to_odd) refuse(name(), "complex_epilogue: no output rounds to odd");
  if (v) {
    check(*v, "V");
    same_shape(name(), *v, "V", c.rows, 2 * c.cols);
    if (v->format != arithmetic) refuse(name(), "complex_epilogue: V must hold `arithmetic`");
  }
  if (arithmetic == Real::fp32 &&
      (c.format != Complex::c64 || !binary32(alpha.real()) || !binary32(alpha.imag()) ||
       !binary32(beta.real()) || !binary32(beta.imag()))) {
    refuse(name(), "complex_epilogue: fp32 arithmetic needs a c64 C and binary32 alpha and beta");
  }
  complex_epilogue_checked(v, arithmetic, alpha, beta, c, d);
}

}  // namespace tcemu
