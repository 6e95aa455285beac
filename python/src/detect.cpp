// detect() and detect_gpu(): the datapath that reproduces recorded MMA results
// (tcemu/cases/detect.hpp fit_datapath), from arrays or from the present GPU's instructions by
// the pipeline of `tcemu detect` (tcemu/session/probe.hpp).
#include <string>
#include <utility>
#include <vector>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <tcemu/cases/case_generator.hpp>
#include <tcemu/cases/detect.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/session/probe.hpp>

#include "bindings.hpp"
#include "cases.hpp"
#include "scales.hpp"

namespace tcemu::python {

void bind_detect(nb::module_& m) {
  nb::class_<DatapathFit>(m, "DatapathFit", "The datapath detect() found and how well it fits.")
      .def_ro("datapath", &DatapathFit::datapath)
      .def_ro("cases", &DatapathFit::cases)
      .def_ro("mismatches", &DatapathFit::mismatches, "results of `datapath` that differ")
      .def_ro("undetermined", &DatapathFit::undetermined, "fields the cases do not decide")
      .def("__repr__", [](const DatapathFit& f) {
        return "<tcemu.DatapathFit " + std::to_string(f.mismatches) + " mismatches in " +
               std::to_string(f.cases) + " cases: " + describe(f.datapath) + ">";
      });

  m.def(
      "detect",
      [](nb::handle a, nb::handle b, nb::handle c, nb::handle d, const FormatArg& input_arg,
         const FormatArg& accumulator_arg, std::optional<FormatArg> input_b_arg, int scale_block,
         std::optional<FormatArg> scale_format_arg, nb::handle scale_a, nb::handle scale_b) {
        const FloatFormat input = format_of(input_arg), accumulator = format_of(accumulator_arg);
        // The inputs' layout the instruction fixes: B's format and the scales (never searched).
        Datapath inputs = baseline_datapath(input, accumulator, 1);
        if (input_b_arg) {
          inputs.input_b = format_of(*input_b_arg);
          inputs.has_input_b = !(inputs.input_b == input);
        }
        if (scale_block < 0) throw nb::value_error("detect: scale_block must not be negative");
        if ((scale_block > 0) != scale_format_arg.has_value() ||
            (scale_block > 0) != !scale_a.is_none() || (scale_block > 0) != !scale_b.is_none()) {
          throw nb::value_error(
              "detect: scale_block > 0, scale_format, scale_a and scale_b come together (the "
              "scales of block-scaled cases), or none of them");
        }
        if (scale_block > 0) {
          const FloatFormat scale_format = format_of(*scale_format_arg);
          if (!is_scale_format(scale_format)) {
            throw nb::value_error(("detect: scale_format " + std::string(scale_format.name) +
                                   " is not a scale format (ue8m0 or ue4m3)")
                                      .c_str());
          }
          inputs.block_scaling = BlockScaling{scale_block, scale_format, scale_format};
        }
        std::vector<MmaCase> cases = cases_from(a, b, c, d, input, inputs.b_format(), accumulator);
        if (cases.empty()) throw nb::value_error("detect: no cases");
        const std::size_t k = cases.front().a.size();
        if (inputs.block_scaled()) {
          const auto s = static_cast<std::int64_t>(scale_count(inputs, k));
          const auto rows = static_cast<std::int64_t>(cases.size());
          const BitMatrix sa = scale_matrix(scale_a, "scale_a", inputs.block_scaling.scale_a, rows,
                                            s, "cases x ceil(K / scale_block)");
          const BitMatrix sb = scale_matrix(scale_b, "scale_b", inputs.block_scaling.scale_b, rows,
                                            s, "cases x ceil(K / scale_block)");
          for (std::int64_t i = 0; i < rows; ++i) {
            MmaCase& x = cases[static_cast<std::size_t>(i)];
            for (std::int64_t j = 0; j < s; ++j) {
              x.scale_a.push_back(sa.view.get(i, j));
              x.scale_b.push_back(sb.view.get(i, j));
            }
          }
        }
        const Datapath start = baseline_datapath(inputs, static_cast<int>(k));
        try {
          validate(start);
        } catch (const std::invalid_argument& e) {
          throw nb::value_error(("detect: K = " + std::to_string(k) + ": " + e.what()).c_str());
        }
        nb::gil_scoped_release release;
        return fit_datapath(start, cases);
      },
      nb::arg("a"), nb::arg("b"), nb::arg("c"), nb::arg("d"), nb::kw_only(), nb::arg("input"),
      nb::arg("accumulator"), nb::arg("input_b") = nb::none(), nb::arg("scale_block") = 0,
      nb::arg("scale_format") = nb::none(), nb::arg("scale_a") = nb::none(),
      nb::arg("scale_b") = nb::none(),
      "The datapath that reproduces the recorded results d of the cases (a, b [cases, K] with K "
      "one instruction's, c, d [cases]; e.g. probe()'s), searched field by field. No GPU needed. "
      "B in `input_b` where it differs (kind::f8f6f4); block-scaled cases give scale_block, "
      "scale_format (ue8m0 or ue4m3) and scale_a, scale_b [cases, ceil(K / scale_block)], and the "
      "search then also fits G (group_terms), F and the zero exponent (alignment_floor) and the "
      "NaN-scale rule.");

  m.def(
      "detect_gpu",
      [](std::optional<FormatArg> input_arg, std::optional<FormatArg> accumulator_arg,
         std::size_t random, std::uint64_t seed,
         const std::string& instr) -> std::vector<DatapathFit> {
        std::optional<FloatFormat> input, accumulator;
        if (input_arg) input = format_of(*input_arg);
        if (accumulator_arg) accumulator = format_of(*accumulator_arg);
        const session::ProbeDevice device = probe_device_for("detect_gpu (" + instr + ")", instr);
        const std::vector<std::string> shapes = probe_shapes(device, instr);
        std::vector<DatapathFit> fits;
        nb::gil_scoped_release release;
        for (const std::string& shape : shapes) {
          const std::vector<session::FormatPair> pairs =
              input || accumulator
                  ? std::vector<session::FormatPair>{{input.value_or(formats::fp16),
                                                      accumulator.value_or(formats::fp32)}}
                  : session::instruction_pairs(device, shape);
          for (const session::FormatPair& pair : pairs) {
            fits.push_back(
                session::is_sparse_instruction(shape)
                    ? session::fit_probe(session::probe_sparse(device, shape, pair, random, seed))
                    : session::fit_probe(session::probe_dense(device, shape, pair, random, seed)));
          }
        }
        return fits;
      },
      nb::arg("input") = nb::none(), nb::arg("accumulator") = nb::none(), nb::arg("random") = 20000,
      nb::arg("seed") = 1, nb::arg("instr") = "mma.sync",
      "Infers the datapath of the present GPU's `instr` (mma.sync, a shape as probe() takes it, "
      "or 'all': every dense and sparse shape) from `random` generated and the crafted cases, for "
      "every input and accumulator format it has (or the one named), as `tcemu detect` does; a "
      "sparse shape's over the K/2 kept products of each case. Returns a DatapathFit per shape "
      "and format pair. ValueError for a name no runner issues, RuntimeError without a GPU.");
}

}  // namespace tcemu::python
