// Format: the number formats Tensor Cores read and write (tcemu/emulator/format.hpp), by name.
#include <string>
#include <vector>

#include <nanobind/operators.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"

namespace tcemu::python {
namespace {

// In the order of format_by_name (format.hpp): the element formats, then the scale formats.
constexpr FloatFormat kFormats[] = {formats::fp32, formats::fp16,  formats::bf16, formats::tf32,
                                    formats::e4m3, formats::e5m2,  formats::e3m2, formats::e2m3,
                                    formats::e2m1, formats::ue8m0, formats::ue4m3};

const char* special_name(SpecialEncoding s) {
  switch (s) {
    case SpecialEncoding::ieee:
      return "ieee";
    case SpecialEncoding::fn_e4m3:
      return "fn_e4m3";
    case SpecialEncoding::finite:
      return "finite";
    case SpecialEncoding::e8m0:
      return "e8m0";
  }
  return "";
}

}  // namespace

FloatFormat format_named(std::string_view name) {
  if (const auto f = format_by_name(name)) return *f;
  std::string names;
  for (const FloatFormat& f : kFormats) names += (names.empty() ? "" : ", ") + std::string(f.name);
  throw nb::value_error(("unknown format '" + std::string(name) + "': " + names).c_str());
}

FloatFormat format_of(const FormatArg& arg) {
  if (const auto* name = std::get_if<std::string>(&arg)) return format_named(*name);
  return std::get<FloatFormat>(arg);
}

void bind_formats(nb::module_& m) {
  nb::class_<FloatFormat>(m, "Format",
                          "A number format by name: fp32, fp16, bf16, tf32 (in an fp32 "
                          "container), e4m3, e5m2, the FP6 formats e3m2 and e2m3 and the FP4 "
                          "format e2m1 (no Inf or NaN), and the unsigned scale formats ue8m0 (a "
                          "power of two, 0xFF NaN) and ue4m3 (e4m3 without its sign bit). A "
                          "Datapath field takes a Format or its name.")
      .def("__init__",
           [](FloatFormat* f, const std::string& name) { new (f) FloatFormat(format_named(name)); })
      .def_prop_ro("name", [](const FloatFormat& f) { return std::string(f.name); })
      .def_ro("exponent_bits", &FloatFormat::exponent_bits)
      .def_ro("fraction_bits", &FloatFormat::fraction_bits, "stored, without the implicit bit")
      .def_ro("padding_bits", &FloatFormat::padding_bits, "low container bits ignored (tf32: 13)")
      .def_prop_ro(
          "special", [](const FloatFormat& f) { return special_name(f.special); },
          "Inf and NaN: 'ieee', 'fn_e4m3' (no Inf; S.1111.111 NaN), 'finite' (none: FP6, FP4) "
          "or 'e8m0' (powers of two; all ones NaN)")
      .def_ro("is_signed", &FloatFormat::is_signed, "False for the scale formats ue8m0, ue4m3")
      .def_prop_ro(
          "is_scale", [](const FloatFormat& f) { return is_scale_format(f); },
          "True for the formats a block scale may have (ue8m0, ue4m3)")
      .def_prop_ro("storage_bits", &FloatFormat::storage_bits)
      .def_prop_ro("container_bits", &FloatFormat::container_bits)
      .def_prop_ro("bias", &FloatFormat::bias)
      .def_prop_ro("min_exponent", &FloatFormat::min_exponent)
      .def_prop_ro("max_exponent", &FloatFormat::max_exponent)
      .def(nb::self == nb::self)
      .def("__hash__", [](const FloatFormat& f) { return std::hash<std::string_view>{}(f.name); })
      .def("__str__", [](const FloatFormat& f) { return std::string(f.name); })
      .def("__repr__",
           [](const FloatFormat& f) { return "tcemu.Format('" + std::string(f.name) + "')"; });
  m.def(
      "formats", [] { return std::vector<FloatFormat>(std::begin(kFormats), std::end(kFormats)); },
      "Every format by name.");
}

}  // namespace tcemu::python
