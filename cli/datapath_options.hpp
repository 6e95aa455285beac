// The options that choose a datapath: a preset (--arch, --type, --acc, --instr) and overrides of
// single fields, shared by every command that runs the emulator.
#pragma once

#include <cstddef>
#include <set>
#include <string>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/session/arguments.hpp>

namespace tcemu::cli {

std::set<std::string> datapath_option_names();
std::string datapath_options_help();

// The preset named by the arguments (defaults: sm90, fp16, fp32, mma.sync) with every override
// applied and validated. Throws UsageError naming a bad value.
// `default_type` is the input format when --type is not given.
// Throws UsageError when --instr names a sparse shape (mma.sp.*): those take sparse cases.
Datapath datapath_from(const session::Arguments& args, const std::string& default_type = "fp16");

// Throws UsageError unless `datapath` takes one input format and no scales, as the schemes that
// multiply slices of one format on it (`who`: "the Ozaki scheme", "halfhalf") need; the message
// names the option that gave the second format (--b-type) or the scales (--instr, --scale-block).
void require_one_format_without_scales(const Datapath& datapath, const std::string& who);

// Applies the block-scaling options (--scale-block, --scale-format[-a|-b], --group-terms,
// --nan-scale) to `datapath`; UsageError naming the option for a bad value, a scale option
// without scales, or scales without their format.
void apply_block_scaling(const session::Arguments& args, Datapath& datapath);

// --instr names a sparse shape (mma.sp.mMnNkK).
bool sparse_requested(const session::Arguments& args);

// As datapath_from, and for a sparse shape the datapath of its K/2 kept products
// (sparse_presets.hpp) with the overrides applied.
Datapath sparse_or_dense_datapath_from(const session::Arguments& args,
                                       const std::string& default_type = "fp16");

// The arguments name sm90 mma.sync.m8n8k4 fp16 -> fp16 (--arch sm90, the default, --instr
// mma.sync.m8n8k4 --type fp16 --acc fp16), which has no preset but its own model
// (pair_fma_emulation.hpp). Throws UsageError naming the option when any datapath option besides
// --arch, --type, --acc and --instr is given with it: its model has no field to adjust.
bool pair_fma_requested(const session::Arguments& args);

// Throws CaseFileError at `line` when --instr names an instruction shape (mma.sync.mMnNkK,
// wmma.mMnNkK, wgmma.m64nNkK) and k is not a multiple of its K; the message lists the shapes the
// architecture has for the formats. Plain names (mma.sync, wgmma, tcgen05) take any K.
void check_case_k(const session::Arguments& args, const Datapath& datapath, std::size_t k,
                  std::size_t line);

// The options that give `datapath` on top of `arch`'s preset: every field spelled out, so the
// line reproduces the datapath whatever the preset's defaults are.
std::string datapath_options(const std::string& arch, const Datapath& datapath);

}  // namespace tcemu::cli
