// The count of Ozaki tunable mode, as `tcemu gemm --splits/--moduli` and the LD_PRELOAD
// libraries' TCEMU_PRELOAD_SPLITS/_MODULI give it: one rule for both front doors.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <tcemu/ozaki/options.hpp>

namespace tcemu::session {

// The most slices (Ozaki-I) or moduli (Ozaki-II, `crt`) tunable mode takes.
int most_tunable_count(bool crt);

// The slice or modulus count from the text its setting was given as (nothing: not given). Mode
// tunable needs an integer in [1, most_tunable_count(crt)]; every other mode chooses its own
// count and would ignore one, so there it must not be given. Returns the count (0 outside
// tunable mode), or nothing with `expected` saying what the setting should have been: "an integer
// in [1, 1000], which TUNABLE needs" or "used outside TUNABLE", where `tunable` names how mode
// tunable is chosen ("--mode tunable", "TCEMU_PRELOAD_MODE=tunable").
std::optional<int> tunable_count(ozaki::Mode mode, bool crt, std::optional<std::string_view> text,
                                 const std::string& tunable, std::string& expected);

}  // namespace tcemu::session
