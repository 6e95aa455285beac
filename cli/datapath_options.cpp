#include "datapath_options.hpp"

#include <algorithm>
#include <charconv>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/cases/printable.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/pair_fma_emulation.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/emulator/sparse_presets.hpp>

namespace tcemu::cli {
namespace {

int checked_int(const session::Arguments& args, const std::string& name) {
  const long long v = *args.integer(name);
  if (v < -1'000'000 || v > 1'000'000) throw session::UsageError("--" + name + " is out of range");
  return static_cast<int>(v);
}

// The value of `options` whose name_of() is `value`.
template <typename Enum>
Enum choice(const std::string& name, const std::string& value,
            std::initializer_list<Enum> options) {
  std::string names;
  for (const Enum e : options) {
    if (value == name_of(e)) return e;
    names += (names.empty() ? "" : ", ") + std::string(name_of(e));
  }
  throw session::UsageError("--" + name + " must be one of " + names + ", got '" +
                            printable(value) + "'");
}

FloatFormat format_option(const session::Arguments& args, const std::string& name,
                          const std::string& fallback) {
  const std::string text = args.value_or(name, fallback);
  const auto f = format_by_name(text);
  if (!f) throw session::UsageError("--" + name + ": unknown format '" + printable(text) + "'");
  return *f;
}

FloatFormat scale_format_option(const session::Arguments& args, const std::string& name) {
  const FloatFormat f = format_option(args, name, "");
  if (!is_scale_format(f)) {
    throw session::UsageError("--" + name + ": " + std::string(f.name) +
                              " is not a scale format (ue8m0 or ue4m3)");
  }
  return f;
}

// The formats `instruction` takes on `arch`, as options ("--type e2m1 --acc fp32"), or "" when
// the architecture has no row of that name: what a refused preset lookup should have asked for.
std::string formats_of_instruction(const std::string& arch, const std::string& instruction) {
  std::vector<std::string> inputs, inputs_b, accumulators;
  const auto add = [](std::vector<std::string>& list, std::string_view name) {
    if (std::find(list.begin(), list.end(), name) == list.end()) list.emplace_back(name);
  };
  for (const PresetEntry& row : all_presets()) {
    if (row.arch != arch || row.instruction != instruction) continue;
    add(inputs, row.datapath.input.name);
    add(inputs_b, row.datapath.b_format().name);
    add(accumulators, row.datapath.accumulator.name);
  }
  if (inputs.empty()) return "";
  const auto joined = [](const std::vector<std::string>& list) {
    std::string out;
    for (const std::string& name : list) out += (out.empty() ? "" : "|") + name;
    return out;
  };
  return arch + " " + instruction + " takes --type " + joined(inputs) +
         (inputs_b == inputs ? std::string() : " --b-type " + joined(inputs_b)) + " --acc " +
         joined(accumulators);
}

// The preset of the arguments' architecture, instruction and formats: the row of the pair
// (--type, --b-type) where there is one, else the row of --type with b's format overridden (a
// field like any other). Throws UsageError with the preset's message and the formats the
// instruction takes.
Datapath dense_preset(const std::string& arch, const FloatFormat& input, const FloatFormat& input_b,
                      const FloatFormat& accumulator, const std::string& instruction) {
  try {
    return preset(arch, input, input_b, accumulator, instruction);
  } catch (const std::invalid_argument& e) {
    if (!(input == input_b)) {
      try {
        Datapath dp = preset(arch, input, accumulator, instruction);
        dp.has_input_b = true;
        dp.input_b = input_b;
        return dp;
      } catch (const std::invalid_argument&) {
        // The pair's message says more: fall through to it.
      }
    }
    const std::string takes = formats_of_instruction(arch, instruction);
    throw session::UsageError(e.what() + (takes.empty() ? std::string() : " (" + takes + ")"));
  }
}

}  // namespace

// The block-scaling overrides: --scale-block, the scale formats, --group-terms, --nan-scale.
void apply_block_scaling(const session::Arguments& args, Datapath& dp) {
  BlockScaling& s = dp.block_scaling;
  if (args.value("scale-block")) s.scale_block = checked_int(args, "scale-block");
  if (args.value("scale-format")) s.scale_a = s.scale_b = scale_format_option(args, "scale-format");
  if (args.value("scale-format-a")) s.scale_a = scale_format_option(args, "scale-format-a");
  if (args.value("scale-format-b")) s.scale_b = scale_format_option(args, "scale-format-b");
  if (args.value("group-terms")) s.group_terms = checked_int(args, "group-terms");
  if (const auto n = args.value("nan-scale")) {
    s.nan_scale =
        choice("nan-scale", *n, {NanScale::poisons_result, NanScale::ignored_for_zero_products});
  }
  if (!dp.block_scaled()) {
    for (const char* name :
         {"scale-format", "scale-format-a", "scale-format-b", "group-terms", "nan-scale"}) {
      if (args.value(name)) {
        throw session::UsageError("--" + std::string(name) +
                                  ": the datapath takes no scales (--scale-block N, or a "
                                  "block-scaled --instr such as tcgen05.mxf8f6f4.block32)");
      }
    }
    return;
  }
  if (!is_scale_format(s.scale_a) || !is_scale_format(s.scale_b)) {
    throw session::UsageError(
        "--scale-block " + std::to_string(s.scale_block) +
        ": the preset has no scales, so their format must be given: --scale-format ue8m0|ue4m3 "
        "(or --scale-format-a and --scale-format-b)");
  }
}

std::set<std::string> datapath_option_names() {
  return {"arch",           "type",
          "b-type",         "acc",
          "instr",          "block-terms",
          "instruction-k",  "k-group",
          "alignment-bits", "alignment-floor",
          "block-rounding", "block-precision",
          "c-entry",        "overflow",
          "zero-sign",      "nan-bits",
          "scale-block",    "scale-format",
          "scale-format-a", "scale-format-b",
          "group-terms",    "nan-scale"};
}

std::string datapath_options_help() {
  return R"(Datapath (a preset, then overrides of its fields; emulator/.../datapath.hpp):
  --arch PRESET          sm70 sm75 sm80 sm89 sm90 sm100 sm120 exact-rn exact-rz (default sm90)
  --type FORMAT          input format (of A, and of B unless --b-type): fp16 bf16 tf32 e4m3
                         e5m2, and Blackwell's e3m2 e2m3 (FP6) e2m1 (FP4) (default fp16)
  --b-type FORMAT        B's format where it differs from A's (kind::f8f6f4 takes any pair of
                         e5m2 e4m3 e3m2 e2m3 e2m1): the preset of the pair where there is one,
                         else --type's preset with B's format changed
  --acc FORMAT           accumulator: fp32 or fp16 (default fp32)
  --instr NAME           the instruction, with its shape: mma.sync (default: the largest-K
                         shape of the format), mma.sync.mMnNkK (e.g. mma.sync.m16n8k8),
                         wmma.mMnNkK (the datapath of the mma.sync shape it compiles to),
                         wgmma or wgmma.m64nNkK (sm90), tcgen05 (sm100: kind::f16, tf32,
                         f8f6f4 by the formats); block-scaled (MX, NVFP4; case lines carry the
                         scales): tcgen05.mxf8f6f4.block32, tcgen05.mxf4.block32,
                         tcgen05.mxf4nvf4.block32, tcgen05.mxf4nvf4.block16.ue8m0 and
                         .block16.ue4m3 (NVFP4; --type e2m1) on sm100, and on sm120
                         mma.sync.m16n8k32.mxf8f6f4.block32, mma.sync.m16n8k64.mxf4.block32,
                         mma.sync.m16n8k64.mxf4nvf4.block32, .block16.ue8m0, .block16.ue4m3;
                         `tcemu presets`
                         lists each architecture's names. A named shape refuses cases whose K
                         is not a multiple of its K. Which one a kernel runs: its SASS
                         (cuobjdump -sass), e.g. HMMA.16816.F32 = mma.sync.m16n8k16 f32.f16,
                         HMMA.1688.F32.TF32 = mma.sync.m16n8k8 tf32, HGMMA.64x8x16 = wgmma
                         (docs/presets.md has the table). Sparse shapes (tcemu mma and
                         tcemu validate only): mma.sp.m16n8k16, mma.sp.m16n8k32 (sm90, fp16 and
                         bf16; SASS HMMA.SP.16816, HMMA.SP.16832), mma.sp.m16n8k8 and
                         mma.sp.m16n8k16 tf32 (HMMA.SP.1688/16816.F32.TF32): their cases are sparse case
                         lines (tcemu mma --help) and the datapath is that of the K/2 kept
                         products (the overrides apply to it)
  --block-terms N        products fused per block
  --instruction-k N      K of one instruction (a multiple of --block-terms)
  --k-group N            consecutive k dealt together to a block (block-terms: k order)
  --alignment-bits N     fraction bits of a block's alignment grid, below its largest exponent:
                         every product (and c, entering aligned) is truncated to the grid;
                         'exact': no truncation
  --alignment-floor N    lowest alignment exponent, or 'none'
  --block-rounding R     rz or rn: the one rounding of each block's exact sum of its truncated
                         terms into the accumulator. rn changes only that rounding: the
                         truncation to the alignment grid stays (add --alignment-bits exact for
                         a block rounded to nearest from the exact products)
  --block-precision N    significant bits kept in each block result
  --c-entry E            aligned (c is a term of the first block) or after-blocks (RN add)
  --overflow O           ieee, infinity or saturate
  --zero-sign Z          ieee or positive
  --nan-bits HEX         the NaN produced, in the accumulator format
Block scaling (OCP MX, NVFP4; a block-scaled --instr sets them, each can be changed alone):
  --scale-block N        consecutive k one scale of A (and of B) covers: 16 or 32 on Blackwell;
                         0: no scales (a preset without them needs --scale-format too)
  --scale-format F       both scale formats: ue8m0 (a power of two, ff NaN) or ue4m3 (unsigned
                         e4m3, 7f NaN); --scale-format-a F, --scale-format-b F: one of them
  --group-terms N        products summed exactly before the scales apply (MMA-Sim's G: 1 for
                         mxf8f6f4, each product carries its scales; 16 for mxf4 and mxf4nvf4);
                         --alignment-bits is MMA-Sim's F, --alignment-floor its e_zero
  --nan-scale R          poison (a NaN scale makes d NaN; MMA-Sim) or ignore-zero (a NaN scale
                         whose products are all zero adds a zero)
)";
}

