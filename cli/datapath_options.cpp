#include "datapath_options.hpp"

#include <charconv>
#include <sstream>
#include <stdexcept>

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

}  // namespace

std::set<std::string> datapath_option_names() {
  return {"arch",
          "type",
          "acc",
          "instr",
          "block-terms",
          "instruction-k",
          "k-group",
          "alignment-bits",
          "alignment-floor",
          "block-rounding",
          "block-precision",
          "c-entry",
          "overflow",
          "zero-sign",
          "nan-bits"};
}

std::string datapath_options_help() {
  return R"(Datapath (a preset, then overrides of its fields; emulator/.../datapath.hpp):
  --arch PRESET          sm70 sm75 sm80 sm89 sm90 sm100 exact-rn exact-rz (default sm90)
  --type FORMAT          input format: fp16 bf16 tf32 e4m3 e5m2 (default fp16)
  --acc FORMAT           accumulator: fp32 or fp16 (default fp32)
  --instr NAME           the instruction, with its shape: mma.sync (default: the largest-K
                         shape of the format), mma.sync.mMnNkK (e.g. mma.sync.m16n8k8),
                         wmma.mMnNkK (the datapath of the mma.sync shape it compiles to),
                         wgmma or wgmma.m64nNkK (sm90), tcgen05 (sm100); `tcemu presets`
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
)";
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
  const FloatFormat accumulator = format_option(args, "acc", "fp32");
  const std::string instruction = args.value_or("instr", "mma.sync");
  Datapath dp = [&] {
    try {
      return sparse_requested(args) ? sparse_preset(arch, input, accumulator, instruction)
                                    : preset(arch, input, accumulator, instruction);
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
      << std::hex << dp.nan_bits;
  return out.str();
}

}  // namespace tcemu::cli
