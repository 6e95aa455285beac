// fp64 MMA (DMMA): Fp64Datapath, fp64_preset(), fp64_instructions() and fp64_mma(), the cases
// through fp64_mma_element (tcemu/emulator/fp64_mma.hpp, fp64_presets.hpp). Operands are float64
// arrays or uint64 bit patterns; results are float64 arrays carrying the exact bits (a NaN keeps
// the datapath's nan_bits: view the result as uint64).
#include <cstring>
#include <string>
#include <vector>

#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <tcemu/emulator/fp64_presets.hpp>
#include <tcemu/emulator/parallel_for.hpp>

#include "arrays.hpp"
#include "bindings.hpp"

namespace tcemu::python {
namespace {

namespace dl = nb::dlpack;
using HostArray = nb::ndarray<nb::ro, nb::device::cpu>;

// The binary64 bit patterns of a float64 or uint64 host array of `ndim` dimensions, row-major,
// with its shape. TypeError names the argument for any other dtype or device, ValueError for
// another rank.
std::vector<std::uint64_t> words(nb::handle object, const char* name, std::size_t ndim,
                                 std::vector<std::size_t>& shape) {
  HostArray array;
  if (!nb::try_cast(object, array)) {
    throw nb::type_error((std::string(name) +
                          ": expected a float64 or uint64 NumPy array (or a host DLPack producer), "
                          "got " +
                          nb::cast<std::string>(nb::type_name(object.type())))
                             .c_str());
  }
  const dl::dtype t = array.dtype();
  const bool f64 = t == nb::dtype<double>(), u64 = t == nb::dtype<std::uint64_t>();
  if (!f64 && !u64) {
    throw nb::type_error(
        (std::string(name) +
         ": fp64 MMA takes float64 values or uint64 bit patterns, got a dtype of " +
         std::to_string(t.bits) + "-bit elements of DLPack code " + std::to_string(t.code))
            .c_str());
  }
  if (array.ndim() != ndim) {
    throw nb::value_error((std::string(name) + " must have " + std::to_string(ndim) +
                           " dimensions, got " + std::to_string(array.ndim()))
                              .c_str());
  }
  shape.assign(ndim, 0);
  for (std::size_t i = 0; i < ndim; ++i) shape[i] = array.shape(i);
  const std::size_t rows = shape[0], cols = ndim == 2 ? shape[1] : 1;
  const auto* base = static_cast<const unsigned char*>(array.data());
  std::vector<std::uint64_t> out(rows * cols);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) {
      // Strides count elements (DLPack); each element is 8 bytes, copied as its bits.
      const std::int64_t offset = static_cast<std::int64_t>(r) * array.stride(0) +
                                  (ndim == 2 ? static_cast<std::int64_t>(c) * array.stride(1) : 0);
      std::memcpy(&out[r * cols + c], base + offset * 8, 8);
    }
  }
  return out;
}

}  // namespace

