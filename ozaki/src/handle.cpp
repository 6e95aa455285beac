#include <tcemu/ozaki/handle.hpp>

#include <complex>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>

#include <tcemu/backend/complex_product.hpp>
#include <tcemu/emulator/floating_point_scope.hpp>
#include <tcemu/ozaki/split_rule.hpp>

#include "crt_scheme.hpp"
#include "scheme.hpp"

namespace tcemu::ozaki {
namespace {

std::string scalar_text(std::complex<double> x) {
  if (x.imag() == 0) return std::to_string(x.real());
  return "(" + std::to_string(x.real()) + ", " + std::to_string(x.imag()) + ")";
}

// Refuses a directed rounding (Options::rounding) for anything but C := A B (a complex
// product's alpha and beta are applied after the real form's product, which runs with 1 and 0:
// they are checked here too).
void check_rounding(const Options& options, const char* routine, std::complex<double> alpha,
                    std::complex<double> beta) {
  if (options.rounding == fp64::Direction::nearest_even) return;
  if (alpha != 1.0 || beta != 0.0) {
    throw std::invalid_argument(std::string(routine) + ": rounding " +
                                rounding_name(options.rounding) +
                                " is for C := A B (alpha = 1, beta = 0), got alpha " +
                                scalar_text(alpha) + ", beta " + scalar_text(beta));
  }
}

// The rounding of a product whose C (or, complex, whose C's parts) is binary32 when `fp32`: the
// scheme's options, and the direction of the epilogue's rounding to binary32.
struct Rounding {
  Options scheme;
  fp64::Direction output = fp64::Direction::nearest_even;
};
// Mode cr with C := A B in binary32: the scheme rounds the exact product to odd in binary64 and
// the epilogue rounds that, once, to binary32 in Options::rounding's direction, which is the
// exact product correctly rounded (fp64::Direction::to_odd: RD_24(RO_53(x)) = RD_24(x); the cr
// schemes apply no scaling after their rounding: v_scale is not given). With any other alpha or
// beta (to nearest only, check_rounding) the scheme's binary64 product is correctly rounded to
// nearest and the epilogue applies alpha and beta in binary64, then rounds to nearest binary32.
Rounding rounding_for(const Options& options, bool fp32, std::complex<double> alpha,
                      std::complex<double> beta) {
  Rounding r{options};
  if (options.mode == Mode::cr && fp32 && alpha == 1.0 && beta == 0.0) {
    r.scheme.rounding = fp64::Direction::to_odd;
    r.output = options.rounding;
  }
  return r;
}

// Runs `problem` by the scheme the products ask for: Ozaki scheme II for CrtProducts, scheme I
// (slices) for the others. `alpha` and `beta` are the call's (a complex call's, whose real form
// runs with 1 and 0); the binary32 output's direction goes into the problem.
void run_chosen_scheme(Backend& backend, const Products& products, const Options& options,
                       Buffer& workspace, detail::Problem problem, std::complex<double> alpha,
                       std::complex<double> beta, Report& report) {
  check_rounding(options, "ozaki", alpha, beta);
  const Rounding r = rounding_for(options, problem.input_precision == 24, alpha, beta);
  problem.output_rounding = r.output;
  if (std::holds_alternative<CrtProducts>(products)) {
    detail::run_crt_scheme(backend, r.scheme, workspace, problem, report);
  } else {
    detail::run_scheme(backend, products, r.scheme, workspace, problem, report);
  }
}

}  // namespace

Handle::Handle(Backend& backend, Products products, Options options)
    : BlasRoutines(backend), products_(std::move(products)), options_(options) {
  const FloatingPointScope scope;
  exact_product_bits(products_);  // refuses products that cannot be exact
  if (options_.mode == Mode::tunable && options_.splits < 1) {
    throw std::invalid_argument("ozaki: tunable mode needs splits >= 1, got " +
                                std::to_string(options_.splits));
  }
  if (options_.rounding == fp64::Direction::to_odd) {
    throw std::invalid_argument("ozaki: rounding to odd is internal (fp64::Direction::to_odd)");
  }
  if (options_.rounding != fp64::Direction::nearest_even && options_.mode != Mode::cr) {
    throw std::invalid_argument(std::string("ozaki: rounding ") + rounding_name(options_.rounding) +
                                " needs mode cr");
  }
  if (options_.mode == Mode::cr && options_.max_splits < 1) {
    throw std::invalid_argument("ozaki: max_splits must be >= 1");
  }
  workspace_ = backend.allocate(options_.workspace_bytes);
}

void Handle::prepare(const char* routine, bool fp64) {
  report_ = Report{};
  if (fp64 && options_.mode == Mode::sp) {
    throw std::invalid_argument(std::string(routine) + ": mode sp is for fp32 operands");
  }
  if (!fp64 && options_.mode == Mode::dp) {
    throw std::invalid_argument(std::string(routine) + ": mode dp is for fp64 operands");
  }
}

namespace {
// The caller's alpha and beta: a complex call's, or a real call's.
std::complex<double> caller_alpha(const BlasCall& call) {
  return call.complex() ? call.complex_alpha() : call.alpha();
}
std::complex<double> caller_beta(const BlasCall& call) {
  return call.complex() ? call.complex_beta() : call.beta();
}
}  // namespace

void Handle::compute(const BlasCall& call) {
  run_chosen_scheme(backend(), products_, options_, workspace_,
                    {call.a(), call.b(), call.c(), call.alpha(), call.beta(), call.precision()},
                    caller_alpha(call), caller_beta(call), report_);
}

fp64::Direction Handle::output_rounding(const BlasCall& call) const {
  return rounding_for(options_, call.precision() == 24, caller_alpha(call), caller_beta(call))
      .output;
}

namespace {

constexpr const char* kGemm = "ozaki::Handle::gemm";

// Refuses C (rows x cols) unless it is A (rows x k) times B (k x cols), with A and B of C's type.
template <class Format>
void check_gemm_operands(const BufferMatrixOf<Format>& a, const BufferMatrixOf<Format>& b,
                         const BufferMatrixOf<Format>& c) {
  auto shape = [](const BufferMatrixOf<Format>& x) {
    return std::to_string(x.rows) + " x " + std::to_string(x.cols);
  };
  if (a.cols != b.rows || c.rows != a.rows || c.cols != b.cols) {
    throw std::invalid_argument(std::string(kGemm) + ": A " + shape(a) + " times B " + shape(b) +
                                " does not give C " + shape(c));
  }
  if (a.format != b.format || a.format != c.format) {
    throw std::invalid_argument(std::string(kGemm) + ": A, B and C must hold the same type");
  }
}

}  // namespace

void Handle::gemm(double alpha, const RealMatrix& a, const RealMatrix& b, double beta,
                  const RealMatrix& c) {
  const FloatingPointScope scope;
  check_gemm_operands(a, b, c);
  const bool fp64 = a.format == Real::fp64;
  prepare(kGemm, fp64);  // the mode takes this precision; clears the report
  check_rounding(options_, kGemm, alpha, beta);
  if (c.rows == 0 || c.cols == 0 || ((alpha == 0.0 || a.cols == 0) && beta == 1.0)) return;
  if (alpha == 0.0 || a.cols == 0) {  // C := beta C, as BlasCall::scale_c
    backend().epilogue(std::nullopt, std::nullopt, alpha, beta, c, std::nullopt, std::nullopt, c);
    return;
  }
  run_chosen_scheme(backend(), products_, options_, workspace_,
                    {a, b, c, alpha, beta, fp64 ? 53 : 24}, alpha, beta, report_);
}

void Handle::gemm(std::complex<double> alpha, const ComplexMatrix& a, bool conjugate_a,
                  const ComplexMatrix& b, bool conjugate_b, std::complex<double> beta,
                  const ComplexMatrix& c) {
  const FloatingPointScope scope;
  check_gemm_operands(a, b, c);
  const bool fp64 = a.format == Complex::c128;
  prepare(kGemm, fp64);
  check_rounding(options_, kGemm, alpha, beta);
  if (c.rows == 0 || c.cols == 0 || ((alpha == 0.0 || a.cols == 0) && beta == 1.0)) return;
  if (alpha == 0.0 || a.cols == 0) {  // C := beta C, as BlasCall::scale_c
    backend().complex_epilogue(std::nullopt, Real::fp64, alpha, beta, c);
    return;
  }
  const ComplexProduct form(backend(), a, conjugate_a, b, conjugate_b, Real::fp64);
  run_chosen_scheme(backend(), products_, options_, workspace_,
                    {form.a2(), form.b2(), form.value(), 1.0, 0.0, fp64 ? 53 : 24}, alpha, beta,
                    report_);
  backend().complex_epilogue(form.value(), Real::fp64, alpha, beta, c,
                             rounding_for(options_, !fp64, alpha, beta).output);
}

}  // namespace tcemu::ozaki
