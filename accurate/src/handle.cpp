#include <tcemu/accurate/handle.hpp>

namespace tcemu::accurate {

// Every routine, fp64 and fp32, is offered.
void Handle::prepare(const char*, bool) {}

void Handle::compute(const BlasCall& call) {
  backend().inner_products(method_, call.a(), call.b(), call.alpha(), call.beta(), call.c());
}

}  // namespace tcemu::accurate
