// The fp64 MMA (DMMA) parts of tcemu mma, validate, presets and probe: chosen when --type or --acc
// names fp64, or with `tcemu probe --instr dmma`.
#pragma once

#include <set>
#include <string>

#include <tcemu/emulator/fp64_mma.hpp>
#include <tcemu/session/arguments.hpp>

namespace tcemu::cli {

// The options only fp64 MMA reads: --fp64-order, --fp64-step, --fp64-nan.
std::set<std::string> fp64_value_option_names();
std::string fp64_options_help();

// Whether the arguments ask for fp64 MMA: --type or --acc (or --b-type) names fp64.
bool fp64_requested(const session::Arguments& args);

// The datapath named by --arch (default sm90), --instr (default mma.sync: the largest-K shape)
// with the overrides --instruction-k, --fp64-order, --fp64-step, --fp64-nan and --nan-bits (16
// hex digits).
// Throws UsageError naming the problem: fp64 with another format (--type, --b-type, --acc), a
// shape the architecture lacks (listing those it has), an architecture without fp64 MMA, a
// floating-point or integer datapath option that fp64 MMA has no field for.
Fp64Datapath fp64_datapath_from(const session::Arguments& args);

// tcemu mma on fp64 case files; returns the exit status.
int fp64_mma(const session::Arguments& args);
// tcemu validate on fp64 case files; returns the exit status.
int fp64_validate(const session::Arguments& args, std::size_t show);
// The fp64 rows of tcemu presets.
void print_fp64_presets();
// tcemu probe --instr dmma; returns the exit status.
int fp64_probe(const session::Arguments& args);

}  // namespace tcemu::cli