void require_one_format_without_scales(const Datapath& dp, const std::string& who) {
  if (dp.has_input_b) {
    throw session::UsageError("--b-type " + std::string(dp.input_b.name) + ": " + who +
                              " multiplies slices of one format (" + std::string(dp.input.name) +
                              ")");
  }
  if (dp.block_scaled()) {
    throw session::UsageError("--instr/--scale-block: " + who +
                              " multiplies slices without block scales; the datapath takes " +
                              std::string(dp.block_scaling.scale_a.name) + " scales per " +
                              std::to_string(dp.block_scaling.scale_block) + " k");
  }
}

bool sparse_requested(const session::Arguments& args) {
  return args.value_or("instr", "").starts_with("mma.sp.");
}

bool pair_fma_requested(const session::Arguments& args) {
  const auto input = format_by_name(args.value_or("type", "fp16"));
  const auto accumulator = format_by_name(args.value_or("acc", "fp32"));
  if (!input || !accumulator ||
      !is_sm90_m8n8k4_fp16(args.value_or("arch", "sm90"), args.value_or("instr", "mma.sync"),
                           *input, *accumulator)) {
    return false;
  }
  for (const std::string& name : datapath_option_names()) {
    if (name != "arch" && name != "type" && name != "acc" && name != "instr" && args.value(name)) {
      throw session::UsageError(
          "--" + name +
          ": sm90 mma.sync.m8n8k4 fp16 -> fp16 has no datapath to adjust (its model "
          "is the fp32 pair-FMA emulation)");
    }
  }
  return true;
}

