// The checks of the inner-product step (inner_product_steps.hpp); the arithmetic is each
// backend's.
#include <string>

#include <tcemu/backend/inner_product_steps.hpp>
#include <tcemu/emulator/floating_point_scope.hpp>

#include "step_checks.hpp"

namespace tcemu {

using detail::refuse;
using detail::same_shape;

void InnerProductSteps::inner_products(InnerProduct method, const RealMatrix& a,
                                       const RealMatrix& b, double alpha, double beta,
                                       const RealMatrix& c) {
  const FloatingPointScope scope;
  check(a, "A");
  check(b, "B");
  check(c, "C");
  if (b.format != a.format || c.format != a.format) {
    refuse(name(), "inner_products: A, B and C must have one type (all fp64 or all fp32)");
  }
  if (a.cols < 1) refuse(name(), "inner_products: k = " + std::to_string(a.cols) + " must be >= 1");
  same_shape(name(), b, "B", a.cols, b.cols);
  same_shape(name(), c, "C", a.rows, b.cols);
  if (a.format == Real::fp32 && (static_cast<double>(static_cast<float>(alpha)) != alpha ||
                                 static_cast<double>(static_cast<float>(beta)) != beta)) {
    refuse(name(), "inner_products: fp32 operands need binary32 alpha and beta");
  }
  inner_products_checked(method, a, b, alpha, beta, c);
}

}  // namespace tcemu
