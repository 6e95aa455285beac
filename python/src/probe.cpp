// probe() and gpu_mma(): cases through one instruction of the present GPU (every dense shape the
// probe runners issue, wgmma, and the sparse mma.sp shapes for probe()), the GPU's own bits to
// hold against the emulator's, by the pipeline of `tcemu probe` (tcemu/session/probe.hpp).
#include <optional>
#include <string>
#include <vector>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <tcemu/session/arguments.hpp>
#include <tcemu/session/backends.hpp>
#include <tcemu/session/probe.hpp>

#include "backends.hpp"
#include "bindings.hpp"
#include "cases.hpp"

namespace tcemu::python {

session::ProbeDevice probe_device_for(const std::string& what, const std::string& instr) {
  if (!session::gpu_built()) no_gpu_build(what);
  return session::probe_device(instr);
}

std::vector<std::string> probe_shapes(const session::ProbeDevice& device,
                                      const std::string& instr) {
  try {
    return session::probe_instructions(device, instr);
  } catch (const session::UsageError& e) {
    throw nb::value_error(e.what());
  }
}

namespace {

// The one shape `instr` names on `device` (ValueError for "all", a sparse shape unless
// `sparse_too`, or a name the runners do not issue).
std::string one_shape(const session::ProbeDevice& device, const std::string& instr,
                      bool sparse_too) {
  const std::vector<std::string> shapes = probe_shapes(device, instr);
  if (shapes.size() != 1 || (!sparse_too && session::is_sparse_instruction(instr))) {
    throw nb::value_error(("instr '" + instr + "': this call takes one " +
                           (sparse_too ? "" : "dense ") + "instruction shape")
                              .c_str());
  }
  return shapes.front();
}

}  // namespace

void bind_probe(nb::module_& m) {
  m.def(
      "gpu_mma",
      [](nb::handle a, nb::handle b, nb::handle c, const FormatArg& input_arg,
         const FormatArg& accumulator_arg, const std::string& instr) {
        const FloatFormat input = format_of(input_arg), accumulator = format_of(accumulator_arg);
        const std::vector<MmaCase> cases =
            cases_from(a, b, c, nb::none(), input, input, accumulator);
        const session::ProbeDevice device = probe_device_for("gpu_mma (" + instr + ")", instr);
        const std::string shape = one_shape(device, instr, false);
        std::vector<std::uint32_t> d;
        {
          nb::gil_scoped_release release;
          d = session::run_cases(shape, {input, accumulator}, cases);
        }
        const nb::dict out = cases_to(cases, d, input, accumulator);
        return nb::object(out["d"]);
      },
      nb::arg("a"), nb::arg("b"), nb::arg("c"), nb::kw_only(), nb::arg("input"),
      nb::arg("accumulator"), nb::arg("instr") = "mma.sync",
      "d of each case through one `instr` of the present GPU (mma.sync; a dense shape as `tcemu "
      "probe --instr` names it: mma.sync.m16n8k8, wmma.m16n16k16, wgmma, wgmma.m64n256k16, ...): "
      "a, b [cases, K] with K that of the instruction (mma.sync: fp16/bf16 16, tf32 8, fp8 32), "
      "c [cases]. Returns d [cases] as unsigned bit patterns. ValueError for a name no runner "
      "issues, RuntimeError without a GPU.");
  m.def(
      "probe",
      [](const FormatArg& input_arg, const FormatArg& accumulator_arg, const std::string& instr,
         std::size_t random, std::uint64_t seed,
         const std::optional<FormatArg>& input_b_arg) -> nb::dict {
        const FloatFormat input = format_of(input_arg), accumulator = format_of(accumulator_arg);
        std::optional<FloatFormat> input_b;
        if (input_b_arg) input_b = format_of(*input_b_arg);
        const session::ProbeDevice device = probe_device_for("probe (" + instr + ")", instr);
        const std::string shape = one_shape(device, instr, true);
        nb::dict out;
        if (session::is_sparse_instruction(shape)) {
          session::SparseProbe p;
          {
            nb::gil_scoped_release release;
            p = session::probe_sparse(device, shape, {input, accumulator}, random, seed);
          }
          out = sparse_cases_to(p.probe.cases, input, accumulator);
          out["names"] = nb::cast(p.probe.names);
        } else {
          session::DenseProbe p;
          {
            nb::gil_scoped_release release;
            p = session::probe_dense(device, shape, {input, accumulator}, random, seed, input_b);
          }
          std::vector<std::uint32_t> d;
          d.reserve(p.probe.cases.size());
          for (const MmaCase& c : p.probe.cases) d.push_back(c.d.value());
          out = cases_to(p.probe.cases, d, p.datapath);
          out["names"] = nb::cast(p.probe.names);
        }
        out["device"] = device.name;
        out["arch"] = device.arch;
        return out;
      },
      nb::arg("input") = "fp16", nb::arg("accumulator") = "fp32", nb::arg("instr") = "mma.sync",
      nb::arg("random") = 100000, nb::arg("seed") = 1, nb::arg("input_b") = nb::none(),
      "Runs `random` generated cases and the crafted ones through the present GPU's `instr` "
      "(mma.sync, a dense shape as gpu_mma() takes it, or a sparse shape: mma.sp.m16n8k8, "
      "mma.sp.m16n8k16, mma.sp.m16n8k32, mma.sp.m16n8k64), one case per instruction, as `tcemu "
      "probe` does; the cases are generated for that shape's preset and K. Returns a dict: a, b "
      "[cases, K] and c, d [cases] bit patterns (d: the GPU's results), names (the crafted cases' "
      "names, '' for random ones), device, and arch (its preset). A sparse shape's a holds the "
      "K/2 kept values of each case and index [cases, K/2] (uint8) their positions in their "
      "groups of four (tcemu/cases/sparse_case.hpp); b holds all K. The integer shapes are "
      "`tcemu probe`'s only. The Blackwell instructions (`tcemu probe --help`: tcgen05, "
      "tcgen05.mxf4nvf4.block16.ue4m3, mma.sync.m16n8k64.mxf4.block32, ...; built for sm_100a and "
      "sm_120a, not yet run on Blackwell hardware) take b in input_b (default: input) and return "
      "scale_a, scale_b [cases, S] on the block-scaled kinds; on another GPU they raise "
      "RuntimeError naming the GPU they need. ValueError for a name no runner issues, "
      "RuntimeError without a GPU.");
}

}  // namespace tcemu::python
