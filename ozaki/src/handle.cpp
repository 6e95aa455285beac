#include <tcemu/ozaki/handle.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <variant>

#include <tcemu/emulator/floating_point_scope.hpp>
#include <tcemu/ozaki/split_rule.hpp>

#include "crt_scheme.hpp"
#include "scheme.hpp"

namespace tcemu::ozaki {
namespace {

// Refuses a directed rounding (Options::rounding) for anything but C := A B in binary64.
void check_rounding(const Options& options, const char* routine, double alpha, double beta,
                    bool fp64) {
  if (options.rounding == fp64::Direction::nearest_even) return;
  if (alpha != 1.0 || beta != 0.0 || !fp64) {
    throw std::invalid_argument(
        std::string(routine) + ": rounding " + rounding_name(options.rounding) +
        " is for C := A B in binary64 (alpha = 1, beta = 0), got alpha " + std::to_string(alpha) +
        ", beta " + std::to_string(beta) + (fp64 ? "" : ", fp32 operands"));
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
  run_chosen_scheme(backend(), products_, options_, workspace_,
                    {call.a(), call.b(), call.c(), call.alpha(), call.beta(), call.precision()},
                    report_);
}

void Handle::gemm(double alpha, const RealMatrix& a, const RealMatrix& b, double beta,
                  const RealMatrix& c) {
  const FloatingPointScope scope;
  constexpr const char* kRoutine = "ozaki::Handle::gemm";
  auto shape = [](const RealMatrix& x) {
    return std::to_string(x.rows) + " x " + std::to_string(x.cols);
  };
  if (a.cols != b.rows || c.rows != a.rows || c.cols != b.cols) {
    throw std::invalid_argument(std::string(kRoutine) + ": A " + shape(a) + " times B " + shape(b) +
                                " does not give C " + shape(c));
  }
  if (a.format != b.format || a.format != c.format) {
    throw std::invalid_argument(std::string(kRoutine) + ": A, B and C must hold the same type");
  }
  const bool fp64 = a.format == Real::fp64;
  prepare(kRoutine, fp64);  // the mode takes this precision; clears the report
  check_rounding(options_, kRoutine, alpha, beta, fp64);
  if (c.rows == 0 || c.cols == 0 || ((alpha == 0.0 || a.cols == 0) && beta == 1.0)) return;
  if (alpha == 0.0 || a.cols == 0) {  // C := beta C, as BlasCall::scale_c
    backend().epilogue(std::nullopt, std::nullopt, alpha, beta, c, std::nullopt, std::nullopt, c);
    return;
  }
  run_chosen_scheme(backend(), products_, options_, workspace_,
                    {a, b, c, alpha, beta, fp64 ? 53 : 24}, report_);
}

}  // namespace tcemu::ozaki
