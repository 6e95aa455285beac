// Mismatch reports: compare() of two matrices bit for bit (tcemu/cases/matrix_comparison.hpp)
// and validate() of a GEMM result computed elsewhere against the emulated GEMM of its inputs
// (tcemu/cases/gemm_check.hpp).
#include <optional>
#include <string>
#include <vector>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <tcemu/cases/gemm_check.hpp>
#include <tcemu/cases/matrix_comparison.hpp>
#include <tcemu/emulator/mma.hpp>

#include "arrays.hpp"
#include "bindings.hpp"
#include "scales.hpp"

namespace tcemu::python {
namespace {

// A comparison with its text (format_comparison's, or check_gemm's with each element's inputs).
struct Report {
  MatrixComparison comparison;
  std::string text;
};

using Difference = std::tuple<std::int64_t, std::int64_t, std::uint32_t, std::uint32_t,
                              std::optional<std::uint64_t>>;

// The format of `expected` and `got`: `named`, else the one their dtypes name.
FloatFormat comparison_format(const Operand& expected, const Operand& got,
                              const std::optional<FloatFormat>& named) {
  if (named) return *named;
  if (expected.typed) return *expected.typed;
  if (got.typed) return *got.typed;
  throw nb::type_error(
      "compare: unsigned bit patterns need format= (the format they hold, e.g. 'fp32')");
}

}  // namespace

void bind_validate(nb::module_& m) {
  nb::class_<Report>(m, "Comparison",
                     "Which elements of a result differ from the expected ones, and by how many "
                     "ulps; str() is the text report.")
      .def_prop_ro("format", [](const Report& r) { return r.comparison.format; })
      .def_prop_ro("rows", [](const Report& r) { return r.comparison.rows; })
      .def_prop_ro("cols", [](const Report& r) { return r.comparison.cols; })
      .def_prop_ro(
          "count", [](const Report& r) { return r.comparison.differing; },
          "elements whose bits differ")
      .def_prop_ro(
          "nan_involved", [](const Report& r) { return r.comparison.nan_involved; },
          "of those, elements with a NaN on either side (no ulp distance)")
      .def_prop_ro(
          "share", [](const Report& r) { return r.comparison.share(); },
          "count / elements (0 for an empty matrix)")
      .def_prop_ro(
          "max_ulps", [](const Report& r) { return r.comparison.max_ulps; },
          "the largest ulp distance among the differing elements without a NaN")
      .def_prop_ro(
          "histogram",
          [](const Report& r) {
            return std::vector<std::int64_t>(r.comparison.ulp_histogram.begin(),
                                             r.comparison.ulp_histogram.end());
          },
          "histogram[w]: differing elements whose ulp distance has bit width w ([0]: equal in "
          "value, not in bits; [1]: 1 ulp; [2]: 2-3; [3]: 4-7; ...)")
      .def_prop_ro(
          "differences",
          [](const Report& r) {
            std::vector<Difference> out;
            for (const DifferingElement& e : r.comparison.first) {
              out.emplace_back(e.row, e.col, e.expected, e.got, e.ulps);
            }
            return out;
          },
          "the first differing elements, row by row: (i, j, expected bits, got bits, ulps or "
          "None for a NaN)")
      .def_prop_ro("equal", [](const Report& r) { return r.comparison.equal(); })
      .def("__bool__", [](const Report& r) { return r.comparison.equal(); })
      .def("__str__", [](const Report& r) { return r.text; })
      .def("__repr__", [](const Report& r) {
        return "<tcemu.Comparison " + std::to_string(r.comparison.differing) + " of " +
               std::to_string(r.comparison.rows * r.comparison.cols) + " elements differ>";
      });

  m.def(
      "compare",
      [](nb::handle expected, nb::handle got, std::optional<FormatArg> format,
         std::int64_t listed) {
        const Operand oe = operand(expected, "expected"), og = operand(got, "got");
        const FloatFormat f =
            comparison_format(oe, og, format ? std::optional(format_of(*format)) : std::nullopt);
        const BitMatrix me = bit_matrix(oe, f), mg = bit_matrix(og, f);
        Report r{compare_matrices(me.view, mg.view, listed), {}};
        r.text = format_comparison(r.comparison);
        return r;
      },
      nb::arg("expected"), nb::arg("got"), nb::kw_only(), nb::arg("format") = nb::none(),
      nb::arg("listed") = 10,
      "Compares two matrices of one format bit for bit (float dtypes, or uint bit patterns with "
      "format=); lists the first `listed` differing elements.");

  m.def(
      "validate",
      [](nb::handle a, nb::handle b, nb::handle c, nb::handle d_recorded, const Datapath& datapath,
         nb::handle scale_a, nb::handle scale_b, const PackedArg& packed, float alpha, float beta,
         const std::string& c_input, std::int64_t takeout_every_k, int threads,
         std::int64_t listed) {
        validate(datapath);
        const std::optional<NibbleOrder> packing = fp4_packing("validate", datapath, packed);
        const bool scaled = takes_scales("validate", datapath, scale_a, scale_b,
                                         "scale_a m x ceil(k / scale_block), scale_b "
                                         "ceil(k / scale_block) x n");
        const BitMatrix ma = input_matrix(operand(a, "a"), datapath.input, packing, 1);
        const BitMatrix mb = input_matrix(operand(b, "b"), datapath.b_format(), packing, 0);
        std::optional<BitMatrix> mc;
        if (!c.is_none()) mc = bit_matrix(operand(c, "c"), datapath.accumulator);
        const BitMatrix md = bit_matrix(operand(d_recorded, "d_recorded"), datapath.accumulator);
        std::optional<ScaleMatrices> scales;
        if (scaled) {
          const std::int64_t rows = ma.view.rows, k = ma.view.cols, cols = mb.view.cols;
          const auto s =
              static_cast<std::int64_t>(scale_count(datapath, static_cast<std::size_t>(k)));
          const BlockScaling& f = datapath.block_scaling;
          scales = ScaleMatrices{
              scale_matrix(scale_a, "scale_a", f.scale_a, rows, s, "m x ceil(k / scale_block)"),
              scale_matrix(scale_b, "scale_b", f.scale_b, s, cols, "ceil(k / scale_block) x n")};
        }
        const GemmOptions options{.alpha = alpha,
                                  .beta = beta,
                                  .c_input = c_input_named(c_input),
                                  .takeout_every_k = takeout_every_k,
                                  .threads = threads};
        const auto vc = mc ? std::optional<ConstMatrixView>(mc->view) : std::nullopt;
        GemmCheck check;
        {
          nb::gil_scoped_release release;
          check = scales ? check_gemm(datapath, options, ma.view, mb.view, scales->view(), vc,
                                      md.view, listed)
                         : check_gemm(datapath, options, ma.view, mb.view, vc, md.view, listed);
        }
        return Report{std::move(check.comparison), std::move(check.report)};
      },
      nb::arg("a"), nb::arg("b"), nb::arg("c").none(), nb::arg("d_recorded"), nb::kw_only(),
      nb::arg("datapath"), nb::arg("scale_a") = nb::none(), nb::arg("scale_b") = nb::none(),
      nb::arg("packed") = false, nb::arg("alpha") = 1.0f, nb::arg("beta") = 0.0f,
      nb::arg("c_input") = "epilogue", nb::arg("takeout_every_k") = 0, nb::arg("threads") = 0,
      nb::arg("listed") = 10,
      "Checks a GEMM result computed elsewhere (a kernel's D) against the emulated GEMM of the "
      "same inputs through `datapath` (matmul's arguments, the scales and packed FP4 of a "
      "block-scaled datapath included; c may be None), bit for bit. Returns a Comparison: "
      "expected is the emulator's, got is d_recorded.");
}

}  // namespace tcemu::python
