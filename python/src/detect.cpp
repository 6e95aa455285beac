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
#include <tcemu/emulator/presets.hpp>
#include <tcemu/session/probe.hpp>

#include "bindings.hpp"
#include "cases.hpp"

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
         const FormatArg& accumulator_arg) {
        const FloatFormat input = format_of(input_arg), accumulator = format_of(accumulator_arg);
        const std::vector<MmaCase> cases = cases_from(a, b, c, d, input, accumulator);
        if (cases.empty()) throw nb::value_error("detect: no cases");
        const int k = static_cast<int>(cases.front().a.size());
        nb::gil_scoped_release release;
        return fit_datapath(baseline_datapath(input, accumulator, k), cases);
      },
      nb::arg("a"), nb::arg("b"), nb::arg("c"), nb::arg("d"), nb::kw_only(), nb::arg("input"),
      nb::arg("accumulator"),
      "The datapath that reproduces the recorded results d of the cases (a, b [cases, K] with K "
      "one instruction's, c, d [cases]; e.g. probe()'s), searched field by field. No GPU needed.");

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
