// Format: the number formats Tensor Cores read and write (tcemu/emulator/format.hpp), by name.
#include <string>
#include <vector>

#include <nanobind/operators.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"

namespace tcemu::python {
namespace {

constexpr FloatFormat kFormats[] = {formats::fp32, formats::fp16, formats::bf16,
                                    formats::tf32, formats::e4m3, formats::e5m2};

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
                          "container), e4m3, e5m2. A Datapath field takes a Format or its name.")
      .def("__init__",
           [](FloatFormat* f, const std::string& name) { new (f) FloatFormat(format_named(name)); })
      .def_prop_ro("name", [](const FloatFormat& f) { return std::string(f.name); })
      .def_ro("exponent_bits", &FloatFormat::exponent_bits)
      .def_ro("fraction_bits", &FloatFormat::fraction_bits, "stored, without the implicit bit")
      .def_ro("padding_bits", &FloatFormat::padding_bits, "low container bits ignored (tf32: 13)")
      .def_prop_ro("special",
                   [](const FloatFormat& f) {
                     return f.special == SpecialEncoding::ieee ? "ieee" : "fn_e4m3";
                   })
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
