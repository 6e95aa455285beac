// The integer MMA (IMMA) parts of tcemu mma, validate, presets and probe: chosen when --type or
// --acc names an integer format (s8 u8 s4 u4 / s32), or with `tcemu probe --instr imma`.
#pragma once

#include <set>
#include <string>
#include <vector>

#include <tcemu/emulator/integer_mma.hpp>
#include <tcemu/session/arguments.hpp>

namespace tcemu::cli {

// The options only integer MMA reads: --b-type (value) and --satfinite (flag).
std::set<std::string> integer_value_option_names();
std::set<std::string> integer_flag_names();
std::string integer_options_help();

// Whether the arguments ask for integer MMA: --type or --acc names an integer format. Throws
// UsageError when --b-type or --satfinite come without an integer --type.
bool integer_requested(const session::Arguments& args);

// The datapath named by --arch (default sm90), --instr (default mma.sync: the largest-K shape),
// --type, --b-type (default: --type), --acc (s32, the default) and --satfinite, with an
// --instruction-k override. Throws UsageError naming the problem: an integer operand with a
// floating-point accumulator (or the reverse), s32 as an operand, mixed widths, a shape the
// architecture lacks (listing those it has), a floating-point datapath option.
IntegerDatapath integer_datapath_from(const session::Arguments& args);

// tcemu mma on integer case files; returns the exit status.
int integer_mma(const session::Arguments& args);
// tcemu validate on integer case files; returns the exit status.
int integer_validate(const session::Arguments& args, std::size_t show);
// The integer rows of tcemu presets.
void print_integer_presets();
// tcemu probe --instr imma; returns the exit status.
int integer_probe(const session::Arguments& args);

}  // namespace tcemu::cli
