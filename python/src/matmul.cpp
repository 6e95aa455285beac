// matmul(): D = alpha A B + beta C through a datapath, for whole matrices: the emulated GEMM
// (tcemu/emulator/gemm.hpp) on host arrays, without copying them, or the GPU backend's mma_gemm
// (tcemu/backend/tensor_core_steps.hpp) on CUDA arrays or when backend="gpu".
#include <optional>
#include <string>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/mma.hpp>

#include "arrays.hpp"
#include "backends.hpp"
#include "bindings.hpp"
#include "buffers.hpp"

namespace tcemu::python {
namespace {

nb::object emulated(const Datapath& datapath, const GemmOptions& options, const Operand& a,
                    const Operand& b, const std::optional<Operand>& c) {
  const BitMatrix ma = bit_matrix(a, datapath.input);
  const BitMatrix mb = bit_matrix(b, datapath.input);
  std::optional<BitMatrix> mc;
  if (c) mc = bit_matrix(*c, datapath.accumulator);
  const std::int64_t m = ma.view.rows, n = mb.view.cols;
  const NewArray d = new_array({static_cast<std::size_t>(m), static_cast<std::size_t>(n)},
                               dtype_of(datapath.accumulator));
  const MatrixView vd{{static_cast<unsigned char*>(d.data), datapath.accumulator, m, n,
                       std::max<std::int64_t>(n, 1), Layout::row_major}};
  {
    nb::gil_scoped_release release;
    emulated_gemm(datapath, options, ma.view, mb.view,
                  mc ? std::optional<ConstMatrixView>(mc->view) : std::nullopt, vd);
  }
  return d.object;
}

nb::object on_backend(Backend& backend, const Datapath& datapath, const GemmOptions& options,
                      const Operand& a, const Operand& b, const std::optional<Operand>& c,
                      int device) {
  const auto ba = to_buffer(backend, a, datapath.input);
  const auto bb = to_buffer(backend, b, datapath.input);
  std::optional<BufferOperand<FloatFormat>> bc;
  if (c) bc = to_buffer(backend, *c, datapath.accumulator);
  const auto bd = new_buffer(backend, datapath.accumulator, ba.shape.rows, bb.shape.cols);
  {
    nb::gil_scoped_release release;
    backend.mma_gemm(datapath, options, ba.view(), bb.view(),
                     bc ? std::optional<BufferMatrix>(bc->view()) : std::nullopt, bd.view());
    backend.synchronize();
  }
  return from_buffer(backend, bd, device >= 0, device);
}

}  // namespace

CInput c_input_named(const std::string& word) {
  if (word == "epilogue") return CInput::epilogue;
  if (word == "initial_accumulator") return CInput::initial_accumulator;
  throw nb::value_error(
      ("c_input must be 'epilogue' or 'initial_accumulator', got '" + word + "'").c_str());
}

void bind_matmul(nb::module_& m) {
  m.def(
      "matmul",
      [](nb::handle a, nb::handle b, nb::handle c, const Datapath& datapath, float alpha,
         float beta, const std::string& c_input, std::int64_t takeout_every_k, int threads,
         std::optional<std::string> backend, const std::string& engine) {
        validate(datapath);
        const Operand oa = operand(a, "a"), ob = operand(b, "b");
        std::optional<Operand> oc;
        if (!c.is_none()) oc = operand(c, "c");
        const GemmOptions options{.alpha = alpha,
                                  .beta = beta,
                                  .c_input = c_input_named(c_input),
                                  .takeout_every_k = takeout_every_k,
                                  .threads = threads};
        const int device = oc ? cuda_device({&oa, &ob, &*oc}) : cuda_device({&oa, &ob});
        const std::string where = backend.value_or(device >= 0 ? "gpu" : "emulator");
        if (where == "emulator" && device < 0) return emulated(datapath, options, oa, ob, oc);
        if (where != "gpu") {
          throw nb::value_error((device >= 0
                                     ? "CUDA arrays run on backend 'gpu', got '" + where + "'"
                                     : "backend must be 'emulator' or 'gpu', got '" + where + "'")
                                    .c_str());
        }
        const auto gpu = make_backend("gpu", threads, std::max(device, 0), engine);
        return on_backend(*gpu, datapath, options, oa, ob, oc, device);
      },
      nb::arg("a"), nb::arg("b"), nb::arg("c") = nb::none(), nb::kw_only(), nb::arg("datapath"),
      nb::arg("alpha") = 1.0f, nb::arg("beta") = 0.0f, nb::arg("c_input") = "epilogue",
      nb::arg("takeout_every_k") = 0, nb::arg("threads") = 0, nb::arg("backend") = nb::none(),
      nb::arg("engine") = "fastest",
      "D = alpha A B + beta C through `datapath` (emulated_gemm, gemm.hpp): A [m, k] and B [k, n] "
      "of the input format (its float dtype, float32 for tf32, or uint bit patterns), C [m, n] "
      "of the accumulator format or None. c_input: 'epilogue' (cuBLAS: D = RN(alpha acc + beta "
      "C)) or 'initial_accumulator' (C starts the chain; alpha = beta = 1). takeout_every_k: kb "
      "> 0 adds each chunk of kb values of k to an fp32 register (Ootomo and Yokota). Any "
      "strides; returns a new float32/float16 array. backend: 'emulator' (the default for host "
      "arrays) or 'gpu' (the default for CUDA arrays, whose result is a CUDA array; engine "
      "'fastest' (our hardware kernels where they compute the datapath, the emulated engine for "
      "any other), 'mma_sync', 'wgmma', 'cublas' or 'emulated' (any datapath on the CUDA cores, "
      "the emulator's bits)).");
}

}  // namespace tcemu::python
