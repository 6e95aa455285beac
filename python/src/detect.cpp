// detect() and detect_gpu(): the datapath that reproduces recorded MMA results
// (tcemu/cases/detect.hpp fit_datapath), from arrays or from the present GPU's mma.sync, as
// `tcemu detect` infers it.
#include <string>
#include <utility>
#include <vector>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <tcemu/cases/case_generator.hpp>
#include <tcemu/cases/detect.hpp>
#include <tcemu/emulator/presets.hpp>
#if TCEMU_WITH_GPU
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/mma_runner.hpp>
#endif

#include "backends.hpp"
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
#if TCEMU_WITH_GPU
        check_instruction(instr);
        const gpu::DeviceInfo device = gpu::require_device();
        const std::string arch = device.arch_preset().empty() ? "sm90" : device.arch_preset();
        const int cc = device.compute_major * 10 + device.compute_minor;
        const auto pairs =
            input || accumulator
                ? std::vector<std::pair<FloatFormat, FloatFormat>>{{input.value_or(formats::fp16),
                                                                    accumulator.value_or(
                                                                        formats::fp32)}}
            : instr == "mma.sync" ? gpu::mma_sync_pairs(cc)
                                  : gpu::instruction_pairs(instr, cc);
        std::vector<DatapathFit> fits;
        nb::gil_scoped_release release;
        for (const auto& [in, acc] : pairs) {
          const int k = instruction_shape_k(arch, in, acc, instr);
          ProbeCases probe = probe_cases(preset(arch, in, acc, instr), k, random, seed);
          const std::vector<std::uint32_t> d =
              instr == "mma.sync" ? gpu::run_mma_sync(in, acc, probe.cases)
                                  : gpu::run_instruction(instr, in, acc, probe.cases);
          for (std::size_t i = 0; i < d.size(); ++i) probe.cases[i].d = d[i];
          fits.push_back(fit_datapath(baseline_datapath(in, acc, k), probe.cases));
        }
        return fits;
#else
        (void)input;
        (void)accumulator;
        (void)random;
        (void)seed;
        no_gpu_build("detect_gpu (" + instr + ")");
#endif
      },
      nb::arg("input") = nb::none(), nb::arg("accumulator") = nb::none(), nb::arg("random") = 20000,
      nb::arg("seed") = 1, nb::arg("instr") = "mma.sync",
      "Infers the datapath of the present GPU's `instr` (mma.sync, or a dense shape as gpu_mma() "
      "takes it) from `random` generated and the crafted cases, for every input and accumulator "
      "format it has (or the one named), as `tcemu detect` does. Returns a DatapathFit per "
      "format pair. ValueError for a name no runner issues, RuntimeError without a GPU.");
}

}  // namespace tcemu::python
