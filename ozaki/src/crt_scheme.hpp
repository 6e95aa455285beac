// Ozaki scheme II on backend buffers (CrtProducts; handle.cpp moves the operands in and out).
#pragma once

#include "scheme.hpp"

namespace tcemu::ozaki::detail {

void run_crt_scheme(Backend& backend, const Options& options, Buffer& workspace,
                    const Problem& problem, Report& report);

}  // namespace tcemu::ozaki::detail
