// probe() and gpu_mma(): cases through one instruction of the present GPU (tcemu/gpu/
// mma_runner.hpp: mma.sync, every dense shape the probe runners issue, wgmma), the GPU's own bits
// to hold against the emulator's, as `tcemu probe` records them.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <tcemu/cases/case_generator.hpp>
#include <tcemu/emulator/presets.hpp>
#if TCEMU_WITH_GPU
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/mma_runner.hpp>
#endif

#include "backends.hpp"
#include "bindings.hpp"
#include "cases.hpp"

namespace tcemu::python {

#if TCEMU_WITH_GPU
void check_instruction(const std::string& instr) {
  std::vector<std::string_view> names = gpu::probe_instructions(90);
  for (std::string_view name : gpu::wide_wgmma_instructions(90)) names.push_back(name);
  if (instr == "mma.sync" || std::find(names.begin(), names.end(), instr) != names.end()) return;
  std::string list = "mma.sync";
  for (std::string_view name : names) list += ", " + std::string(name);
  throw nb::value_error(
      ("instr '" + instr + "' is no dense shape the probe runners issue; they issue: " + list)
          .c_str());
}
#endif

namespace {

// D(0, 0) of one `instr` instruction per case, on the present GPU.
std::vector<std::uint32_t> run(const std::string& instr, const FloatFormat& input,
                               const FloatFormat& accumulator, const std::vector<MmaCase>& cases) {
#if TCEMU_WITH_GPU
  check_instruction(instr);
  gpu::require_device();  // "no CUDA device (...)" before any CUDA call fails less clearly
  nb::gil_scoped_release release;
  return instr == "mma.sync" ? gpu::run_mma_sync(input, accumulator, cases)
                             : gpu::run_instruction(instr, input, accumulator, cases);
#else
  (void)input;
  (void)accumulator;
  (void)cases;
  no_gpu_build(instr);
#endif
}

}  // namespace

void bind_probe(nb::module_& m) {
  m.def(
      "gpu_mma",
      [](nb::handle a, nb::handle b, nb::handle c, const FormatArg& input_arg,
         const FormatArg& accumulator_arg, const std::string& instr) {
        const FloatFormat input = format_of(input_arg), accumulator = format_of(accumulator_arg);
        const std::vector<MmaCase> cases = cases_from(a, b, c, nb::none(), input, accumulator);
        const nb::dict out =
            cases_to(cases, run(instr, input, accumulator, cases), input, accumulator);
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
         std::size_t random, std::uint64_t seed) -> nb::dict {
        const FloatFormat input = format_of(input_arg), accumulator = format_of(accumulator_arg);
#if TCEMU_WITH_GPU
        const gpu::DeviceInfo device = gpu::require_device();
        const std::string arch = device.arch_preset().empty() ? "sm90" : device.arch_preset();
        check_instruction(instr);
        const ProbeCases probe =
            probe_cases(preset(arch, input, accumulator, instr),
                        instruction_shape_k(arch, input, accumulator, instr), random, seed);
        nb::dict out =
            cases_to(probe.cases, run(instr, input, accumulator, probe.cases), input, accumulator);
        out["names"] = nb::cast(probe.names);
        out["device"] = device.name;
        out["arch"] = arch;
        return out;
#else
        (void)input;
        (void)accumulator;
        (void)random;
        (void)seed;
        no_gpu_build("probe (" + instr + ")");
#endif
      },
      nb::arg("input") = "fp16", nb::arg("accumulator") = "fp32", nb::arg("instr") = "mma.sync",
      nb::arg("random") = 100000, nb::arg("seed") = 1,
      "Runs `random` generated cases and the crafted ones through the present GPU's `instr` "
      "(mma.sync, or a dense shape as gpu_mma() takes it), one case per instruction, as `tcemu "
      "probe` does; the cases are generated for that shape's preset and K. Returns a dict: a, b "
      "[cases, K] and c, d [cases] bit patterns (d: the GPU's results), names (the crafted cases' "
      "names, '' for random ones), device, and arch (its preset). The sparse (mma.sp) and "
      "integer shapes are `tcemu probe`'s only. RuntimeError without a GPU.");
}

}  // namespace tcemu::python
