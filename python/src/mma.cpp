// mma(): one output element of an MMA instruction, or of a chain of them, per case
// (tcemu/emulator/mma.hpp mma_element).
#include <string>
#include <vector>

#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/parallel_for.hpp>

#include "arrays.hpp"
#include "bindings.hpp"

namespace tcemu::python {

void bind_mma(nb::module_& m) {
  m.def(
      "mma",
      [](const Datapath& datapath, nb::handle a, nb::handle b, nb::handle c, int threads) {
        validate(datapath);
        const BitMatrix ma = bit_matrix(operand(a, "a"), datapath.input);
        const BitMatrix mb = bit_matrix(operand(b, "b"), datapath.input);
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
        const NewArray d = new_array({vc.size()}, dtype_of(datapath.accumulator));
        const MatrixView vd{{static_cast<unsigned char*>(d.data), datapath.accumulator, va.rows, 1,
                             1, Layout::row_major}};
        {
          nb::gil_scoped_release release;
          detail::parallel_for(threads, va.rows, 256, [&](std::int64_t begin, std::int64_t end) {
            std::vector<std::uint32_t> ai(static_cast<std::size_t>(va.cols));
            std::vector<std::uint32_t> bi(ai.size());
            for (std::int64_t i = begin; i < end; ++i) {
              for (std::int64_t k = 0; k < va.cols; ++k) {
                ai[static_cast<std::size_t>(k)] = va.get(i, k);
                bi[static_cast<std::size_t>(k)] = vb.get(i, k);
              }
              vd.set(i, 0, mma_element(datapath, ai, bi, vc[static_cast<std::size_t>(i)]));
            }
          });
        }
        return d.object;
      },
      nb::arg("datapath"), nb::arg("a"), nb::arg("b"), nb::arg("c"), nb::arg("threads") = 0,
      "d = a . b + c for each case through `datapath` (mma_element): a and b [cases, K] of the "
      "input format (its float dtype or uint bit patterns; K > instruction_k chains "
      "instructions), c [cases] of the accumulator format. Returns d [cases] as float32 or "
      "float16 (view it as uint32/uint16 for the bits).");
}

}  // namespace tcemu::python
