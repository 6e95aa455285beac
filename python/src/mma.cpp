// mma(): one output element of an MMA instruction, or of a chain of them, per case
// (tcemu/emulator/mma.hpp mma_element), with each case's scales on a block-scaled datapath.
#include <optional>
#include <string>
#include <vector>

#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/parallel_for.hpp>

#include "arrays.hpp"
#include "bindings.hpp"
#include "scales.hpp"

namespace tcemu::python {

void bind_mma(nb::module_& m) {
  m.def(
      "mma",
      [](const Datapath& datapath, nb::handle a, nb::handle b, nb::handle c, int threads,
         nb::handle scale_a, nb::handle scale_b, const PackedArg& packed) {
        validate(datapath);
        const std::optional<NibbleOrder> packing = fp4_packing("mma", datapath, packed);
        const bool scaled =
            takes_scales("mma", datapath, scale_a, scale_b, "each cases x ceil(K / scale_block)");
        const BitMatrix ma = input_matrix(operand(a, "a"), datapath.input, packing, 1);
        const BitMatrix mb = input_matrix(operand(b, "b"), datapath.b_format(), packing, 1);
        const std::vector<std::uint32_t> vc = bit_vector(operand(c, "c"), datapath.accumulator);
        const ConstMatrixView& va = ma.view;
        const ConstMatrixView& vb = mb.view;
        if (va.rows != vb.rows || va.cols != vb.cols) {
          throw nb::value_error(("a and b must have the same shape [cases, K], got [" +
                                 std::to_string(va.rows) + ", " + std::to_string(va.cols) +
                                 "] and [" + std::to_string(vb.rows) + ", " +
                                 std::to_string(vb.cols) + "]")
                                    .c_str());
        }
        if (static_cast<std::int64_t>(vc.size()) != va.rows) {
          throw nb::value_error(("c must have one element per case (" + std::to_string(va.rows) +
                                 "), got " + std::to_string(vc.size()))
                                    .c_str());
        }
        std::optional<ScaleMatrices> scales;
        if (scaled) {
          const auto s =
              static_cast<std::int64_t>(scale_count(datapath, static_cast<std::size_t>(va.cols)));
          const BlockScaling& f = datapath.block_scaling;
          scales = ScaleMatrices{scale_matrix(scale_a, "scale_a", f.scale_a, va.rows, s,
                                              "cases x ceil(K / scale_block)"),
                                 scale_matrix(scale_b, "scale_b", f.scale_b, va.rows, s,
                                              "cases x ceil(K / scale_block)")};
        }
        const NewArray d = new_array({vc.size()}, dtype_of(datapath.accumulator));
        const MatrixView vd{{static_cast<unsigned char*>(d.data), datapath.accumulator, va.rows, 1,
                             1, Layout::row_major}};
        {
          nb::gil_scoped_release release;
          detail::parallel_for(threads, va.rows, 256, [&](std::int64_t begin, std::int64_t end) {
            // Row i of a matrix of bit patterns, copied into `out`.
            const auto row = [](const ConstMatrixView& v, std::int64_t i,
                                std::vector<std::uint32_t>& out) {
              out.resize(static_cast<std::size_t>(v.cols));
              for (std::int64_t k = 0; k < v.cols; ++k) {
                out[static_cast<std::size_t>(k)] = v.get(i, k);
              }
            };
            std::vector<std::uint32_t> ai, bi, sa, sb;
            for (std::int64_t i = begin; i < end; ++i) {
              row(va, i, ai);
              row(vb, i, bi);
              const std::uint32_t ci = vc[static_cast<std::size_t>(i)];
              if (scales) {
                row(scales->a.view, i, sa);
                row(scales->b.view, i, sb);
                vd.set(i, 0, mma_element(datapath, ai, bi, ci, sa, sb));
              } else {
                vd.set(i, 0, mma_element(datapath, ai, bi, ci));
              }
            }
          });
        }
        return d.object;
      },
      nb::arg("datapath"), nb::arg("a"), nb::arg("b"), nb::arg("c"), nb::arg("threads") = 0,
      nb::kw_only(), nb::arg("scale_a") = nb::none(), nb::arg("scale_b") = nb::none(),
      nb::arg("packed") = false,
      "d = a . b + c for each case through `datapath` (mma_element): a [cases, K] of the input "
      "format and b [cases, K] of datapath.b_format (their float dtypes, ml_dtypes' "
      "float4_e2m1fn/float6_e2m3fn/float6_e3m2fn, or uint bit patterns; K > instruction_k chains "
      "instructions), c [cases] of the accumulator format. A block-scaled datapath needs scale_a "
      "and scale_b [cases, ceil(K / scale_block)], the scales of each case's row of A and column "
      "of B (float8_e8m0fnu, float8_e4m3fn for ue4m3, or uint8 codes). packed=True, "
      "'high_first' or 'low_first': each e2m1 operand is uint8 [cases, K/2], two codes a byte "
      "(matmul's rule). "
      "Returns d [cases] as float32 or float16 (view it as uint32/uint16 for the bits).");
}

}  // namespace tcemu::python