Datapath datapath_from(const session::Arguments& args, const std::string& default_type) {
  if (sparse_requested(args)) {
    throw session::UsageError(
        "--instr " + *args.value("instr") +
        " is a sparse shape: only `tcemu mma` and `tcemu validate` take its sparse "
        "cases");
  }
  return sparse_or_dense_datapath_from(args, default_type);
}

Datapath sparse_or_dense_datapath_from(const session::Arguments& args,
                                       const std::string& default_type) {
  const std::string arch = args.value_or("arch", "sm90");
  const FloatFormat input = format_option(args, "type", default_type);
  const FloatFormat input_b = format_option(args, "b-type", std::string(input.name));
  const FloatFormat accumulator = format_option(args, "acc", "fp32");
  const std::string instruction = args.value_or("instr", "mma.sync");
  const bool sparse = sparse_requested(args);
  // A sparse shape's cases have one input format and no scales (sparse_case.hpp); the options
  // that say so (--b-type as --type, --scale-block 0, as datapath_options() writes) pass.
  const auto refuse_for_sparse = [&](const std::string& option) {
    throw session::UsageError("--" + option + ": the sparse shape " + instruction +
                              " takes one input format and no scales");
  };
  if (sparse && !(input_b == input)) refuse_for_sparse("b-type");
  Datapath dp = [&] {
    if (!sparse) return dense_preset(arch, input, input_b, accumulator, instruction);
    try {
      return sparse_preset(arch, input, accumulator, instruction);
    } catch (const std::invalid_argument& e) {
      throw session::UsageError(e.what());
    }
  }();
  if (args.value("block-terms")) dp.block_terms = checked_int(args, "block-terms");
  if (args.value("instruction-k")) dp.instruction_k = checked_int(args, "instruction-k");
  if (args.value("k-group")) dp.k_group = checked_int(args, "k-group");
  if (const auto bits = args.value("alignment-bits")) {
    dp.alignment_fraction_bits =
        *bits == "exact" ? std::nullopt : std::optional<int>(checked_int(args, "alignment-bits"));
  }
  if (const auto floor = args.value("alignment-floor")) {
    dp.alignment_floor =
        *floor == "none" ? kNoAlignmentFloor : checked_int(args, "alignment-floor");
  }
  if (const auto r = args.value("block-rounding")) {
    dp.block_rounding =
        choice("block-rounding", *r, {Rounding::toward_zero, Rounding::nearest_even});
  }
  if (args.value("block-precision")) {
    dp.block_result_precision = checked_int(args, "block-precision");
  }
  if (const auto e = args.value("c-entry")) {
    dp.c_entry =
        choice("c-entry", *e,
               {AccumulatorEntry::aligned_in_first_block, AccumulatorEntry::added_after_blocks});
  }
  if (const auto o = args.value("overflow")) {
    dp.overflow = choice("overflow", *o, {Overflow::ieee, Overflow::infinity, Overflow::saturate});
  }
  if (const auto z = args.value("zero-sign")) {
    dp.zero_sign = choice("zero-sign", *z, {ZeroSign::ieee, ZeroSign::positive});
  }
  if (const auto nan = args.value("nan-bits")) {
    std::uint32_t bits = 0;
    const auto [end, error] = std::from_chars(nan->data(), nan->data() + nan->size(), bits, 16);
    if (error != std::errc() || end != nan->data() + nan->size()) {
      throw session::UsageError("--nan-bits expects hex digits, got '" + printable(*nan) + "'");
    }
    dp.nan_bits = bits;
  }
  apply_block_scaling(args, dp);
  if (sparse && dp.block_scaled()) refuse_for_sparse("scale-block");
  try {
    validate(dp);
  } catch (const std::invalid_argument& e) {
    throw session::UsageError(e.what());
  }
  return dp;
}

