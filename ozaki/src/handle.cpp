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

// Refuses a directed rounding (Options::rounding) for anything but C := A B in binary64 (a
// complex product's alpha and beta are applied after the real form's product, which runs with
// 1 and 0: they are checked here too).
void check_rounding(const Options& options, const char* routine, std::complex<double> alpha,
                    std::complex<double> beta, bool fp64) {
  if (options.rounding == fp64::Direction::nearest_even) return;
  if (alpha != 1.0 || beta != 0.0 || !fp64) {
    throw std::invalid_argument(
        std::string(routine) + ": rounding " + rounding_name(options.rounding) +
        " is for C := A B in binary64 (alpha = 1, beta = 0), got alpha " + scalar_text(alpha) +
        ", beta " + scalar_text(beta) + (fp64 ? "" : ", fp32 operands"));
  }
}

// Runs `problem` by the scheme the products ask for: Ozaki scheme II for CrtProducts, scheme I
// (slices) for the others.
void run_chosen_scheme(Backend& backend, const Products& products, const Options& options,
                       Buffer& workspace, const detail::Problem& problem, Report& report) {
  check_rounding(options, "ozaki", problem.alpha, problem.beta, problem.input_precision == 53);
  if (std::holds_alternative<CrtProducts>(products)) {
    detail::run_crt_scheme(backend, options, workspace, problem, report);
  } else {
    detail::run_scheme(backend, products, options, workspace, problem, report);
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
  if (!fp64 && options_.mode != Mode::sp && options_.mode != Mode::tunable) {
    throw std::invalid_argument(std::string(routine) + ": modes sp and tunable only");
  }
}

void Handle::compute(const BlasCall& call) {
  if (call.complex()) {
    check_rounding(options_, "ozaki", call.complex_alpha(), call.complex_beta(),
                   call.precision() == 53);
  }
  run_chosen_scheme(backend(), products_, options_, workspace_,
                    {call.a(), call.b(), call.c(), call.alpha(), call.beta(), call.precision()},
                    report_);
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
  check_rounding(options_, kGemm, alpha, beta, fp64);
  if (c.rows == 0 || c.cols == 0 || ((alpha == 0.0 || a.cols == 0) && beta == 1.0)) return;
  if (alpha == 0.0 || a.cols == 0) {  // C := beta C, as BlasCall::scale_c
    backend().epilogue(std::nullopt, std::nullopt, alpha, beta, c, std::nullopt, std::nullopt, c);
    return;
  }
  run_chosen_scheme(backend(), products_, options_, workspace_,
                    {a, b, c, alpha, beta, fp64 ? 53 : 24}, report_);
}

void Handle::gemm(std::complex<double> alpha, const ComplexMatrix& a, bool conjugate_a,
                  const ComplexMatrix& b, bool conjugate_b, std::complex<double> beta,
                  const ComplexMatrix& c) {
  const FloatingPointScope scope;
  check_gemm_operands(a, b, c);
  const bool fp64 = a.format == Complex::c128;
  prepare(kGemm, fp64);
  check_rounding(options_, kGemm, alpha, beta, fp64);
  if (c.rows == 0 || c.cols == 0 || ((alpha == 0.0 || a.cols == 0) && beta == 1.0)) return;
  if (alpha == 0.0 || a.cols == 0) {  // C := beta C, as BlasCall::scale_c
    backend().complex_epilogue(std::nullopt, Real::fp64, alpha, beta, c);
    return;
  }
  const ComplexProduct form(backend(), a, conjugate_a, b, conjugate_b, Real::fp64);
  run_chosen_scheme(backend(), products_, options_, workspace_,
                    {form.a2(), form.b2(), form.value(), 1.0, 0.0, fp64 ? 53 : 24}, report_);
  backend().complex_epilogue(form.value(), Real::fp64, alpha, beta, c);
}

}  // namespace tcemu::ozaki