void bind_fp64(nb::module_& m) {
  nb::class_<Fp64Datapath> datapath_class(
      m, "Fp64Datapath",
      "An fp64 MMA (DMMA) datapath (emulator/include/tcemu/emulator/fp64_mma.hpp): each "
      "instruction of instruction_k terms is a chain of IEEE multiply-adds from c, visiting k in "
      "`order` ('ascending' or 'descending'), each step 'fused' (one fma) or 'unfused' (product "
      "rounded, then added); `nan` says which NaN a NaN result is. The presets are MMA-Sim "
      "2.1.1's ascending fused chain, with the NaNs the H200 returns.");
  datapath_class.def_rw("instruction_k", &Fp64Datapath::instruction_k)
      .def_prop_rw(
          "order", [](const Fp64Datapath& dp) { return std::string(name_of(dp.order)); },
          [](Fp64Datapath& dp, const std::string& word) {
            const auto o = fp64_order_by_name(word);
            if (!o)
              throw nb::value_error(
                  ("order: '" + word + "' is not ascending or descending").c_str());
            dp.order = *o;
          })
      .def_prop_rw(
          "step", [](const Fp64Datapath& dp) { return std::string(name_of(dp.step)); },
          [](Fp64Datapath& dp, const std::string& word) {
            const auto s = fp64_step_by_name(word);
            if (!s) throw nb::value_error(("step: '" + word + "' is not fused or unfused").c_str());
            dp.step = *s;
          })
      .def_rw("nan_bits", &Fp64Datapath::nan_bits,
              "the NaN of an invalid operation (of every NaN result where nan is 'replace')")
      .def_prop_rw(
          "nan", [](const Fp64Datapath& dp) { return std::string(name_of(dp.nan)); },
          [](Fp64Datapath& dp, const std::string& word) {
            const auto n = fp64_nan_by_name(word);
            if (!n)
              throw nb::value_error(
                  ("nan must be 'propagate' or 'replace', got '" + word + "'").c_str());
            dp.nan = *n;
          },
          "'propagate' (the presets, as the H200: a NaN operand's NaN quieted, b_k's before the "
          "running d's before a_k's) or 'replace' (every NaN result is nan_bits)")
      .def("validate", [](const Fp64Datapath& dp) { validate(dp); })
      .def("copy", [](const Fp64Datapath& dp) { return dp; })
      .def("__eq__", [](const Fp64Datapath& x, const Fp64Datapath& y) { return x == y; })
      .def("__repr__", [](const Fp64Datapath& dp) { return "Fp64Datapath(" + describe(dp) + ")"; });

  nb::class_<Fp64Instruction>(
      m, "Fp64Instruction", "A row of the DMMA table (fp64_presets.hpp): arch, PTX name, m, n, k.")
      .def_prop_ro("arch", [](const Fp64Instruction& r) { return std::string(r.arch); })
      .def_prop_ro("name", [](const Fp64Instruction& r) { return std::string(r.name); })
      .def_ro("m", &Fp64Instruction::m)
      .def_ro("n", &Fp64Instruction::n)
      .def_ro("k", &Fp64Instruction::k)
      .def("__repr__", [](const Fp64Instruction& r) {
        return "Fp64Instruction(" + std::string(r.arch) + " " + std::string(r.name) + ")";
      });

  m.def(
      "fp64_preset",
      [](const std::string& arch, const std::string& instr) { return fp64_preset(arch, instr); },
      nb::arg("arch") = "sm90", nb::arg("instr") = "mma.sync",
      "The fp64 MMA datapath of `arch` (sm80, sm89, sm90, sm100, sm120) running `instr`: "
      "mma.sync (the largest-K shape), mma.sync.m8n8k4 (sm_80+), mma.sync.m16n8k4, "
      "mma.sync.m16n8k8, mma.sync.m16n8k16 (sm_90+). ValueError naming what the architecture "
      "lacks.");
  m.def(
      "fp64_instructions", [] { return std::vector<Fp64Instruction>(fp64_instructions()); },
      "Every row of the DMMA table, by architecture, then K.");
  m.def(
      "fp64_mma",
      [](const Fp64Datapath& datapath, nb::handle a, nb::handle b, nb::handle c, int threads) {
        validate(datapath);
        std::vector<std::size_t> sa, sb, sc;
        const std::vector<std::uint64_t> va = words(a, "a", 2, sa), vb = words(b, "b", 2, sb),
                                         vc = words(c, "c", 1, sc);
        if (sa != sb) {
          throw nb::value_error(("a and b must have the same shape [cases, K], got [" +
                                 std::to_string(sa[0]) + ", " + std::to_string(sa[1]) + "] and [" +
                                 std::to_string(sb[0]) + ", " + std::to_string(sb[1]) + "]")
                                    .c_str());
        }
        if (sc[0] != sa[0]) {
          throw nb::value_error(("c must have one element per case (" + std::to_string(sa[0]) +
                                 "), got " + std::to_string(sc[0]))
                                    .c_str());
        }
        const std::size_t cases = sa[0], k = sa[1];
        const NewArray d = new_array({cases}, dtype_of(Real::fp64));
        auto* out = static_cast<std::uint64_t*>(d.data);
        {
          nb::gil_scoped_release release;
          detail::parallel_for(threads, static_cast<std::int64_t>(cases), 256,
                               [&](std::int64_t begin, std::int64_t end) {
                                 for (std::int64_t i = begin; i < end; ++i) {
                                   const auto row = static_cast<std::size_t>(i) * k;
                                   out[i] =
                                       fp64_mma_element(datapath, std::span(va).subspan(row, k),
                                                        std::span(vb).subspan(row, k),
                                                        vc[static_cast<std::size_t>(i)]);
                                 }
                               });
        }
        return d.object;
      },
      nb::arg("datapath"), nb::arg("a"), nb::arg("b"), nb::arg("c"), nb::arg("threads") = 0,
      "d = a . b + c for each case through an fp64 datapath (fp64_mma_element): a and b "
      "[cases, K], c [cases], each float64 or uint64 bit patterns (K > instruction_k chains "
      "instructions). Returns d [cases] as float64 with the exact bits (view it as uint64).");
}

}  // namespace tcemu::python
