// The parts of the extension module tcemu._tcemu, one binding file per concept, and the argument
// conversions they share.
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/variant.h>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/gemm.hpp>
#include <tcemu/session/probe.hpp>

namespace tcemu::python {

namespace nb = nanobind;

void bind_formats(nb::module_& m);   // Format, formats()
void bind_datapath(nb::module_& m);  // Datapath, preset(), presets(), block_datapath()
void bind_mma(nb::module_& m);       // mma(): cases through mma_element
void bind_fp64(nb::module_& m);      // Fp64Datapath, fp64_preset(), fp64_mma(): fp64 MMA
void bind_matmul(nb::module_& m);    // matmul(): the emulated GEMM, or the GPU's mma_gemm
void bind_ozaki(nb::module_& m);     // ozaki_gemm()
void bind_markidis(nb::module_& m);  // markidis_gemm(), markidis_schemes()
void bind_accurate(nb::module_& m);  // accurate_gemm(): Dot2 and ExBLAS-style
void bind_validate(nb::module_& m);  // compare(), validate(): mismatch reports
void bind_devices(nb::module_& m);   // devices(), has_gpu()
void bind_probe(nb::module_& m);     // probe(): cases through the GPU's own instructions
void bind_detect(nb::module_& m);    // detect(): the datapath that reproduces recorded results
void bind_quantize(nb::module_& m);  // quantize_mx(), quantize_nvfp4()

// The present GPU for the call `what` (probe(), gpu_mma(), detect_gpu()) of instruction `instr`;
// RuntimeError in a build without the CUDA backend or where there is no GPU, naming the GPU a
// Blackwell `instr` needs (probe.cpp).
session::ProbeDevice probe_device_for(const std::string& what, const std::string& instr);

// The instruction shapes `instr` names on `device` (session::probe_instructions: "mma.sync",
// "all", or a shape the probe runners issue there); ValueError listing them otherwise.
std::vector<std::string> probe_shapes(const session::ProbeDevice& device, const std::string& instr);

// The format called `name`; ValueError listing the names otherwise.
FloatFormat format_named(std::string_view name);

// A format argument: a Format or its name (ValueError for an unknown name).
using FormatArg = std::variant<FloatFormat, std::string>;
FloatFormat format_of(const FormatArg& arg);

// GemmOptions::c_input from its word, "epilogue" or "initial_accumulator"; ValueError otherwise.
CInput c_input_named(const std::string& word);

}  // namespace tcemu::python
