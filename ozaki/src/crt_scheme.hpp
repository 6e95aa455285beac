// Ozaki scheme II on backend buffers (CrtProducts; handle.cpp moves the operands in and out and
// picks the scheme).
#pragma once

#include "scheme.hpp"

namespace tcemu::ozaki::detail {

// Runs `problem` by Ozaki scheme II (CrtProducts) in the options' mode.
void run_crt_scheme(Backend& backend, const Options& options, Buffer& workspace,
                    const Problem& problem, Report& report);

}  // namespace tcemu::ozaki::detail
