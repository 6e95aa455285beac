// probe() and gpu_mma(): cases through one mma.sync or wgmma instruction of the present GPU
// (tcemu/gpu/mma_runner.hpp), the GPU's own bits to hold against the emulator's, as `tcemu probe`
// records them.
#include <string>
#include <vector>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <tcemu/emulator/case_generator.hpp>
#include <tcemu/emulator/presets.hpp>
#if TCEMU_WITH_GPU
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/mma_runner.hpp>
#endif

#include "backends.hpp"
#include "bindings.hpp"
#include "cases.hpp"

namespace tcemu::python {
namespace {

// D(0, 0) of one `instr` instruction per case, on the present GPU.
std::vector<std::uint32_t> run(const std::string& instr, const FloatFormat& input,
                               const FloatFormat& accumulator, const std::vector<MmaCase>& cases) {
  if (instr != "mma.sync" && instr != "wgmma") {
    throw nb::value_error(("instr must be 'mma.sync' or 'wgmma', got '" + instr + "'").c_str());
  }
#if TCEMU_WITH_GPU
  gpu::require_device();  // "no CUDA device (...)" before any CUDA call fails less clearly
  nb::gil_scoped_release release;
  return instr == "wgmma" ? gpu::run_wgmma(input, accumulator, cases)
                          : gpu::run_mma_sync(input, accumulator, cases);
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
      "d of each case through one `instr` (mma.sync, or wgmma on sm_90a) of the present GPU: a, "
      "b [cases, K] with K that of the instruction (fp16/bf16 16, tf32 8, fp8 32), c [cases]. "
      "Returns d [cases] as unsigned bit patterns. RuntimeError without a GPU.");
  m.def(
      "probe",
      [](const FormatArg& input_arg, const FormatArg& accumulator_arg, const std::string& instr,
         std::size_t random, std::uint64_t seed) -> nb::dict {
        const FloatFormat input = format_of(input_arg), accumulator = format_of(accumulator_arg);
#if TCEMU_WITH_GPU
        const gpu::DeviceInfo device = gpu::require_device();
        const std::string arch = device.arch_preset().empty() ? "sm90" : device.arch_preset();
        const ProbeCases probe =
            probe_cases(preset(arch, input, accumulator), gpu::mma_sync_k(input), random, seed);
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
      "Runs `random` generated cases and the crafted ones through the present GPU's mma.sync "
      "(or wgmma on sm_90a), one case per instruction, as `tcemu probe` does. Returns a dict: a, "
      "b [cases, K] and c, d [cases] bit patterns (d: the GPU's results), names (the crafted "
      "cases' names, '' for random ones), device, and arch (its preset). RuntimeError without "
      "a GPU.");
}

}  // namespace tcemu::python
