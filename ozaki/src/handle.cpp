#include <tcemu/ozaki/handle.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <tcemu/ozaki/split_rule.hpp>

#include "scheme.hpp"

namespace tcemu::ozaki {

Handle::Handle(Backend& backend, Products products, Options options)
    : BlasRoutines(backend), products_(std::move(products)), options_(options) {
  exact_product_bits(products_);  // refuses products that cannot be exact
  if (options_.mode == Mode::tunable && options_.splits < 1) {
    throw std::invalid_argument("ozaki: tunable mode needs splits >= 1, got " +
                                std::to_string(options_.splits));
  }
  if (options_.mode == Mode::cr && options_.max_splits < 1) {
    throw std::invalid_argument("ozaki: max_splits must be >= 1");
  }
  workspace_ = backend.allocate(options_.workspace_bytes);
}

void Handle::prepare(const char* routine, bool fp64) {
  report_ = Report{};
  if (fp64 && options_.mode == Mode::sp) {
    throw std::invalid_argument(std::string(routine) +
                                ": mode sp is for fp32 operands (the s routines)");
  }
  if (!fp64 && options_.mode != Mode::sp && options_.mode != Mode::tunable) {
    throw std::invalid_argument(std::string(routine) + ": modes sp and tunable only");
  }
}

void Handle::compute(const BlasCall& call) {
  detail::run_scheme(backend(), products_, options_, workspace_,
                     {call.a(), call.b(), call.c(), call.alpha(), call.beta(), call.precision()},
                     report_);
}

}  // namespace tcemu::ozaki
