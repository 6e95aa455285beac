// Datapath: the one parameter struct of a Tensor Core datapath (tcemu/emulator/datapath.hpp),
// every field a read-write attribute (BlockScaling's flattened: dp.scale_block, ...), the
// enumerated ones as the words the CLI uses ("rz", "after-blocks", "poison", ...), the optional
// formats None where unset; and the presets (tcemu/emulator/presets.hpp).
#include <string>
#include <vector>

#include <nanobind/operators.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <tcemu/emulator/fp64_presets.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>

#include "bindings.hpp"

namespace tcemu::python {
namespace {

// The value of `options` whose name_of() is `word`; ValueError listing the words otherwise.
template <typename Enum>
Enum enum_named(const char* field, const std::string& word, const std::vector<Enum>& options) {
  std::string words;
  for (const Enum e : options) {
    if (word == name_of(e)) return e;
    words += (words.empty() ? "'" : ", '") + std::string(name_of(e)) + "'";
  }
  throw nb::value_error(
      (std::string(field) + " must be one of " + words + ", got '" + word + "'").c_str());
}

// A read-write attribute holding an enum as its word; `field_of(dp)` is the enum's place in the
// datapath (a generic lambda, so that one accessor serves the const getter and the setter).
template <typename Enum, typename FieldOf>
void enum_field(nb::class_<Datapath>& c, const char* field, std::vector<Enum> options,
                const char* doc, FieldOf field_of) {
  c.def_prop_rw(
      field, [field_of](const Datapath& dp) { return std::string(name_of(field_of(dp))); },
      [field, options, field_of](Datapath& dp, const std::string& word) {
        field_of(dp) = enum_named(field, word, options);
      },
      doc);
}

// An optional format field: None where it is unset (has_input_b false; a scale format left
// FloatFormat{}, which has no exponent bits and which no named format is).
std::optional<FloatFormat> set_format(const FloatFormat& f) {
  if (f.exponent_bits == 0) return std::nullopt;
  return f;
}

}  // namespace

void bind_datapath(nb::module_& m) {
  nb::class_<Datapath> c(
      m, "Datapath",
      "A Tensor Core datapath: d = a . b + c over K terms in blocks "
      "(emulator/include/tcemu/emulator/datapath.hpp). Every field is an attribute, the "
      "block-scaled ones too (scale_block, scale_a, scale_b, group_terms, nan_scale) and b's "
      "format (input_b); change any of them to model other hardware, then validate().");
  c.def_prop_rw(
       "input", [](const Datapath& dp) { return dp.input; },
       [](Datapath& dp, const FormatArg& f) { dp.input = format_of(f); },
       "format of a (and of b, unless input_b is set)")
      .def_prop_rw(
          "input_b",
          [](const Datapath& dp) {
            return dp.has_input_b ? std::optional<FloatFormat>(dp.input_b) : std::nullopt;
          },
          [](Datapath& dp, const std::optional<FormatArg>& f) {
            dp.has_input_b = f.has_value();
            dp.input_b = f ? format_of(*f) : FloatFormat{};
          },
          "format of b where it differs from a's (kind::f8f6f4 pairs); None: b is in `input`")
      .def_prop_ro(
          "b_format", [](const Datapath& dp) { return dp.b_format(); },
          "the format b is read in: input_b if set, else input")
      .def_prop_rw(
          "accumulator", [](const Datapath& dp) { return dp.accumulator; },
          [](Datapath& dp, const FormatArg& f) { dp.accumulator = format_of(f); },
          "format of c and d: fp32 or fp16")
      .def_rw("instruction_k", &Datapath::instruction_k, "K of one MMA instruction")
      .def_rw("block_terms", &Datapath::block_terms, "products fused in one block")
      .def_rw("k_group", &Datapath::k_group,
              "consecutive k dealt together to a block (block_terms: plain k order)")
      .def_rw("alignment_fraction_bits", &Datapath::alignment_fraction_bits,
              "fraction bits of the alignment grid (MMA-Sim's F); None: exact, no truncation")
      .def_rw("alignment_floor", &Datapath::alignment_floor,
              "the alignment exponent is at least this (MMA-Sim's e_zero; NO_ALIGNMENT_FLOOR: "
              "none)")
      .def_rw("block_result_precision", &Datapath::block_result_precision,
              "significant bits kept in a block result")
      .def_rw("nan_bits", &Datapath::nan_bits, "the NaN produced, in the accumulator format")
      .def_prop_rw(
          "scale_block", [](const Datapath& dp) { return dp.block_scaling.scale_block; },
          [](Datapath& dp, int k) { dp.block_scaling.scale_block = k; },
          "consecutive k one scale covers (16 or 32 on Blackwell); 0: no block scaling")
      .def_prop_rw(
          "scale_a", [](const Datapath& dp) { return set_format(dp.block_scaling.scale_a); },
          [](Datapath& dp, const std::optional<FormatArg>& f) {
            dp.block_scaling.scale_a = f ? format_of(*f) : FloatFormat{};
          },
          "format of A's scales: ue8m0 or ue4m3 (None: unset)")
      .def_prop_rw(
          "scale_b", [](const Datapath& dp) { return set_format(dp.block_scaling.scale_b); },
          [](Datapath& dp, const std::optional<FormatArg>& f) {
            dp.block_scaling.scale_b = f ? format_of(*f) : FloatFormat{};
          },
          "format of B's scales: ue8m0 or ue4m3 (None: unset)")
      .def_prop_rw(
          "group_terms", [](const Datapath& dp) { return dp.block_scaling.group_terms; },
          [](Datapath& dp, int g) { dp.block_scaling.group_terms = g; },
          "products summed exactly before the scales apply (MMA-Sim's G; 1: each product "
          "carries its scales)")
      .def_prop_ro(
          "block_scaled", [](const Datapath& dp) { return dp.block_scaled(); },
          "True where the datapath takes scales (scale_block > 0)");
  enum_field(
      c, "block_rounding", std::vector{Rounding::toward_zero, Rounding::nearest_even},
      "rounding of each block result: 'rz' or 'rn'",
      [](auto& dp) -> auto& { return dp.block_rounding; });
  enum_field(
      c, "c_entry",
      std::vector{AccumulatorEntry::aligned_in_first_block, AccumulatorEntry::added_after_blocks},
      "'aligned' (c is a term of the first block) or 'after-blocks' (added at the end, RN)",
      [](auto& dp) -> auto& { return dp.c_entry; });
  enum_field(
      c, "overflow", std::vector{Overflow::ieee, Overflow::infinity, Overflow::saturate},
      "'ieee', 'infinity' or 'saturate'", [](auto& dp) -> auto& { return dp.overflow; });
  enum_field(
      c, "zero_sign", std::vector{ZeroSign::ieee, ZeroSign::positive},
      "sign of a zero block result: 'ieee' or 'positive'",
      [](auto& dp) -> auto& { return dp.zero_sign; });
  enum_field(
      c, "nan_scale", std::vector{NanScale::poisons_result, NanScale::ignored_for_zero_products},
      "what a NaN scale does: 'poison' (d is NaN, MMA-Sim) or 'ignore-zero' (a NaN scale "
      "whose products are all zero adds a zero)",
      [](auto& dp) -> auto& { return dp.block_scaling.nan_scale; });
  c.def(
       "validate", [](const Datapath& dp) { validate(dp); },
       "Raises ValueError naming the first field the emulator cannot evaluate.")
      .def("copy", [](const Datapath& dp) { return dp; })
      .def("__copy__", [](const Datapath& dp) { return dp; })
      .def("__deepcopy__", [](const Datapath& dp, nb::handle) { return dp; })
      .def(nb::self == nb::self)
      .def("__str__", [](const Datapath& dp) { return describe(dp); })
      .def("__repr__", [](const Datapath& dp) { return "tcemu.Datapath(" + describe(dp) + ")"; });
  m.attr("NO_ALIGNMENT_FLOOR") = kNoAlignmentFloor;

  m.def(
      "preset",
      [](const std::string& arch, const FormatArg& input, const FormatArg& accumulator,
         const std::string& instr, const std::optional<FormatArg>& input_b) {
        if (input_b) {
          return preset(arch, format_of(input), format_of(*input_b), format_of(accumulator), instr);
        }
        return preset(arch, format_of(input), format_of(accumulator), instr);
      },
      nb::arg("arch"), nb::arg("input") = "fp16", nb::arg("accumulator") = "fp32",
      nb::arg("instr") = "mma.sync", nb::kw_only(), nb::arg("input_b") = nb::none(),
      "The datapath of `arch` (sm70, sm75, sm80, sm89, sm90, sm100, sm120, exact-rn, exact-rz) "
      "running `instr` on `input` with an `accumulator` accumulator; `input_b`: b's format where "
      "it differs from a's (kind::f8f6f4 takes any pair of e5m2, e4m3, e3m2, e2m3, e2m1). `instr` "
      "names the instruction shape the kernel issues: mma.sync (the largest-K shape of the "
      "format), mma.sync.mMnNkK (e.g. mma.sync.m16n8k8), wmma.mMnNkK (the mma.sync shape it "
      "compiles to), wgmma or wgmma.m64nNkK (sm90), tcgen05 (sm100: kind::f16, tf32, f8f6f4), "
      "the block-scaled kinds tcgen05.KIND.blockS[.SCALE] (sm100: e.g. "
      "tcgen05.mxf4nvf4.block16.ue4m3, NVFP4) and mma.sync.mMnNkK.KIND.blockS[.SCALE] (sm120); "
      "instruction_names(arch) lists them. ValueError for a combination the hardware lacks, "
      "naming the shapes it has.");
  m.def("preset_names", &preset_names, "The architecture presets.");
  m.def(
      "instruction_names",
      [](const std::string& arch, const std::optional<FormatArg>& input,
         const std::optional<FormatArg>& accumulator, const std::optional<FormatArg>& input_b) {
        if (input.has_value() != accumulator.has_value() || (input_b && !input)) {
          throw nb::value_error(
              "instruction_names: give input and accumulator together (and input_b only with "
              "them), or none of them");
        }
        const auto is_fp64 = [](const std::optional<FormatArg>& f) {
          return f && std::holds_alternative<std::string>(*f) &&
                 std::get<std::string>(*f) == "fp64";
        };
        if (is_fp64(input) || is_fp64(accumulator)) {
          if (!is_fp64(input) || !is_fp64(accumulator) || input_b) {
            throw nb::value_error(
                "instruction_names: fp64 MMA takes input='fp64' and accumulator='fp64' (no "
                "input_b)");
          }
          const auto names = fp64_instruction_names(arch);
          return std::vector<std::string>(names.begin(), names.end());
        }
        const auto names = !input ? instruction_names(arch)
                           : !input_b
                               ? instruction_names(arch, format_of(*input), format_of(*accumulator))
                               : instruction_names(arch, format_of(*input), format_of(*input_b),
                                                   format_of(*accumulator));
        return std::vector<std::string>(names.begin(), names.end());
      },
      nb::arg("arch"), nb::arg("input") = nb::none(), nb::arg("accumulator") = nb::none(),
      nb::kw_only(), nb::arg("input_b") = nb::none(),
      "Every instruction name an architecture accepts: mma.sync, its mma.sync.mMnNkK shapes, its "
      "WMMA shapes, wgmma (sm90), tcgen05 and its block-scaled kinds (sm100), sm120's "
      "block-scaled mma.sync; with input and accumulator (and input_b), only those that take "
      "them (input='fp64', accumulator='fp64': the fp64 MMA shapes of fp64_preset).");
  m.def(
      "block_datapath",
      [](const FormatArg& input, const FormatArg& accumulator, int instruction_k, int block_terms,
         int fraction_bits) {
        return block_datapath(format_of(input), format_of(accumulator), instruction_k, block_terms,
                              fraction_bits);
      },
      nb::arg("input"), nb::arg("accumulator"), nb::arg("instruction_k"), nb::arg("block_terms"),
      nb::arg("fraction_bits"),
      "The common shape every architecture preset starts from (presets.hpp).");

  nb::class_<PresetEntry>(m, "PresetEntry", "One row of the preset table.")
      .def_prop_ro("arch", [](const PresetEntry& e) { return std::string(e.arch); })
      .def_prop_ro("instruction", [](const PresetEntry& e) { return std::string(e.instruction); })
      .def_ro("datapath", &PresetEntry::datapath)
      .def_prop_ro("source", [](const PresetEntry& e) { return std::string(e.source); })
      .def("__repr__", [](const PresetEntry& e) {
        const Datapath& dp = e.datapath;
        return "tcemu.PresetEntry(" + std::string(e.arch) + ", " + std::string(e.instruction) +
               ", " + std::string(dp.input.name) +
               (dp.has_input_b ? " x " + std::string(dp.input_b.name) : std::string()) + " -> " +
               std::string(dp.accumulator.name) + ")";
      });
  m.def("presets", &all_presets,
        "Every (arch, instruction, input, accumulator) combination the hardware has, with its "
        "datapath.");
}

}  // namespace tcemu::python