void check_case_k(const session::Arguments& args, const Datapath& dp, std::size_t k,
                  std::size_t line) {
  try {
    check_shape_k(args.value_or("arch", "sm90"), dp.input, dp.accumulator,
                  args.value_or("instr", "mma.sync"), k);
  } catch (const std::invalid_argument& e) {
    throw CaseFileError(line, e.what());
  }
}

std::string datapath_options(const std::string& arch, const Datapath& dp) {
  std::ostringstream out;
  out << "--arch " << arch << " --type " << dp.input.name << " --acc " << dp.accumulator.name
      << " --instruction-k " << dp.instruction_k << " --block-terms " << dp.block_terms
      << " --k-group " << dp.k_group << " --alignment-bits "
      << (dp.alignment_fraction_bits ? std::to_string(*dp.alignment_fraction_bits) : "exact")
      << " --alignment-floor "
      << (dp.alignment_floor == kNoAlignmentFloor ? "none" : std::to_string(dp.alignment_floor))
      << " --block-rounding " << name_of(dp.block_rounding) << " --block-precision "
      << dp.block_result_precision << " --c-entry " << name_of(dp.c_entry) << " --overflow "
      << name_of(dp.overflow) << " --zero-sign " << name_of(dp.zero_sign) << " --nan-bits "
      << std::hex << dp.nan_bits << std::dec << " --b-type " << dp.b_format().name
      << " --scale-block " << dp.block_scaling.scale_block;
  if (dp.block_scaled()) {
    const BlockScaling& s = dp.block_scaling;
    out << " --scale-format-a " << s.scale_a.name << " --scale-format-b " << s.scale_b.name
        << " --group-terms " << s.group_terms << " --nan-scale " << name_of(s.nan_scale);
  }
  return out.str();
}

}  // namespace tcemu::cli
