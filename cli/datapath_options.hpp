// The options that choose a datapath: a preset (--arch, --type, --acc, --instr) and overrides of
// single fields, shared by every command that runs the emulator.
#pragma once

#include <set>
#include <string>

#include <tcemu/emulator/datapath.hpp>

#include "arguments.hpp"

namespace tcemu::cli {

std::set<std::string> datapath_option_names();
std::string datapath_options_help();

// The preset named by the arguments (defaults: sm90, fp16, fp32, mma.sync) with every override
// applied and validated. Throws UsageError naming a bad value.
// `default_type` is the input format when --type is not given.
Datapath datapath_from(const Arguments& args, const std::string& default_type = "fp16");

// The options that give `datapath` on top of `arch`'s preset: every field spelled out, so the
// line reproduces the datapath whatever the preset's defaults are.
std::string datapath_options(const std::string& arch, const Datapath& datapath);

}  // namespace tcemu::cli
