// markidis_gemm(): the error-corrected SGEMM schemes (tcemu/markidis: markidis, halfhalf,
// tf32tf32, 3xtf32, bf16x3, bf16x9, ...) by name, their products on any datapath, on the
// emulator or the GPU, as `tcemu gemm --scheme NAME` runs them.
#include <optional>
#include <string>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <tcemu/markidis/gemm.hpp>
#include <tcemu/markidis/presets.hpp>

#include "arrays.hpp"
#include "backends.hpp"
#include "bindings.hpp"
#include "blas_gemm.hpp"
#include "buffers.hpp"

namespace tcemu::python {

void bind_markidis(nb::module_& m) {
  m.def("markidis_schemes", &markidis::scheme_names, "The names markidis_gemm() takes.");
  m.def(
      "markidis_scheme",
      [](const std::string& name) { return markidis::describe(markidis::scheme_by_name(name)); },
      nb::arg("name"), "Every field of the scheme called `name`, in one line.");
  m.def(
      "markidis_datapath",
      [](const std::string& scheme, const std::string& arch, const std::string& instr) {
        return markidis::scheme_datapath(markidis::scheme_by_name(scheme), arch, instr);
      },
      nb::arg("scheme"), nb::arg("arch") = "sm90", nb::arg("instr") = "mma.sync",
      "The datapath of `arch` running the scheme's products (its part format, fp32 accumulator).");
  m.def(
      "markidis_gemm",
      [](nb::handle a, nb::handle b, nb::handle c, const std::string& scheme, float alpha,
         float beta, std::optional<Datapath> datapath, const std::string& arch,
         std::optional<int> takeout, const std::string& backend, int threads,
         const std::string& engine) {
        markidis::Scheme chosen = markidis::scheme_by_name(scheme);
        if (takeout) chosen = markidis::with_takeout_interval(chosen, *takeout);
        const Datapath dp = datapath.value_or(markidis::scheme_datapath(chosen, arch));
        const Operand oa = operand(a, "a"), ob = operand(b, "b");
        std::optional<Operand> oc;
        if (!c.is_none()) oc = operand(c, "c");
        const int device = oc ? cuda_device({&oa, &ob, &*oc}) : cuda_device({&oa, &ob});
        if (backend != "emulator" && backend != "gpu") {
          throw nb::value_error(
              ("backend must be 'emulator' or 'gpu', got '" + backend + "'").c_str());
        }
        const auto machine =
            make_backend(device >= 0 ? "gpu" : backend, threads, std::max(device, 0), engine);
        if (device < 0) {
          require_real(oa, Real::fp32);
          BlasGemm g = blas_gemm(oa, ob, oc);
          {
            nb::gil_scoped_release release;
            markidis::sgemm(*machine, chosen, dp, g.a.trans, g.b.trans, g.m, g.n, g.k, alpha,
                            static_cast<const float*>(g.a.data), g.a.ld,
                            static_cast<const float*>(g.b.data), g.b.ld, beta,
                            static_cast<float*>(g.c.data), std::max<std::int64_t>(g.m, 1), threads);
          }
          return g.c.object;
        }
        const auto ba = to_buffer(*machine, oa, formats::fp32);
        const auto bb = to_buffer(*machine, ob, formats::fp32);
        std::optional<BufferOperand<FloatFormat>> bc;
        if (oc) bc = to_buffer(*machine, *oc, formats::fp32);
        const auto bd = new_buffer(*machine, formats::fp32, ba.shape.rows, bb.shape.cols);
        {
          nb::gil_scoped_release release;
          markidis::gemm(*machine, chosen, dp, ba.view(), bb.view(),
                         bc ? std::optional<BufferMatrix>(bc->view()) : std::nullopt, bd.view(),
                         {.alpha = alpha, .beta = beta, .threads = threads});
          machine->synchronize();
        }
        return from_buffer(*machine, bd, true, device);
      },
      nb::arg("a"), nb::arg("b"), nb::arg("c") = nb::none(), nb::kw_only(),
      nb::arg("scheme") = "halfhalf", nb::arg("alpha") = 1.0f, nb::arg("beta") = 0.0f,
      nb::arg("datapath") = nb::none(), nb::arg("arch") = "sm90", nb::arg("takeout") = nb::none(),
      nb::arg("backend") = "emulator", nb::arg("threads") = 0, nb::arg("engine") = "fastest",
      "D = alpha A B + beta C by an error-corrected SGEMM scheme (markidis_schemes()) on float32 "
      "arrays: its products through `datapath` (default: markidis_datapath(scheme, arch)); "
      "`takeout` N: the accumulators that leave the Tensor Core do so every N instructions. "
      "backend: 'emulator' or 'gpu' (CUDA arrays run there). Returns a new float32 array.");
}

}  // namespace tcemu::python
