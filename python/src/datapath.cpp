// Datapath: the one parameter struct of a Tensor Core datapath (tcemu/emulator/datapath.hpp),
// every field a read-write attribute, the enumerated ones as the words the CLI uses ("rz",
// "after-blocks", ...); and the presets (tcemu/emulator/presets.hpp).
#include <string>
#include <vector>

#include <nanobind/operators.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

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

// A read-write attribute holding an enum as its word.
template <typename Enum, Enum Datapath::*Field>
void enum_field(nb::class_<Datapath>& c, const char* field, std::vector<Enum> options,
                const char* doc) {
  c.def_prop_rw(
      field, [](const Datapath& dp) { return std::string(name_of(dp.*Field)); },
      [field, options](Datapath& dp, const std::string& word) {
        dp.*Field = enum_named(field, word, options);
      },
      doc);
}

}  // namespace

void bind_datapath(nb::module_& m) {
  nb::class_<Datapath> c(
      m, "Datapath",
      "A Tensor Core datapath: d = a . b + c over K terms in blocks "
      "(emulator/include/tcemu/emulator/datapath.hpp). Every field is an attribute; change any "
      "of them to model other hardware, then validate().");
  c.def_prop_rw(
       "input", [](const Datapath& dp) { return dp.input; },
       [](Datapath& dp, const FormatArg& f) { dp.input = format_of(f); }, "format of a and b")
      .def_prop_rw(
          "accumulator", [](const Datapath& dp) { return dp.accumulator; },
          [](Datapath& dp, const FormatArg& f) { dp.accumulator = format_of(f); },
          "format of c and d: fp32 or fp16")
      .def_rw("instruction_k", &Datapath::instruction_k, "K of one MMA instruction")
      .def_rw("block_terms", &Datapath::block_terms, "products fused in one block")
      .def_rw("k_group", &Datapath::k_group,
              "consecutive k dealt together to a block (block_terms: plain k order)")
      .def_rw("alignment_fraction_bits", &Datapath::alignment_fraction_bits,
              "fraction bits of the alignment grid; None: exact, no truncation")
      .def_rw("alignment_floor", &Datapath::alignment_floor,
              "the alignment exponent is at least this (NO_ALIGNMENT_FLOOR: none)")
      .def_rw("block_result_precision", &Datapath::block_result_precision,
              "significant bits kept in a block result")
      .def_rw("nan_bits", &Datapath::nan_bits, "the NaN produced, in the accumulator format");
  enum_field<Rounding, &Datapath::block_rounding>(c, "block_rounding",
                                                  {Rounding::toward_zero, Rounding::nearest_even},
                                                  "rounding of each block result: 'rz' or 'rn'");
  enum_field<AccumulatorEntry, &Datapath::c_entry>(
      c, "c_entry",
      {AccumulatorEntry::aligned_in_first_block, AccumulatorEntry::added_after_blocks},
      "'aligned' (c is a term of the first block) or 'after-blocks' (added at the end, RN)");
  enum_field<Overflow, &Datapath::overflow>(
      c, "overflow", {Overflow::ieee, Overflow::infinity, Overflow::saturate},
      "'ieee', 'infinity' or 'saturate'");
  enum_field<ZeroSign, &Datapath::zero_sign>(c, "zero_sign", {ZeroSign::ieee, ZeroSign::positive},
                                             "sign of a zero block result: 'ieee' or 'positive'");
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
         const std::string& instr) {
        return preset(arch, format_of(input), format_of(accumulator), instr);
      },
      nb::arg("arch"), nb::arg("input") = "fp16", nb::arg("accumulator") = "fp32",
      nb::arg("instr") = "mma.sync",
      "The datapath of `arch` (sm70, sm75, sm80, sm89, sm90, sm100, exact-rn, exact-rz) running "
      "`instr` on `input` with an `accumulator` accumulator. `instr` names the instruction shape "
      "the kernel issues: mma.sync (the largest-K shape of the format), mma.sync.mMnNkK (e.g. "
      "mma.sync.m16n8k8), wmma.mMnNkK (the mma.sync shape it compiles to), wgmma or "
      "wgmma.m64nNkK (sm90), tcgen05 (sm100); instruction_names(arch) lists them. ValueError for "
      "a combination the hardware lacks, naming the shapes it has.");
  m.def("preset_names", &preset_names, "The architecture presets.");
  m.def(
      "instruction_names",
      [](const std::string& arch) {
        const auto names = instruction_names(arch);
        return std::vector<std::string>(names.begin(), names.end());
      },
      nb::arg("arch"),
      "Every instruction name an architecture accepts: mma.sync, its mma.sync.mMnNkK shapes, its "
      "WMMA shapes, wgmma (sm90), tcgen05 (sm100).");
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
        return "tcemu.PresetEntry(" + std::string(e.arch) + ", " + std::string(e.instruction) +
               ", " + std::string(e.datapath.input.name) + " -> " +
               std::string(e.datapath.accumulator.name) + ")";
      });
  m.def("presets", &all_presets,
        "Every (arch, instruction, input, accumulator) combination the hardware has, with its "
        "datapath.");
}

}  // namespace tcemu::python
