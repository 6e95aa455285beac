// accurate_gemm(): Dot2 and ExBLAS-style correctly rounded GEMM (tcemu/accurate/handle.hpp) on
// float64 or float32 arrays, on the host backends or the GPU, as `tcemu gemm --scheme dot2|exblas`
// runs them.
#include <string>

#include <nanobind/stl/string.h>

#include <tcemu/accurate/handle.hpp>

#include "arrays.hpp"
#include "backends.hpp"
#include "bindings.hpp"
#include "blas_gemm.hpp"
#include "buffers.hpp"

namespace tcemu::python {
namespace {

InnerProduct method_named(const std::string& word) {
  if (word == "dot2") return InnerProduct::dot2;
  if (word == "exblas") return InnerProduct::exact;
  throw nb::value_error(("method must be 'dot2' or 'exblas', got '" + word + "'").c_str());
}

}  // namespace

void bind_accurate(nb::module_& m) {
  m.def(
      "accurate_gemm",
      [](nb::handle a, nb::handle b, nb::handle c, const std::string& method, double alpha,
         double beta, const std::string& backend, int threads) {
        const InnerProduct how = method_named(method);
        const Operand oa = operand(a, "a"), ob = operand(b, "b");
        std::optional<Operand> oc;
        if (!c.is_none()) oc = operand(c, "c");
        const int device = oc ? cuda_device({&oa, &ob, &*oc}) : cuda_device({&oa, &ob});
        const auto machine =
            make_backend(device >= 0 ? "gpu" : backend, threads, std::max(device, 0), "fastest");
        accurate::Handle handle(*machine, how);
        if (device < 0) {
          BlasGemm g = blas_gemm(oa, ob, oc);
          run_gemm(handle, g, alpha, beta);
          return g.c.object;
        }
        const Real real = oa.real.value_or(Real::fp64);
        const auto ba = to_buffer(*machine, oa, real);
        const auto bb = to_buffer(*machine, ob, real);
        const auto bc = oc ? to_buffer(*machine, *oc, real)
                           : new_buffer(*machine, real, ba.shape.rows, bb.shape.cols);
        {
          nb::gil_scoped_release release;
          machine->inner_products(how, ba.view(), bb.view(), alpha, beta, bc.view());
          machine->synchronize();
        }
        return from_buffer(*machine, bc, true, device);
      },
      nb::arg("a"), nb::arg("b"), nb::arg("c") = nb::none(), nb::kw_only(),
      nb::arg("method") = "exblas", nb::arg("alpha") = 1.0, nb::arg("beta") = 0.0,
      nb::arg("backend") = "cpu64", nb::arg("threads") = 0,
      "C := alpha A B + beta C with every inner product by `method`: 'dot2' (Ogita, Rump and "
      "Oishi: as if in twice the working precision) or 'exblas' (the exact sum rounded once: "
      "correctly rounded for alpha = 1, beta = 0), in the arithmetic of the arrays (float64 or "
      "float32). backend: 'cpu64' or 'emulator' (the host, any thread count, the same bits) or "
      "'gpu'. Returns a new array.");
}

}  // namespace tcemu::python
