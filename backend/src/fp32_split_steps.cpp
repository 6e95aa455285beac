// The checks of the fp32 split steps (fp32_split_steps.hpp); the arithmetic is each backend's.
#include <stdexcept>
#include <string>

#include <tcemu/backend/fp32_split_elements.hpp>
#include <tcemu/backend/fp32_split_steps.hpp>
#include <tcemu/emulator/floating_point_scope.hpp>

#include "step_checks.hpp"

namespace tcemu {

void Fp32SplitSteps::check_fp32(const BufferMatrix& m, const char* name_of) const {
  check(m, name_of);
  if (!(m.format == formats::fp32)) {
    throw std::invalid_argument(name() + ": matrix " + name_of + " holds " +
                                std::string(m.format.name) + ", fp32 expected");
  }
}

Fp32Summary Fp32SplitSteps::summarize_fp32(const BufferMatrix& x) {
  const FloatingPointScope scope;
  check_fp32(x, "x");
  return summarize_fp32_checked(x);
}

std::int64_t Fp32SplitSteps::split_fp32(const BufferMatrix& x, const BufferMatrix& part,
                                        const std::optional<BufferMatrix>& residual,
                                        Rounding rounding, int scale_exponent) {
  const FloatingPointScope scope;
  check_fp32(x, "x");
  check(part, "part");
  detail::same_shape(name(), part, "split_fp32: part", x.rows, x.cols);
  if (!is_split_format(part.format)) {
    throw std::invalid_argument(name() + ": split_fp32: part format " +
                                std::string(part.format.name) +
                                " is not a split format (fp16, bf16, tf32, e5m2)");
  }
  if (residual) {
    check_fp32(*residual, "residual");
    detail::same_shape(name(), *residual, "split_fp32: residual", x.rows, x.cols);
  }
  return split_fp32_checked(x, part, residual, rounding, scale_exponent);
}

void Fp32SplitSteps::combine_fp32(const BufferMatrix& x, const std::optional<BufferMatrix>& y,
                                  const std::optional<BufferMatrix>& c, const BufferMatrix& d,
                                  const CombineOptions& options) {
  const FloatingPointScope scope;
  check_fp32(x, "x");
  check_fp32(d, "d");
  detail::same_shape(name(), d, "combine_fp32: d", x.rows, x.cols);
  if (y) {
    check_fp32(*y, "y");
    detail::same_shape(name(), *y, "combine_fp32: y", x.rows, x.cols);
  }
  if (options.beta != 0.0f && !c) {
    throw std::invalid_argument(name() + ": combine_fp32: beta != 0 needs c");
  }
  if (c) {
    check_fp32(*c, "c");
    detail::same_shape(name(), *c, "combine_fp32: c", x.rows, x.cols);
  }
  combine_fp32_checked(x, y, c, d, options);
}

void Fp32SplitSteps::propagate_nonfinite_fp32(const BufferMatrix& a, const BufferMatrix& b,
                                              const BufferMatrix& d) {
  const FloatingPointScope scope;
  check_fp32(a, "A");
  check_fp32(b, "B");
  check_fp32(d, "D");
  if (a.cols != b.rows || d.rows != a.rows || d.cols != b.cols) {
    throw std::invalid_argument(name() + ": propagate_nonfinite_fp32: A " + std::to_string(a.rows) +
                                " x " + std::to_string(a.cols) + ", B " + std::to_string(b.rows) +
                                " x " + std::to_string(b.cols) + ", D " + std::to_string(d.rows) +
                                " x " + std::to_string(d.cols));
  }
  propagate_nonfinite_fp32_checked(a, b, d);
}

}  // namespace tcemu
