// The checks of the integer GEMM step (integer_gemm_steps.hpp), once for every backend.
#include <string>

#include <tcemu/backend/integer_gemm_steps.hpp>
#include <tcemu/emulator/floating_point_scope.hpp>

#include "step_checks.hpp"

namespace tcemu {

void IntegerGemmSteps::integer_gemm(const IntegerMatrix& a, const IntegerMatrix& b,
                                    const RealMatrix& c) {
  const FloatingPointScope scope;
  using detail::refuse;
  check(a, "A");
  check(b, "B");
  check(c, "C");
  if (a.format != Integer::s8 || b.format != Integer::s8) {
    refuse(name(), "integer_gemm: A and B must hold int8 (s8)");
  }
  if (c.format != Real::fp64) refuse(name(), "integer_gemm: C must be fp64");
  if (a.layout != Layout::row_major || b.layout != Layout::column_major ||
      c.layout != Layout::column_major) {
    refuse(name(),
           "integer_gemm: A must be row major, B and C column major (k contiguous in A and B)");
  }
  detail::same_shape(name(), b, "B", a.cols, b.cols);
  detail::same_shape(name(), c, "C", a.rows, b.cols);
  if (a.cols > kIntegerGemmMaxK) {
    refuse(name(), "integer_gemm: k = " + std::to_string(a.cols) +
                       " could overflow int32 (at most " + std::to_string(kIntegerGemmMaxK) + ")");
  }
  if (c.rows == 0 || c.cols == 0) return;
  integer_gemm_checked(a, b, c);
}

}  // namespace tcemu
